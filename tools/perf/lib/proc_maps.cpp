// SPDX-License-Identifier: GPL-2.0
#include "pbid/proc_maps.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

namespace pbid {

Result<ProcMapping> ParseProcMapsLine(const std::string& line) {
  ProcMapping m;
  char perms[8] = {};
  unsigned maj = 0, min = 0;
  int name_pos = -1;
  int n = sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
                 &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, &name_pos);
  if (n < 7)
    return Error("maps", "cannot parse line '" + line + "'");
  m.maj = maj;
  m.min = min;
  if (perms[0] == 'r')
    m.prot |= PROT_READ;
  if (perms[1] == 'w')
    m.prot |= PROT_WRITE;
  if (perms[2] == 'x')
    m.prot |= PROT_EXEC;
  m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
  if (name_pos > 0 && static_cast<size_t>(name_pos) < line.size())
    m.path = line.substr(name_pos);
  return m;
}

Result<std::vector<ProcMapping>> ReadProcMaps(pid_t pid, const std::string& proc_root) {
  std::string path = proc_root + "/" + std::to_string(pid) + "/maps";
  std::ifstream in(path);
  if (!in)
    return Error::Sys(path, errno, "cannot open");
  std::vector<ProcMapping> out;
  std::string line;
  while (std::getline(in, line)) {
    auto m = ParseProcMapsLine(line);
    if (!m.ok())
      return Error(path, m.error().message);
    out.push_back(std::move(*m));
  }
  return out;
}

std::vector<pid_t> ListPids(const std::string& dir) {
  std::vector<pid_t> out;
  DIR* d = opendir(dir.c_str());
  if (!d)
    return out;
  while (dirent* e = readdir(d)) {
    char* end;
    long v = strtol(e->d_name, &end, 10);
    if (*end == 0 && v > 0)
      out.push_back(static_cast<pid_t>(v));
  }
  closedir(d);
  return out;
}

Result<ProcessSnapshot> SnapshotProcess(pid_t pid, const std::string& proc_root) {
  PBID_ASSIGN_OR_RETURN(std::vector<ProcMapping> maps, ReadProcMaps(pid, proc_root));
  ProcessSnapshot snap;
  std::string proc = proc_root + "/" + std::to_string(pid);
  std::vector<pid_t> tids = ListPids(proc + "/task");
  if (tids.empty())
    tids.push_back(pid);
  std::sort(tids.begin(), tids.end());
  for (pid_t tid : tids) {
    std::ifstream in(proc + "/task/" + std::to_string(tid) + "/comm");
    std::string comm;
    std::getline(in, comm);
    if (!comm.empty())
      snap.threads.push_back({tid, comm});
  }
  for (ProcMapping& m : maps) {
    if (m.prot & PROT_EXEC)
      snap.exec_maps.push_back(std::move(m));
  }
  return snap;
}

