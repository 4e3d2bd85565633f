// SPDX-License-Identifier: GPL-2.0
//
// Live processes: /proc/PID/maps, and build ids of mapped files read the way that works for
// deleted files and other mount namespaces: /proc/PID/map_files/<start>-<end> first, then
// /proc/PID/root/<path>, then (for processes that already exited) <path> in our own mount
// namespace. When the caller knows the mapping's device and inode (MMAP2 records,
// /proc/PID/maps), a file found by path is used only if it is still that inode, so a binary
// replaced on disk never lends its id to an old mapping; without an inode only map_files and
// /proc/PID/root are tried.
#ifndef PBID_PROC_MAPS_H_
#define PBID_PROC_MAPS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pbid/elf_build_id.h"
#include "pbid/perf_data.h"
#include "pbid/result.h"

namespace pbid {

struct ProcMapping {
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t prot = 0;   // PROT_READ | PROT_WRITE | PROT_EXEC
  uint32_t flags = 0;  // MAP_PRIVATE or MAP_SHARED
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  std::string path;  // may be empty, "[vdso]", "/x (deleted)", ...
};

// PROC_ROOT/PID/maps: "/proc" on a live system, a directory laid out like it in tests.
Result<std::vector<ProcMapping>> ReadProcMaps(pid_t pid, const std::string& proc_root = "/proc");
// Parses one line of /proc/PID/maps.
Result<ProcMapping> ParseProcMapsLine(const std::string& line);

// The numeric entries of a directory: the pids of /proc, the tids of /proc/PID/task. Empty when
// it cannot be read.
std::vector<pid_t> ListPids(const std::string& dir);

// What synthesis records of a process that ran before the recording started, as perf
// synthesizes it: the comm of each thread and the executable mappings.
struct ProcessSnapshot {
  struct Thread {
    pid_t tid;
    std::string comm;
  };
  std::vector<Thread> threads;  // by tid; threads gone before their comm was read are left out
  std::vector<ProcMapping> exec_maps;  // the mappings with PROT_EXEC, in address order
};
// Reads PROC_ROOT/PID/maps and PROC_ROOT/PID/task/TID/comm. An error when the maps cannot be
// read: the process exited, or is a kernel thread we may not read.
Result<ProcessSnapshot> SnapshotProcess(pid_t pid, const std::string& proc_root = "/proc");

// Identity of a mapped file; ino 0 means unknown (then no inode check is made).
// A file as an MMAP2 record names it. Inode numbers are reused (ext4 hands a deleted file's
// number to the next file it creates), so only the generation tells a file from its successor
// at the same path; 0 is "not known" (a mapping synthesized from /proc/PID/maps).
struct FileIdentity {
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  uint64_t ino_generation = 0;
};

// The build id of the file mapped at [start, end) in pid. See the file comment for the order.
Result<MaybeBuildId> ReadMappingBuildId(pid_t pid, uint64_t start, uint64_t end,
                                        const std::string& path, const FileIdentity& ident);

// A mapping's path as an MMAP2 record or /proc/PID/maps gives it, without the " (deleted)" the
// kernel appends to a file that was unlinked.
std::string StripDeleted(const std::string& path);

// The file mapped at [start, end) in pid, found and checked as ReadMappingBuildId finds it,
// open for reading: the caller owns the fd. Held open, it keeps the file's bytes readable after
// the process exits and its path is deleted or replaced.
Result<int> OpenMappedFile(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                           const FileIdentity& ident);

// The identities of the open file fd other than its GNU build ID: its file hash, and its Go
// build ID when it is ELF and has one. fd is not closed.
Result<FileIds> ReadFileIdsFd(int fd, const std::string& name);

// The vdso's build id, read from this process's own vdso image: the kernel maps the same
// vdso into every process of an ABI.
Result<MaybeBuildId> VdsoBuildId();

// The running kernel's text as perf maps it, [_text, _etext): the range of the kernel's
// MMAP2 record, whose pgoff is _text.
struct KernelText {
  uint64_t start = 0, end = 0;
};
// Reads KALLSYMS up to the two symbols. Nothing when they are missing or their addresses are
// hidden (kptr_restrict shows them as 0); an error when the file cannot be opened.
Result<std::optional<KernelText>> ReadKernelText(const std::string& kallsyms = "/proc/kallsyms");

// A loaded kernel module as MODULES (/proc/modules) lists it: its name and the range of its core
// (code, then data) from its load address, cut where the next module's begins. The kernel writes no record when a module loads, so a
// recorder names these ranges itself, as perf does.
struct KernelModule {
  std::string name;
  uint64_t start = 0, size = 0;
};
// The modules with an address, whatever their state (Live, Loading, Unloading), as perf lists
// them: none when addresses are hidden (kptr_restrict shows 0),
// none on a kernel without modules (no file); an error when a line does not parse.
Result<std::vector<KernelModule>> ReadKernelModules(const std::string& modules = "/proc/modules");

// Remembers build ids by inode so that a library mapped by many processes is parsed once.
class BuildIdCache {
 public:
  Result<MaybeBuildId> Get(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                           const FileIdentity& ident);

 private:
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>, MaybeBuildId> by_inode_;
};

// The Go build ID and file hash of mapped files, found as ReadMappingBuildId finds a file, each
// file read once: by its inode and generation when the record gives them, else by what fstat
// says of the file found (device, inode, size, modification time).
class FileIdsCache {
 public:
  Result<FileIds> Get(pid_t pid, uint64_t start, uint64_t end, const std::string& path,
                      const FileIdentity& ident);
  // How many files were read (hashed) so far: each once.
  uint64_t files_read() const { return files_read_; }

 private:
  struct FileKey {
    dev_t dev;
    ino_t ino;
    uint64_t size;
    int64_t mtime_sec, mtime_nsec;
    bool operator<(const FileKey& o) const {
      return std::tie(dev, ino, size, mtime_sec, mtime_nsec) <
             std::tie(o.dev, o.ino, o.size, o.mtime_sec, o.mtime_nsec);
    }
  };
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>, FileIds> by_ident_;
  std::map<FileKey, FileIds> by_file_;
  uint64_t files_read_ = 0;
};

}  // namespace pbid

#endif  // PBID_PROC_MAPS_H_
