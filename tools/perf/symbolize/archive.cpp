// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "debug_locator.h"
#include "loaded_library.h"
#include "pbid/elf_build_id.h"

namespace pbid {
namespace {

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return Error::Sys(path, errno, "cannot create directory");
  return Status();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Reads the open file fd from its start in chunks, handing each to sink; stops at the first
// error. pread: the fd's offset is not used, so a descriptor shared with a reader stays as it
// was. `name` is for errors.
Status ReadChunksFd(int fd, const std::string& name,
                    const std::function<Status(const char*, size_t)>& sink) {
  char buf[1 << 16];
  for (off_t off = 0;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error::Sys(name, errno, "cannot read");
    if (n == 0)
      return Status();
    off += n;
    if (Status st = sink(buf, static_cast<size_t>(n)); !st.ok())
      return st;
  }
}

// Reads the file at path in chunks (ReadChunksFd).
Status ReadChunks(const std::string& path, const std::function<Status(const char*, size_t)>& sink) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error::Sys(path, errno, "cannot open");
  Status st = ReadChunksFd(fd, path, sink);
  close(fd);
  return st;
}

// Copies the open file src (named src_name) to dst through a temporary name in dst's
// directory, then renames it: a reader (debuginfod's scan, another run filling the same
// archive) sees the whole file or none. With `same`, the copy must pass it (it returns why
// not, or ""), or it is dropped: a file rewritten in place since it was found is never stored
// under its old identity.
using CopyCheck = std::function<std::string(const std::string& copy)>;
Result<uint64_t> CopyFd(int src, const std::string& src_name, const std::string& dst,
                        const CopyCheck& same = nullptr) {
  // A name of its own (mkstemp): writers in other PID namespaces share the archive too.
  std::string tmp = dst + ".tmp.XXXXXX";
  int out = mkostemp(tmp.data(), O_CLOEXEC);
  if (out < 0)
    return Error::Sys(tmp, errno, "cannot create");
  fchmod(out, 0644);
  struct stat before;
  if (fstat(src, &before) != 0) {
    close(out);
    unlink(tmp.c_str());
    return Error::Sys(src_name, errno, "cannot stat");
  }
  uint64_t total = 0;
  Status st = ReadChunksFd(src, src_name, [&](const char* buf, size_t n) -> Status {
    for (size_t done = 0; done < n;) {
      ssize_t w = write(out, buf + done, n - done);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return Error::Sys(tmp, errno, "cannot write");
      done += static_cast<size_t>(w);
    }
    total += n;
    return Status();
  });
  if (close(out) != 0 && st.ok())
    st = Error::Sys(tmp, errno, "cannot write");
  // A file written to while it was copied gives a copy of neither version (its note may
  // still be the old one): the same size, modification and change times before and after,
  // and every byte of that size read. The change time may move with the links alone: a
  // short-lived process deleting its file, or renaming another over it, while the file is
  // copied from the descriptor held, changes no byte of it.
  struct stat after;
  if (st.ok() && (fstat(src, &after) != 0 || after.st_size != before.st_size ||
                  after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
                  after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
                  ((after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
                    after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) &&
                   after.st_nlink == before.st_nlink) ||
                  total != static_cast<uint64_t>(before.st_size))) {
    st = Error(src_name, "changed while it was copied");
  }
  if (st.ok() && same) {
    if (std::string why = same(tmp); !why.empty())
      st = Error(src_name, why);
  }
  if (st.ok() && rename(tmp.c_str(), dst.c_str()) != 0)
    st = Error::Sys(dst, errno, "cannot rename into place");
  if (!st.ok()) {
    unlink(tmp.c_str());
    return st.error();
  }
  return total;
}

Result<uint64_t> CopyFile(const std::string& src, const std::string& dst) {
  int fd = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error::Sys(src, errno, "cannot open");
  auto n = CopyFd(fd, src, dst);
  close(fd);
  return n;
}

// Why nothing with this ID was found, from what the lookup chain saw.
// `what` names what the recording knows the file by: "build ID" or "identities".
std::string MissingReason(const LocatedModule& m, const std::string& recorded_path,
                          const std::string& what = "build ID") {
  if (m.debug && !m.exec)
    return "debug file only, executable not found";
  if (m.path_mismatch)
    return "the file at " + recorded_path + " has another " + what + ", and no other source has it";
  if (m.path_missing)
    return recorded_path + " is gone or not ELF, and no other source has this " + what;
  return "no source has this " + what;
}

// One build ID in the archive: its files, their bytes and its last use (the newest mtime).
struct Stored {
  std::vector<std::string> files;
  uint64_t bytes = 0;
  int64_t used_ns = 0;
};

// Adds the regular files of dir/sub (one of the xx directories) to ids, keyed prefix + "xx" +
// "yyyy" (the .debug suffix dropped, so that an executable and its debug file are one entry).
void ScanSubdir(const std::string& dir, const std::string& sub, const std::string& prefix,
                std::map<std::string, Stored>* ids) {
  DIR* inner = opendir((dir + "/" + sub).c_str());
  if (inner == nullptr)
    return;
  while (struct dirent* f = readdir(inner)) {
    std::string name = f->d_name;
    if (name[0] == '.' || name.find(".tmp.") != std::string::npos)
      continue;
    std::string path = dir + "/" + sub + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    std::string rest = name;
    if (rest.size() > 6 && rest.compare(rest.size() - 6, 6, ".debug") == 0)
      rest.resize(rest.size() - 6);
    Stored& s = (*ids)[prefix + sub.substr(sub.size() - 2) + rest];
    s.files.push_back(path);
    s.bytes += static_cast<uint64_t>(st.st_size);
    s.used_ns = std::max<int64_t>(s.used_ns, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
  }
  closedir(inner);
}

// Every file of the archive, grouped by what it is stored under: xx/yyyy[.debug] by build ID
// ("xx" + "yyyy"), file-hash/xx/yyyy by file hash (ArchiveEntry::Key()).
Result<std::map<std::string, Stored>> ScanArchive(const std::string& dir) {
  std::map<std::string, Stored> ids;
  DIR* top = opendir(dir.c_str());
  if (top == nullptr)
    return Error::Sys(dir, errno, "cannot read directory");
  while (struct dirent* d = readdir(top)) {
    std::string sub = d->d_name;
    if (sub.size() == 2 && sub[0] != '.')
      ScanSubdir(dir, sub, "", &ids);
  }
  closedir(top);
  const std::string hashes = dir + "/" + kFileHashDir;
  if (DIR* h = opendir(hashes.c_str())) {
    while (struct dirent* d = readdir(h)) {
      std::string sub = d->d_name;
      if (sub.size() == 2 && sub[0] != '.')
        ScanSubdir(dir, std::string(kFileHashDir) + "/" + sub, std::string(kFileHashDir) + ":",
                   &ids);
    }
    closedir(h);
  }
  return ids;
}

// Evicts the least recently used build IDs outside `keep` until the archive holds max_bytes;
// none used at or after used_since_ns.
Status Evict(const std::string& dir, const std::set<std::string>& keep, int64_t used_since_ns,
             uint64_t max_bytes, ArchiveSummary* summary) {
  auto ids = ScanArchive(dir);
  if (!ids.ok())
    return ids.error();
  uint64_t total = 0;
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [hex, s] : *ids) {
    total += s.bytes;
    if (keep.count(hex) == 0 && s.used_ns < used_since_ns)
      order.emplace_back(s.used_ns, hex);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [used, hex] : order) {
    if (total <= max_bytes)
      break;
    const Stored& s = (*ids)[hex];
    for (const std::string& f : s.files) {
      if (unlink(f.c_str()) != 0 && errno != ENOENT)
        return Error::Sys(f, errno, "cannot evict");
    }
    total -= s.bytes;
    summary->ids_evicted++;
    summary->bytes_evicted += s.bytes;
  }
  summary->archive_bytes = total;
  summary->within_cap = total <= max_bytes;
  return Status();
}

}  // namespace