namespace {

// Empty when fd is the file ident names, else why it is not (or cannot be shown to be).
std::string NotTheSameFile(int fd, const FileIdentity& ident) {
  if (ident.ino == 0)
    return "";
  struct stat st;
  if (fstat(fd, &st) < 0)
    return "cannot stat it";
  if (st.st_ino != ident.ino || major(st.st_dev) != ident.maj || minor(st.st_dev) != ident.min)
    return "file was replaced since it was mapped (inode differs)";
  if (ident.ino_generation == 0)
    return "";
  // The same number may be another file now: the generation is what tells them apart.
  unsigned int gen = 0;
  if (ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
    return "cannot prove it is the file that was mapped (its file system does not report inode "
           "generations)";
  if (gen != static_cast<uint32_t>(ident.ino_generation))
    return "file was replaced since it was mapped (inode reused, generation differs)";
  return "";
}

// What is read from a file once it is open (the fd is closed by the caller).
template <typename T>
using FdReader = std::function<Result<T>(int fd, const std::string& name)>;

// *refused is set when p opened but is not (or cannot be shown to be) the mapped file: that is
// the reason worth reporting, more than the paths that did not open.
template <typename T>
Result<T> TryPath(const std::string& p, const FileIdentity& ident, bool check_inode,
                  const FdReader<T>& read, bool* refused = nullptr) {
  auto opened = OpenRegularFile(p);
  if (!opened.ok())
    return opened.error();
  int fd = *opened;
  if (check_inode) {
    std::string why = NotTheSameFile(fd, ident);
    if (!why.empty()) {
      close(fd);
      if (refused != nullptr)
        *refused = true;
      return Error(p, why);
    }
  }
  auto r = read(fd, p);
  close(fd);
  return r;
}

// The file mapped at [start, end) in pid, found in the order the file comment gives, and read.
template <typename T>
Result<T> ReadMapping(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                      const FileIdentity& ident, const FdReader<T>& read) {
  char range[64];
  snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64, start, end);
  std::string proc = "/proc/" + std::to_string(pid);
  // map_files is the mapped file itself, even when deleted or in another mount namespace.
  auto r = TryPath<T>(proc + "/map_files/" + range, ident, false, read);
  if (r.ok())
    return r;
  Error first = r.error();
  if (path.empty() || path[0] != '/')
    return first;
  // A process that already exited or a mapping already gone: look the path up in its root.
  bool refused = false;
  r = TryPath<T>(proc + "/root" + path, ident, true, read, &refused);
  if (r.ok())
    return r;
  Error refusal = refused ? r.error() : Error();
  // The process is gone too (short-lived commands): our own namespace, but only if the inode
  // proves it is the same file.
  if (ident.ino != 0) {
    bool here_refused = false;
    r = TryPath<T>(path, ident, true, read, &here_refused);
    if (r.ok())
      return r;
    if (here_refused) {
      refusal = r.error();
      refused = true;
    }
  }
  return refused ? refusal : first;
}

}  // namespace

Result<MaybeBuildId> ReadMappingBuildId(pid_t pid, uint64_t start, uint64_t end,
                                        const std::string& path, const FileIdentity& ident) {
  return ReadMapping<MaybeBuildId>(pid, start, end, path, ident, ReadElfBuildIdFd);
}

std::string StripDeleted(const std::string& path) {
  static const std::string kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() &&
      path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    return path.substr(0, path.size() - kDeleted.size());
  }
  return path;
}

Result<int> OpenMappedFile(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                           const FileIdentity& ident) {
  // ReadMapping closes the fd it found: keep a duplicate.
  return ReadMapping<int>(pid, start, end, path, ident,
                          [](int fd, const std::string& name) -> Result<int> {
                            int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
                            if (dup < 0)
                              return Error::Sys(name, errno, "cannot duplicate descriptor");
                            return dup;
                          });
}

Result<FileIds> ReadFileIdsFd(int fd, const std::string& name) {
  FileIds ids;
  PBID_ASSIGN_OR_RETURN(ids.file_hash, ComputeFileHashFd(fd, name));
  // Not ELF (a mapped script or data file with PROT_EXEC) is no error here: it has no Go build
  // ID, and its hash still names it.
  char magic[SELFMAG];
  if (pread(fd, magic, SELFMAG, 0) == SELFMAG && memcmp(magic, ELFMAG, SELFMAG) == 0) {
    PBID_ASSIGN_OR_RETURN(ElfIds elf, ReadElfIdsFd(fd, name));
    ids.go_build_id = std::move(elf.go);
  }
  return ids;
}

Result<MaybeBuildId> VdsoBuildId() {
  unsigned long base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0)
    return MaybeBuildId();
  auto maps = ReadProcMaps(getpid());
  if (!maps.ok())
    return maps.error();
  for (const ProcMapping& m : *maps) {
    if (m.path == "[vdso]" && m.start == base) {
      return ReadElfBuildIdMemory(reinterpret_cast<const void*>(base), m.end - m.start, "[vdso]");
    }
  }
  return MaybeBuildId();
}

Result<MaybeBuildId> BuildIdCache::Get(pid_t pid, uint64_t start, uint64_t end,
                                       const std::string& path, const FileIdentity& ident) {
  auto key = std::make_tuple(ident.maj, ident.min, ident.ino, ident.ino_generation);
  // Without a generation, an inode number alone may name a newer file later on.
  const bool cacheable = ident.ino != 0 && ident.ino_generation != 0;
  if (cacheable) {
    auto it = by_inode_.find(key);
    if (it != by_inode_.end())
      return it->second;
  }
  auto r = ReadMappingBuildId(pid, start, end, path, ident);
  if (r.ok() && cacheable)
    by_inode_[key] = *r;
  return r;
}

