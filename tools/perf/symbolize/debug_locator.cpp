// SPDX-License-Identifier: GPL-2.0
#include "debug_locator.h"

#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pbid/elf_build_id.h"
#include "pbid/file_hash.h"
#include "pbid/proc_maps.h"

namespace pbid {

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int CopyRunningVdso() {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr || memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64)
    return -1;
  Elf64_Ehdr eh;
  memcpy(&eh, base, sizeof(eh));
  uint64_t size = eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, base + eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize, sizeof(ph));
    size = std::max<uint64_t>(size, ph.p_offset + ph.p_filesz);
  }
  // A vDSO is a few pages; anything else is not one to copy.
  if (size == 0 || size > (1u << 20))
    return -1;
  int fd = memfd_create("vdso", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (write(fd, base, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return -1;
  }
  return fd;
}

DebugLocator::~DebugLocator() {
  if (vdso_fd_ >= 0)
    close(vdso_fd_);
}

std::string BuildIdDirPath(const std::string& build_id_dir, const BuildId& id, const char* suffix) {
  std::string hex = id.ToHex();
  return build_id_dir + "/" + hex.substr(0, 2) + "/" + hex.substr(2) + suffix;
}

Result<std::unique_ptr<DebugLocator>> DebugLocator::Create(const SymbolizerOptions& options) {
  std::unique_ptr<DebugLocator> loc(new DebugLocator(options));
  if (!options.build_id_root.empty()) {
    loc->build_id_dirs_.emplace_back(options.build_id_root + "/.build-id",
                                     SymbolSource::kBuildIdDir);
  }
  for (const std::string& dir : options.debug_dirs) {
    // Accept both the root of a debug tree and its .build-id directory itself.
    std::string sub = dir + "/.build-id";
    loc->build_id_dirs_.emplace_back(IsDirectory(sub) ? sub : dir, SymbolSource::kDebugDir);
  }
  if (options.use_debuginfod) {
    auto client =
        DebuginfodClient::Create(options.debuginfod_urls, options.debuginfod_budget_seconds);
    if (!client.ok())
      return client.error();
    loc->debuginfod_ = std::move(*client);
  }
  return loc;
}

std::string FileHashDirPath(const std::string& dir, const FileHash& hash) {
  std::string hex = hash.ToHex();
  return dir + "/" + kFileHashDir + "/" + hex.substr(0, 2) + "/" + hex.substr(2);
}

bool HasFileIds(int fd, const std::string& name, const FileIds& ids) {
  if (ids.empty())
    return false;
  auto got = ReadFileIdsFd(fd, name);
  if (!got.ok())
    return false;
  // Every identity the recording has must match: the Go build ID names the build, the file
  // hash (OpenTelemetry's htlhash) the bytes at the file's ends and its length.
  return (!ids.go_build_id || got->go_build_id == ids.go_build_id) &&
         (!ids.file_hash || got->file_hash == ids.file_hash);
}

namespace {

bool MatchesFileIds(const std::string& path, const FileIds& ids) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok())
    return false;
  bool same = HasFileIds(*fd, path, ids);
  close(*fd);
  return same;
}

}  // namespace

std::optional<LocatedFile> DebugLocator::Verify(const std::string& path, const BuildId& id,
                                                SymbolSource source) const {
  auto elf = ElfFile::Open(path);
  if (!elf.ok())
    return std::nullopt;
  auto file_id = elf->ReadBuildId();
  if (!file_id.ok() || !file_id->has_value() || **file_id != id)
    return std::nullopt;
  return Describe(path, source);
}

std::optional<LocatedFile> DebugLocator::Describe(const std::string& path, SymbolSource source) {
  auto elf = ElfFile::Open(path);
  if (!elf.ok())
    return std::nullopt;
  LocatedFile f;
  f.path = path;
  f.source = source;
  f.has_dwarf = elf->HasDwarf();
  f.has_symtab = elf->HasSymtab();
  if (auto segs = elf->LoadSegments(); segs.ok())
    f.segments = std::move(*segs);
  return f;
}

