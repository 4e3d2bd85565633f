// SPDX-License-Identifier: GPL-2.0
//
// An archive filled while recording (record --archive): each executable file a recording maps
// is opened as the mapping is reported, while the process that maps it still runs, through
// /proc/PID/map_files (a deleted or replaced file included), and copied into the archive by a
// thread of its own, so that the recorder's drain loop only opens a file once per build ID.
// The open descriptor keeps the file's bytes readable when the process exits and its path goes
// before the copy is made: short-lived processes are archived too. At the end, Finish() adds
// what the archive command adds (separate debug files, the files whose mapping could not be
// opened, found by the lookup chain) and holds the cap. The library never prints.
#ifndef PBID_SYMBOLIZE_LIVE_ARCHIVE_H_
#define PBID_SYMBOLIZE_LIVE_ARCHIVE_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/proc_maps.h"
#include "pbid/result.h"
#include "pbid/symbolize/archive.h"

namespace pbid {

class LiveArchive {
 public:
  // What was done while recording, before Finish().
  struct Stats {
    uint64_t ids = 0;           // build IDs seen in executable mappings
    uint64_t files_copied = 0;  // executables copied from the mapped file
    uint64_t bytes_copied = 0;
    uint64_t present = 0;  // executables the archive held already
    uint64_t failed = 0;   // not copied from the mapping: left to Finish()'s lookup chain
    std::string first_failure;
  };

  // Creates dir if needed and starts the copying thread.
  static Result<std::unique_ptr<LiveArchive>> Create(const std::string& dir);
  ~LiveArchive();
  LiveArchive(const LiveArchive&) = delete;
  LiveArchive& operator=(const LiveArchive&) = delete;

  // An executable mapping with a GNU build ID, as its MMAP2 record reports it: a file, or
  // "[vdso]" (stored from the recorder's own vDSO when that has the ID). Cheap for an ID already
  // seen (a hash lookup); else the mapped file is opened now and queued for copying.
  void Add(const BuildId& id, pid_t pid, uint64_t start, uint64_t end, const std::string& path,
           const FileIdentity& ident);

  // Waits for the copies, then runs ArchiveModules over every ID seen (separate debug files
  // from the system's .build-id directory and `options`, executables whose mapping could not
  // be opened from the lookup chain, the cap). options.debug_dirs gains the archive itself, so
  // that what was copied while recording is found there. Call once.
  Result<ArchiveSummary> Finish(SymbolizerOptions options, uint64_t max_bytes);

  // Consistent after Finish().
  const Stats& stats() const { return stats_; }
  const std::string& dir() const { return dir_; }

 private:
  explicit LiveArchive(std::string dir) : dir_(std::move(dir)) {}
  struct Job {
    BuildId id;
    int fd;
    std::string name;
  };
  void Run();
  void Copy(const Job& job);

  std::string dir_;
  std::unordered_set<BuildId> seen_;
  std::vector<std::pair<BuildId, std::string>> modules_;  // in the order first seen
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;  // under mu_
  bool done_ = false;      // under mu_
  Stats stats_;            // counts under mu_ while the thread runs
  std::thread thread_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_LIVE_ARCHIVE_H_