Result<FileIds> FileIdsCache::Get(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                                  const FileIdentity& ident) {
  // An inode with its generation names one file for good: no need to open it again.
  auto ident_key = std::make_tuple(ident.maj, ident.min, ident.ino, ident.ino_generation);
  const bool by_ident = ident.ino != 0 && ident.ino_generation != 0;
  if (by_ident) {
    auto it = by_ident_.find(ident_key);
    if (it != by_ident_.end())
      return it->second;
  }
  FdReader<FileIds> read = [this](int fd, const std::string& name) -> Result<FileIds> {
    struct stat st;
    if (fstat(fd, &st) < 0)
      return Error::Sys(name, errno, "cannot stat");
    // Without a generation: the file as it is now, by device, inode, size and modification
    // time, so that a file rewritten in place is read again.
    FileKey key{st.st_dev, st.st_ino, static_cast<uint64_t>(st.st_size),
                static_cast<int64_t>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec};
    auto it = by_file_.find(key);
    if (it != by_file_.end())
      return it->second;
    auto ids = ReadFileIdsFd(fd, name);
    if (ids.ok()) {
      by_file_[key] = *ids;
      files_read_++;
    }
    return ids;
  };
  auto r = ReadMapping<FileIds>(pid, start, end, path, ident, read);
  if (r.ok() && by_ident)
    by_ident_[ident_key] = *r;
  return r;
}

Result<std::optional<KernelText>> ReadKernelText(const std::string& kallsyms) {
  std::ifstream in(kallsyms);
  if (!in)
    return Error::Sys(kallsyms, errno, "cannot open");
  std::string line;
  uint64_t text = 0, etext = 0;
  while (std::getline(in, line) && (text == 0 || etext == 0)) {
    char sym[256];
    uint64_t addr;
    char type;
    if (sscanf(line.c_str(), "%" SCNx64 " %c %255s", &addr, &type, sym) != 3)
      continue;
    if (text == 0 && strcmp(sym, "_text") == 0)
      text = addr;
    if (etext == 0 && strcmp(sym, "_etext") == 0)
      etext = addr;
  }
  if (text == 0 || etext <= text)
    return std::optional<KernelText>();
  return std::optional<KernelText>(KernelText{text, etext});
}

Result<std::vector<KernelModule>> ReadKernelModules(const std::string& modules) {
  std::vector<KernelModule> out;
  std::ifstream in(modules);
  if (!in) {
    if (errno == ENOENT)
      return out;  // CONFIG_MODULES=n
    return Error::Sys(modules, errno, "cannot open");
  }
  // "name size refcount deps state address [taints]"; deps is "-" or "a,b,". The state is
  // not looked at, as perf does not: a module still in its init or exit runs code in its core.
  std::string line;
  for (int n = 1; std::getline(in, line); n++) {
    char name[64];
    uint64_t size, addr;
    if (sscanf(line.c_str(), "%63s %" SCNu64 " %*s %*s %*s 0x%" SCNx64, name, &size, &addr) != 3)
      return Error(modules, "line " + std::to_string(n) + " does not parse: " + line);
    if (addr == 0 || size == 0)
      continue;  // its address hidden
    out.push_back(KernelModule{name, addr, size});
  }
  // Since 6.4 the address is the module's text and the size counts all its memory, which need
  // not follow the text: a range ends where the next module's begins, as perf's maps end.
  std::vector<KernelModule*> by_start;
  for (KernelModule& m : out)
    by_start.push_back(&m);
  std::sort(by_start.begin(), by_start.end(),
            [](const KernelModule* a, const KernelModule* b) { return a->start < b->start; });
  for (size_t i = 0; i + 1 < by_start.size(); i++) {
    KernelModule& m = *by_start[i];
    m.size = std::min(m.size, by_start[i + 1]->start - m.start);
  }
  return out;
}

}  // namespace pbid
