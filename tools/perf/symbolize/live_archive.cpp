// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/live_archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <system_error>

#include "debug_locator.h"

namespace pbid {
namespace {

// Each queued copy holds a descriptor: at most this many wait. Past it, the file is left for a
// later mapping or for Finish(); the recorder's thread never copies (a large file would hold
// off the drain and lose records).
constexpr size_t kMaxQueued = 128;
// Opens tried per file before it is left to Finish(): a process gone, a queue full.
constexpr uint8_t kMaxTries = 8;

}  // namespace

Result<std::unique_ptr<LiveArchive>> LiveArchive::Create(const std::string& dir) {
  if (dir.empty())
    return Error::Of(ErrorKind::kInvalidArgument, "--archive", "an empty directory name");
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Error::Sys(dir, errno, "cannot create directory");
  struct stat st;
  if (stat(dir.c_str(), &st) != 0)
    return Error::Sys(dir, errno, "cannot stat the archive directory");
  if (!S_ISDIR(st.st_mode))
    return Error::Sys(dir, ENOTDIR, "the archive is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return Error::Sys(dir, errno, "cannot write to the archive directory");
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::unique_ptr<LiveArchive> a(new LiveArchive(dir, now.tv_sec * 1000000000LL + now.tv_nsec));
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
  Offer(id.ToHex(), Job{id, FileIds(), -1, StripDeleted(path)}, pid, start, end, ident);
}

void LiveArchive::AddByFileIds(const FileIds& ids, pid_t pid, uint64_t start, uint64_t end,
                               const std::string& path, const FileIdentity& ident) {
  if (!ids.file_hash)
    return;
  Offer(std::string(kFileHashDir) + ":" + ids.file_hash->ToHex(),
        Job{BuildId(), ids, -1, StripDeleted(path)}, pid, start, end, ident);
}

void LiveArchive::Offer(const std::string& key, Job job, pid_t pid, uint64_t start, uint64_t end,
                        const FileIdentity& ident) {
  auto [it, first] = wants_.try_emplace(key);
  Want& w = it->second;
  if (first) {
    if (!job.id.empty())
      input_.modules.emplace_back(job.id, job.name);
    else
      input_.by_file_ids.emplace_back(job.ids, job.name);
  }
  // Queued once; a file that could not be opened is tried again at its next mappings (a first
  // process gone, a second one still running), a few times.
  if (w.queued || w.tries >= kMaxTries)
    return;
  std::string why;
  if (Open(&job, pid, start, end, ident, &why)) {
    w.queued = true;
    return;
  }
  w.tries++;
  if (first_open_failure_.empty())
    first_open_failure_ = why;
}

bool LiveArchive::Open(Job* job, pid_t pid, uint64_t start, uint64_t end, const FileIdentity& ident,
                       std::string* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      *why = job->name + ": " + std::to_string(kMaxQueued) + " copies waiting already";
      return false;
    }
  }
  // The vDSO has no file: the recorder's own is the image the recording names (record reads
  // the [vdso] build ID from it), and the copy is stored only if it has that build ID.
  Result<int> fd = Error(job->name, "no running vDSO of this ABI");
  if (job->name == "[vdso]") {
    if (int v = CopyRunningVdso(); v >= 0)
      fd = v;
  } else {
    fd = OpenMappedFile(pid, start, end, job->name, ident);
  }
  if (!fd.ok()) {
    *why = fd.error().ToString();
    return false;
  }
  job->fd = *fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(*job));
  }
  cv_.notify_one();
  return true;
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
  auto n = !job.id.empty() ? StoreExecutable(dir_, job.id, job.fd, job.name)
                           : StoreByFileIds(dir_, job.ids, job.fd, job.name);
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
  stats_.ids = wants_.size();
  for (const auto& [key, w] : wants_) {
    if (!w.queued)
      stats_.failed++;
  }
  if (stats_.first_failure.empty())
    stats_.first_failure = first_open_failure_;
  input_.used_since_ns = started_ns_;
  options.debug_dirs.push_back(dir_);
  return ArchiveModules(options, dir_, input_, max_bytes);
}

}  // namespace pbid
