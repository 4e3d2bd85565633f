// SPDX-License-Identifier: GPL-2.0
//
// Internal: finds a module's executable and debug file by build ID, in the order documented in
// pbid/symbolize/symbolizer.h. Every candidate's build ID is read and compared before use.
#ifndef PBID_SYMBOLIZE_DEBUG_LOCATOR_H_
#define PBID_SYMBOLIZE_DEBUG_LOCATOR_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debuginfod_client.h"
#include "elf_file.h"
#include "pbid/build_id.h"
#include "pbid/file_hash.h"
#include "pbid/perf_data.h"
#include "pbid/result.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid {

struct LocatedFile {
  std::string path;
  SymbolSource source = SymbolSource::kNone;
  bool has_dwarf = false;
  bool has_symtab = false;
  std::vector<LoadSegment> segments;
};

struct LocatedModule {
  std::optional<LocatedFile> exec;   // the ELF as mapped (program headers valid)
  std::optional<LocatedFile> debug;  // the file holding DWARF (may be the exec itself)
  bool path_mismatch = false;        // recorded path has another (or no) build ID
  bool path_missing = false;         // recorded path could not be opened as ELF
};

class DebugLocator {
 public:
  static Result<std::unique_ptr<DebugLocator>> Create(const SymbolizerOptions& options);

  LocatedModule Locate(const BuildId& id, const std::string& recorded_path);
  // A file without a GNU build ID, named by its Go build ID and/or file hash: the recorded path,
  // then each --debug-dir's file-hash/xx/yyyy (an archive's: FileHashDirPath), each used only if
  // every identity recorded matches the file there. The system's .build-id directory and
  // debuginfod are keyed by GNU build IDs and cannot serve these.
  LocatedModule LocateByFileIds(const FileIds& ids, const std::string& recorded_path);

  // Asks debuginfod at once, concurrently and within its budget, for every file that Locate
  // would ask it for for these modules (build ID, recorded path), so that Locate finds the
  // answers waiting. Nothing without debuginfod.
  void Prefetch(const std::vector<std::pair<BuildId, std::string>>& modules);

  // The copy of /proc/kallsyms kept for the kernel with build ID id in a .build-id directory,
  // as perf's build-ID cache keeps it (xx/yyyy/kallsyms; perf record writes it to ~/.debug):
  // the first of the directories that has one, or none.
  std::optional<std::string> KallsymsCopy(const BuildId& id) const;

  const DebuginfodClient* debuginfod() const { return debuginfod_.get(); }
  ~DebugLocator();

 private:
  explicit DebugLocator(const SymbolizerOptions& options) : options_(options) {}
  // Steps 1 to 3 of Locate: everything but debuginfod.
  LocatedModule LocateLocal(const BuildId& id, const std::string& recorded_path);
  // Opens path and keeps it only if its build ID equals id.
  std::optional<LocatedFile> Verify(const std::string& path, const BuildId& id,
                                    SymbolSource source) const;

  // The file at path as a LocatedFile (its identity checked by the caller).
  static std::optional<LocatedFile> Describe(const std::string& path, SymbolSource source);

  SymbolizerOptions options_;
  std::vector<std::pair<std::string, SymbolSource>> build_id_dirs_;
  std::unique_ptr<DebuginfodClient> debuginfod_;
  bool vdso_tried_ = false;
  int vdso_fd_ = -1;  // a copy of the running kernel's vDSO, made when a [vdso] is looked up
};

// The vDSO the kernel mapped into this process, as a file (a memfd, owned by the caller):
// libdwfl reads files, and record --archive stores it. Its size is where its program headers'
// and section headers' contents end. -1 without one.
int CopyRunningVdso();

// "<dir>/xx/yyyy" for a .build-id directory (the executable link in that layout).
std::string BuildIdDirPath(const std::string& build_id_dir, const BuildId& id, const char* suffix);

// "<dir>/file-hash/xx/yyyy", yyyy the rest of the file hash's 32 hex digits: where an archive
// keeps a file that has no GNU build ID (kFileHashDir beside the build IDs' xx directories).
constexpr const char kFileHashDir[] = "file-hash";
std::string FileHashDirPath(const std::string& dir, const FileHash& hash);

// Whether the open file fd has every identity in ids (its Go build ID, its file hash).
bool HasFileIds(int fd, const std::string& name, const FileIds& ids);

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_DEBUG_LOCATOR_H_
