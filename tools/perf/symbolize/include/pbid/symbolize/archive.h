// SPDX-License-Identifier: GPL-2.0
//
// A build-ID archive: the files a recording needs, stored as DIR/xx/yyyy (the executable) and
// DIR/xx/yyyy.debug (its separate debug file), the .build-id layout that `debuginfod -F`, gdb,
// perf and report read. Files are found by the symbolizer's one lookup chain, so a file with
// another build ID is never stored. The library never prints: the caller reports the results.
#ifndef PBID_SYMBOLIZE_ARCHIVE_H_
#define PBID_SYMBOLIZE_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"
#include "pbid/result.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid {

// What a recording needs archived: its modules by GNU build ID, and the files without one by
// their other identities (a Go build ID, the file hash), each with its recorded path.
struct ArchiveInput {
  std::vector<std::pair<BuildId, std::string>> modules;
  std::vector<std::pair<FileIds, std::string>> by_file_ids;
  // The cap never evicts a file used at or after this time (CLOCK_REALTIME ns, as file times
  // are): another recording filling the archive beside this one may need it. 0: the time
  // ArchiveModules starts.
  int64_t used_since_ns = 0;
};

// What became of one module (build ID, recorded path) or file without a build ID.
struct ArchiveEntry {
  BuildId id;        // empty for a file without a GNU build ID
  FileIds file_ids;  // that file's identities; stored under its file hash
  std::string recorded_path;
  // The entry's key as perf-buildid archive prints it: the build ID's hex digits, or
  // "file-hash:" and the file hash's.
  std::string Key() const;
  enum class Outcome : uint8_t {
    kStored,   // at least one file copied in this run
    kPresent,  // everything found was already in the archive (shared with an earlier run)
    kMissing,  // no file with this build ID: `reason` says why
  } outcome = Outcome::kMissing;
  bool exec = false;   // xx/yyyy is in the archive
  bool debug = false;  // xx/yyyy.debug is in the archive
  std::string reason;  // for kMissing, or for a debug file not found
  uint64_t bytes_copied = 0;
};

struct ArchiveSummary {
  std::vector<ArchiveEntry> entries;
  uint64_t files_copied = 0;
  uint64_t bytes_copied = 0;
  // With a cap: what was evicted, and whether the archive is now within it (false when the
  // files this run needs are more than the cap: those are never evicted).
  uint64_t ids_evicted = 0;
  uint64_t bytes_evicted = 0;
  uint64_t archive_bytes = 0;  // after eviction (computed only with a cap)
  bool within_cap = true;
};

// Copies into `dir` (created if needed) each module's executable and separate debug file, and
// each file without a build ID as file-hash/xx/yyyy (found at its recorded path if it still
// has the recorded identities, or in a --debug-dir's file-hash directory; debuginfod has no key
// for it).
// Regular files, written to a temporary name and renamed, so that a server scanning the
// directory never sees half a file; a file already present under its name is kept (identical
// build IDs are stored once). Every file this run needs has its modification time set to now,
// which makes it the most recently used. With max_bytes > 0, the least recently used build IDs
// (both their files) not needed by this run are then removed until the archive holds at most
// max_bytes. Errors are those of the archive directory itself.
Result<ArchiveSummary> ArchiveModules(const SymbolizerOptions& options, const std::string& dir,
                                      const ArchiveInput& input, uint64_t max_bytes = 0);

// Stores the open file fd (not closed; read from its start, its offset left alone), named
// `name` in errors, as the executable of `id` in dir: DIR/xx/yyyy, made as ArchiveModules makes
// it. The copy must have build ID `id`, or it is dropped with an error: a file rewritten in
// place since it was mapped is never stored under the old ID. Returns the bytes copied: 0 when
// the archive held that executable already (it is then marked used, as ArchiveModules does).
Result<uint64_t> StoreExecutable(const std::string& dir, const BuildId& id, int fd,
                                 const std::string& name);
// The same for a file without a GNU build ID, stored as file-hash/xx/yyyy by its file hash
// (an error without one); the copy must have every identity in ids.
Result<uint64_t> StoreByFileIds(const std::string& dir, const FileIds& ids, int fd,
                                const std::string& name);

// Writes the files under dir (the .build-id layout above) into a portable tarball at
// tar_path, as regular files with paths relative to dir; zstd-compressed when tar_path ends in
// ".zst". Written under a temporary name and renamed.
Status WriteTarball(const std::string& dir, const std::string& tar_path);

// ArchiveModules into a staging directory in $TMPDIR (or /tmp), then WriteTarball: a tarball
// of this recording's files alone. The staging directory is removed.
Result<ArchiveSummary> ArchiveModulesToTarball(const SymbolizerOptions& options,
                                               const std::string& tar_path,
                                               const ArchiveInput& input);

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_ARCHIVE_H_