Result<uint64_t> StoreExecutable(const std::string& dir, const BuildId& id, int fd,
                                 const std::string& name) {
  const std::string dst = BuildIdDirPath(dir, id, "");
  if (Exists(dst)) {
    // Used now: the last to be evicted.
    utimensat(AT_FDCWD, dst.c_str(), nullptr, 0);
    return uint64_t{0};
  }
  PBID_RETURN_IF_ERROR(MakeDir(dir));
  PBID_RETURN_IF_ERROR(MakeDir(dst.substr(0, dst.rfind('/'))));
  return CopyFd(fd, name, dst, [&id](const std::string& copy) -> std::string {
    auto got = ReadElfBuildId(copy);
    if (!got.ok())
      return "is no longer a readable ELF file";
    if (!*got || !(**got == id))
      return "has another build ID than the one recorded (rewritten in place since it was "
             "mapped?)";
    return "";
  });
}

Result<uint64_t> StoreByFileIds(const std::string& dir, const FileIds& ids, int fd,
                                const std::string& name) {
  if (!ids.file_hash)
    return Error::Of(ErrorKind::kInvalidArgument, name, "no file hash to store it under");
  const std::string dst = FileHashDirPath(dir, *ids.file_hash);
  if (Exists(dst)) {
    utimensat(AT_FDCWD, dst.c_str(), nullptr, 0);
    return uint64_t{0};
  }
  PBID_RETURN_IF_ERROR(MakeDir(dir));
  PBID_RETURN_IF_ERROR(MakeDir(dir + "/" + kFileHashDir));
  PBID_RETURN_IF_ERROR(MakeDir(dst.substr(0, dst.rfind('/'))));
  return CopyFd(fd, name, dst, [&ids](const std::string& copy) -> std::string {
    auto cfd = OpenRegularFile(copy);
    if (!cfd.ok())
      return "cannot read its copy";
    bool same = HasFileIds(*cfd, copy, ids);
    close(*cfd);
    return same ? "" : "has other identities than those recorded (rewritten since it was mapped?)";
  });
}