LocatedModule DebugLocator::LocateLocal(const BuildId& id, const std::string& recorded_path) {
  LocatedModule m;

  // 1. The recorded path, only if it still holds the recorded build ID.
  if (!recorded_path.empty() && recorded_path[0] == '/') {
    auto elf = ElfFile::Open(recorded_path);
    if (!elf.ok()) {
      m.path_missing = true;
    } else {
      m.exec = Verify(recorded_path, id, SymbolSource::kPath);
      if (!m.exec)
        m.path_mismatch = true;
    }
  }
  if (m.exec && m.exec->has_dwarf)
    m.debug = m.exec;

  // The vDSO has no file: the running kernel's, if it is the recorded one (a report on the
  // machine and kernel that recorded).
  if (!m.exec && recorded_path == "[vdso]") {
    if (!vdso_tried_) {
      vdso_tried_ = true;
      vdso_fd_ = CopyRunningVdso();
    }
    if (vdso_fd_ >= 0)
      m.exec = Verify("/proc/self/fd/" + std::to_string(vdso_fd_), id, SymbolSource::kRunningVdso);
  }

  // 2 and 3. .build-id directories: xx/yyyy.debug is the debug file, xx/yyyy the executable;
  // in perf's build-ID cache (~/.debug), xx/yyyy is a directory holding both, as debug and elf.
  for (const auto& [dir, source] : build_id_dirs_) {
    if (m.debug && m.exec)
      break;
    const std::string base = BuildIdDirPath(dir, id, "");
    const bool perf_cache = IsDirectory(base);
    if (!m.debug)
      m.debug = Verify(perf_cache ? base + "/debug" : base + ".debug", id, source);
    if (!m.exec) {
      m.exec = Verify(perf_cache ? base + "/elf" : base, id, source);
      if (m.exec && m.exec->has_dwarf && !m.debug)
        m.debug = m.exec;
    }
  }

  return m;
}

LocatedModule DebugLocator::Locate(const BuildId& id, const std::string& recorded_path) {
  LocatedModule m = LocateLocal(id, recorded_path);
  // 4. debuginfod, last because it may go over the network.
  if (debuginfod_ && debuginfod_->Enabled()) {
    if (!m.debug) {
      if (auto p = debuginfod_->Find(id, DebuginfodClient::Kind::kDebuginfo)) {
        m.debug = Verify(*p, id, SymbolSource::kDebuginfod);
      }
    }
    if (!m.exec) {
      if (auto p = debuginfod_->Find(id, DebuginfodClient::Kind::kExecutable)) {
        m.exec = Verify(*p, id, SymbolSource::kDebuginfod);
      }
    }
  }
  return m;
}

LocatedModule DebugLocator::LocateByFileIds(const FileIds& ids, const std::string& recorded_path) {
  LocatedModule m;
  if (ids.empty())
    return m;
  const bool file = !recorded_path.empty() && recorded_path[0] == '/';
  std::optional<LocatedFile> found;
  if (file && MatchesFileIds(recorded_path, ids)) {
    found = Describe(recorded_path, SymbolSource::kPath);
  } else {
    if (file) {
      m.path_missing = !ElfFile::Open(recorded_path).ok();
      m.path_mismatch = !m.path_missing;
    }
    // An archive's copy, by the file hash (record --archive, perf-buildid archive).
    for (const auto& [dir, source] : build_id_dirs_) {
      if (source != SymbolSource::kDebugDir || !ids.file_hash)
        continue;
      std::string p = FileHashDirPath(dir, *ids.file_hash);
      if (MatchesFileIds(p, ids)) {
        found = Describe(p, source);
        break;
      }
    }
  }
  m.exec = found;
  if (m.exec && m.exec->has_dwarf)
    m.debug = m.exec;
  return m;
}

std::optional<std::string> DebugLocator::KallsymsCopy(const BuildId& id) const {
  for (const auto& [dir, source] : build_id_dirs_) {
    // Whatever is there but for nothing: what cannot be read is said by the one who reads it.
    std::string p = BuildIdDirPath(dir, id, "/kallsyms");
    struct stat st;
    if (stat(p.c_str(), &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
      return p;
  }
  return std::nullopt;
}

void DebugLocator::Prefetch(const std::vector<std::pair<BuildId, std::string>>& modules) {
  if (!debuginfod_ || !debuginfod_->Enabled())
    return;
  // What Locate asks debuginfod for: the debug file unless found locally, the executable
  // unless found locally.
  std::vector<std::pair<BuildId, DebuginfodClient::Kind>> wanted;
  for (const auto& [id, path] : modules) {
    LocatedModule m = LocateLocal(id, path);
    if (!m.debug)
      wanted.emplace_back(id, DebuginfodClient::Kind::kDebuginfo);
    if (!m.exec)
      wanted.emplace_back(id, DebuginfodClient::Kind::kExecutable);
  }
  debuginfod_->Prefetch(wanted);
}

}  // namespace pbid
