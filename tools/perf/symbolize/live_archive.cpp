// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/live_archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "debug_locator.h"

namespace pbid {
namespace {

// Each queued copy holds a descriptor. Past this many waiting, Add() copies the file itself: a
// storm of new build IDs slows the recorder down rather than run it out of descriptors.
constexpr size_t kMaxQueued = 256;

}  // namespace

Result<std::unique_ptr<LiveArchive>> LiveArchive::Create(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Error::Sys(dir, errno, "cannot create directory");
  if (access(dir.c_str(), W_OK) != 0)
    return Error::Sys(dir, errno, "cannot write to the archive directory");
  std::unique_ptr<LiveArchive> a(new LiveArchive(dir));
  try {
    a->thread_ = std::thread(&LiveArchive::Run, a.get());
  } catch (const std::system_error& e) {
    return Error::Sys(dir, e.code().value(), "cannot start the archive's copying thread");
  }
  return a;
}

LiveArchive::~LiveArchive() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  for (const Job& j : queue_)
    close(j.fd);
}

void LiveArchive::Add(const BuildId& id, pid_t pid, uint64_t start, uint64_t end,
                      const std::string& path, const FileIdentity& ident) {
  if (!seen_.insert(id).second)
    return;
  std::string name = path;
  const std::string deleted = " (deleted)";
  if (name.size() > deleted.size() &&
      name.compare(name.size() - deleted.size(), deleted.size(), deleted) == 0) {
    name.resize(name.size() - deleted.size());
  }
  modules_.emplace_back(id, name);
  // The vDSO has no file: the recorder's own is the kernel's image for this ABI, and the copy
  // is stored only if it has the recorded build ID.
  Result<int> fd = Error(name, "no running vDSO of this ABI");
  if (name == "[vdso]") {
    if (int v = CopyRunningVdso(); v >= 0)
      fd = v;
  } else {
    fd = OpenMappedFile(pid, start, end, name, ident);
  }
  std::unique_lock<std::mutex> lock(mu_);
  stats_.ids++;
  if (!fd.ok()) {
    // The process and its file are gone already: Finish() asks the lookup chain.
    stats_.failed++;
    if (stats_.first_failure.empty())
      stats_.first_failure = fd.error().ToString();
    return;
  }
  Job job{id, *fd, name};
  if (queue_.size() >= kMaxQueued) {
    lock.unlock();
    Copy(job);
    return;
  }
  queue_.push_back(std::move(job));
  lock.unlock();
  cv_.notify_one();
}

void LiveArchive::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return done_ || !queue_.empty(); });
    if (queue_.empty())
      return;  // done_, and nothing left to copy
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Copy(job);
    lock.lock();
  }
}

// Copies one file and closes its descriptor; the counts under mu_.
void LiveArchive::Copy(const Job& job) {
  auto n = StoreExecutable(dir_, job.id, job.fd, job.name);
  close(job.fd);
  std::lock_guard<std::mutex> lock(mu_);
  if (!n.ok()) {
    stats_.failed++;
    if (stats_.first_failure.empty())
      stats_.first_failure = n.error().ToString();
  } else if (*n == 0) {
    stats_.present++;
  } else {
    stats_.files_copied++;
    stats_.bytes_copied += *n;
  }
}

Result<ArchiveSummary> LiveArchive::Finish(SymbolizerOptions options, uint64_t max_bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  options.debug_dirs.push_back(dir_);
  return ArchiveModules(options, dir_, modules_, max_bytes);
}

}  // namespace pbid