std::string ArchiveEntry::Key() const {
  if (!id.empty())
    return id.ToHex();
  return std::string(kFileHashDir) + ":" + (file_ids.file_hash ? file_ids.file_hash->ToHex() : "");
}

Result<ArchiveSummary> ArchiveModules(const SymbolizerOptions& options, const std::string& dir,
                                      const ArchiveInput& input, uint64_t max_bytes) {
  const auto& modules = input.modules;
  int64_t used_since = input.used_since_ns;
  if (used_since == 0) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    used_since = now.tv_sec * 1000000000LL + now.tv_nsec;
  }
  if (Status st = MakeDir(dir); !st.ok())
    return st.error();
  auto locator = DebugLocator::Create(options);
  if (!locator.ok())
    return locator.error();
  (*locator)->Prefetch(modules);

  ArchiveSummary summary;
  for (const auto& [id, path] : modules) {
    ArchiveEntry e;
    e.id = id;
    e.recorded_path = path;
    LocatedModule m = (*locator)->Locate(id, path);
    const std::string exec_dst = BuildIdDirPath(dir, id, "");
    const std::string debug_dst = BuildIdDirPath(dir, id, ".debug");
    if (m.exec || m.debug) {
      std::string sub = exec_dst.substr(0, exec_dst.rfind('/'));
      if (Status st = MakeDir(sub); !st.ok())
        return st.error();
    }
    bool copied = false;
    // The debug file is stored apart only when it is not the executable itself.
    struct Want {
      const std::optional<LocatedFile>* file;
      const std::string* dst;
      bool* have;
    };
    std::optional<LocatedFile> separate_debug;
    if (m.debug && (!m.exec || m.debug->path != m.exec->path))
      separate_debug = m.debug;
    for (const Want& w :
         {Want{&m.exec, &exec_dst, &e.exec}, Want{&separate_debug, &debug_dst, &e.debug}}) {
      if (!*w.file)
        continue;
      if (Exists(*w.dst)) {
        // Used now: the last to be evicted.
        utimensat(AT_FDCWD, w.dst->c_str(), nullptr, 0);
        *w.have = true;
        continue;
      }
      auto n = CopyFile((*w.file)->path, *w.dst);
      if (!n.ok())
        return n.error();
      *w.have = true;
      copied = true;
      e.bytes_copied += *n;
      summary.files_copied++;
      summary.bytes_copied += *n;
    }
    if (!e.exec) {
      e.outcome = ArchiveEntry::Outcome::kMissing;
      e.reason = MissingReason(m, path);
    } else {
      e.outcome = copied ? ArchiveEntry::Outcome::kStored : ArchiveEntry::Outcome::kPresent;
    }
    summary.entries.push_back(std::move(e));
  }
  for (const auto& [ids, path] : input.by_file_ids) {
    ArchiveEntry e;
    e.file_ids = ids;
    e.recorded_path = path;
    LocatedModule m = (*locator)->LocateByFileIds(ids, path);
    if (!ids.file_hash) {
      e.reason = "no file hash recorded, nothing to store it under";
    } else if (!m.exec) {
      e.reason = MissingReason(m, path, "identities");
    } else {
      const std::string dst = FileHashDirPath(dir, *ids.file_hash);
      e.exec = true;
      if (Exists(dst)) {
        utimensat(AT_FDCWD, dst.c_str(), nullptr, 0);
        e.outcome = ArchiveEntry::Outcome::kPresent;
      } else {
        PBID_RETURN_IF_ERROR(MakeDir(dir + "/" + kFileHashDir));
        PBID_RETURN_IF_ERROR(MakeDir(dst.substr(0, dst.rfind('/'))));
        auto n = CopyFile(m.exec->path, dst);
        if (!n.ok())
          return n.error();
        e.outcome = ArchiveEntry::Outcome::kStored;
        e.bytes_copied = *n;
        summary.files_copied++;
        summary.bytes_copied += *n;
      }
    }
    summary.entries.push_back(std::move(e));
  }
  if (max_bytes > 0) {
    std::set<std::string> keep;
    for (const ArchiveEntry& e : summary.entries)
      keep.insert(e.Key());  // ScanArchive's keys
    if (Status st = Evict(dir, keep, used_since, max_bytes, &summary); !st.ok())
      return st.error();
  }
  return summary;
}

