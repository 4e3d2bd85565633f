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
#include <unordered_map>
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
    // Not copied from a mapping (never opened, or the copy was refused): left to Finish()'s
    // lookup chain. first_failure says why the first one was not.
    uint64_t failed = 0;
    std::string first_failure;
  };

  // Creates dir if needed and starts the copying thread.
  static Result<std::unique_ptr<LiveArchive>> Create(const std::string& dir);
  ~LiveArchive();
  LiveArchive(const LiveArchive&) = delete;
  LiveArchive& operator=(const LiveArchive&) = delete;

  // An executable mapping with a GNU build ID, as its MMAP2 record reports it: a file, or
  // "[vdso]" (stored from the recorder's own vDSO when that has the ID). Cheap for an ID already
  // queued (a hash lookup); else the mapped file is opened now and queued for copying. An ID
  // whose file could not be opened (its process gone, the queue full) is tried again at its
  // next mappings, a few times.
  void Add(const BuildId& id, pid_t pid, uint64_t start, uint64_t end, const std::string& path,
           const FileIdentity& ident);

  // An executable mapping without a GNU build ID, with the identities the recorder read from
  // its file (ids.file_hash is the key; without one there is nothing to store it under).
  void AddByFileIds(const FileIds& ids, pid_t pid, uint64_t start, uint64_t end,
                    const std::string& path, const FileIdentity& ident);

  // Waits for the copies, then runs ArchiveModules over every ID seen (separate debug files
  // from the system's .build-id directory and `options`, executables whose mapping could not
  // be opened from the lookup chain, the cap). options.debug_dirs gains the archive itself, so
  // that what was copied while recording is found there. Call once.
  Result<ArchiveSummary> Finish(SymbolizerOptions options, uint64_t max_bytes);

  // Consistent after Finish().
  const Stats& stats() const { return stats_; }
  const std::string& dir() const { return dir_; }

 private:
  LiveArchive(std::string dir, int64_t started_ns)
      : dir_(std::move(dir)), started_ns_(started_ns) {}
  struct Job {
    BuildId id;  // empty: stored by ids
    FileIds ids;
    int fd;
    std::string name;
  };
  // A file the recording maps, by key (a build ID's hex digits, or "file-hash:" and the hash's).
  struct Want {
    bool queued = false;  // opened and queued: done with
    uint8_t tries = 0;    // failed opens so far
  };
  // Opens the mapped file into job->fd and queues the job; false when it could not (why in
  // *why).
  bool Open(Job* job, pid_t pid, uint64_t start, uint64_t end, const FileIdentity& ident,
            std::string* why);
  // Add() and AddByFileIds(): a mapping of the file named `key`.
  void Offer(const std::string& key, Job job, pid_t pid, uint64_t start, uint64_t end,
             const FileIdentity& ident);
  void Run();
  void Copy(const Job& job);

  std::string dir_;
  std::unordered_map<std::string, Want> wants_;  // touched by the recorder's thread only
  std::string first_open_failure_;
  ArchiveInput input_;  // in the order first seen
  int64_t started_ns_;  // CLOCK_REALTIME at Create(): ArchiveInput::used_since_ns
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;  // under mu_
  bool done_ = false;      // under mu_
  Stats stats_;            // counts under mu_ while the thread runs
  std::thread thread_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_LIVE_ARCHIVE_H_