namespace {

// libarchive and what it links (libxml2, ICU, lz4, acl) cost every run of every command about
// 4 ms and 1.5 MB at start, and only a tarball needs them: it is loaded here (LoadedLibrary).
// libarchive 3's soname is libarchive.so.13.
static_assert(ARCHIVE_VERSION_NUMBER / 1000000 == 3, "libarchive 3 is libarchive.so.13");
constexpr const char kLibarchiveSoname[] = "libarchive.so.13";

struct Libarchive {
  decltype(&archive_error_string) error_string = nullptr;
  decltype(&archive_entry_new) entry_new = nullptr;
  decltype(&archive_entry_free) entry_free = nullptr;
  decltype(&archive_entry_set_pathname) entry_set_pathname = nullptr;
  decltype(&archive_entry_set_size) entry_set_size = nullptr;
  decltype(&archive_entry_set_filetype) entry_set_filetype = nullptr;
  decltype(&archive_entry_set_perm) entry_set_perm = nullptr;
  decltype(&archive_entry_set_mtime) entry_set_mtime = nullptr;
  decltype(&archive_write_new) write_new = nullptr;
  decltype(&archive_write_free) write_free = nullptr;
  decltype(&archive_write_set_format_pax_restricted) write_set_format_pax_restricted = nullptr;
  decltype(&archive_write_add_filter_zstd) write_add_filter_zstd = nullptr;
  decltype(&archive_write_open_filename) write_open_filename = nullptr;
  decltype(&archive_write_header) write_header = nullptr;
  decltype(&archive_write_data) write_data = nullptr;
  decltype(&archive_write_close) write_close = nullptr;
};

Result<const Libarchive*> LoadLibarchive() {
  // Once per process, failure included.
  static const Result<const Libarchive*> loaded = []() -> Result<const Libarchive*> {
    auto so = LoadedLibrary::Open(kLibarchiveSoname, "libarchive",
                                  "install libarchive13, libarchive13t64 on Debian 13, to write "
                                  "a tarball, or archive to a directory");
    if (!so.ok())
      return so.error();
    static Libarchive lib;
    so->Bind(&lib.error_string, "archive_error_string");
    so->Bind(&lib.entry_new, "archive_entry_new");
    so->Bind(&lib.entry_free, "archive_entry_free");
    so->Bind(&lib.entry_set_pathname, "archive_entry_set_pathname");
    so->Bind(&lib.entry_set_size, "archive_entry_set_size");
    so->Bind(&lib.entry_set_filetype, "archive_entry_set_filetype");
    so->Bind(&lib.entry_set_perm, "archive_entry_set_perm");
    so->Bind(&lib.entry_set_mtime, "archive_entry_set_mtime");
    so->Bind(&lib.write_new, "archive_write_new");
    so->Bind(&lib.write_free, "archive_write_free");
    so->Bind(&lib.write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
    so->Bind(&lib.write_add_filter_zstd, "archive_write_add_filter_zstd");
    so->Bind(&lib.write_open_filename, "archive_write_open_filename");
    so->Bind(&lib.write_header, "archive_write_header");
    so->Bind(&lib.write_data, "archive_write_data");
    so->Bind(&lib.write_close, "archive_write_close");
    if (Status st = so->Done(); !st.ok())
      return st.error();
    return &lib;
  }();
  return loaded;
}

// libarchive's error as ours, for the tarball being written.
Error TarError(const Libarchive& lib, struct archive* a, const std::string& path) {
  const char* msg = lib.error_string(a);
  return Error::Of(ErrorKind::kIo, path, msg != nullptr ? msg : "cannot write tarball");
}

Status AddFile(const Libarchive& lib, struct archive* a, const std::string& dir,
               const std::string& rel, const std::string& tar_path) {
  std::string path = dir + "/" + rel;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Error::Sys(path, errno, "cannot stat");
  std::unique_ptr<struct archive_entry, decltype(lib.entry_free)> entry(lib.entry_new(),
                                                                        lib.entry_free);
  if (!entry)
    return Error::Of(ErrorKind::kIo, tar_path, "out of memory");
  lib.entry_set_pathname(entry.get(), rel.c_str());
  lib.entry_set_size(entry.get(), st.st_size);
  lib.entry_set_filetype(entry.get(), AE_IFREG);
  lib.entry_set_perm(entry.get(), 0644);
  lib.entry_set_mtime(entry.get(), st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  if (lib.write_header(a, entry.get()) != ARCHIVE_OK)
    return TarError(lib, a, tar_path);
  return ReadChunks(path, [&](const char* buf, size_t n) -> Status {
    if (lib.write_data(a, buf, n) != static_cast<la_ssize_t>(n))
      return TarError(lib, a, tar_path);
    return Status();
  });
}

}  // namespace

Status WriteTarball(const std::string& dir, const std::string& tar_path) {
  auto ids = ScanArchive(dir);
  if (!ids.ok())
    return ids.error();
  auto loaded = LoadLibarchive();
  if (!loaded.ok())
    return loaded.error();
  const Libarchive& lib = **loaded;
  const bool zst = tar_path.size() > 4 && tar_path.compare(tar_path.size() - 4, 4, ".zst") == 0;
  std::unique_ptr<struct archive, decltype(lib.write_free)> a(lib.write_new(), lib.write_free);
  if (!a)
    return Error::Of(ErrorKind::kIo, tar_path, "out of memory");
  lib.write_set_format_pax_restricted(a.get());
  if (zst && lib.write_add_filter_zstd(a.get()) != ARCHIVE_OK)
    return TarError(lib, a.get(), tar_path);
  std::string tmp = tar_path + ".tmp." + std::to_string(getpid());
  if (lib.write_open_filename(a.get(), tmp.c_str()) != ARCHIVE_OK)
    return TarError(lib, a.get(), tar_path);
  Status st;
  for (const auto& [hex, stored] : *ids) {
    for (const std::string& f : stored.files) {
      st = AddFile(lib, a.get(), dir, f.substr(dir.size() + 1), tar_path);
      if (!st.ok())
        break;
    }
    if (!st.ok())
      break;
  }
  if (st.ok() && lib.write_close(a.get()) != ARCHIVE_OK)
    st = TarError(lib, a.get(), tar_path);
  if (st.ok() && rename(tmp.c_str(), tar_path.c_str()) != 0)
    st = Error::Sys(tar_path, errno, "cannot rename into place");
  if (!st.ok())
    unlink(tmp.c_str());
  return st;
}

Result<ArchiveSummary> ArchiveModulesToTarball(const SymbolizerOptions& options,
                                               const std::string& tar_path,
                                               const ArchiveInput& input) {
  // Before any file is copied: without the library there is nothing to write them into.
  if (auto lib = LoadLibarchive(); !lib.ok())
    return lib.error();
  const char* tmpdir = getenv("TMPDIR");
  std::string stage =
      std::string(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp") + "/perf-buildid-archive.XXXXXX";
  if (mkdtemp(stage.data()) == nullptr)
    return Error::Sys(stage, errno, "cannot create staging directory");
  Result<ArchiveSummary> summary = ArchiveModules(options, stage, input);
  if (summary.ok()) {
    if (Status st = WriteTarball(stage, tar_path); !st.ok())
      summary = st.error();
  }
  // The staging copies go whatever happened: only the tarball is the result.
  if (auto ids = ScanArchive(stage); ids.ok()) {
    std::set<std::string> subdirs;
    for (const auto& entry : *ids) {
      for (const std::string& f : entry.second.files) {
        unlink(f.c_str());
        subdirs.insert(f.substr(0, f.rfind('/')));
      }
    }
    for (const std::string& d : subdirs)
      rmdir(d.c_str());
  }
  rmdir((stage + "/" + kFileHashDir).c_str());
  rmdir(stage.c_str());
  return summary;
}

}  // namespace pbid
