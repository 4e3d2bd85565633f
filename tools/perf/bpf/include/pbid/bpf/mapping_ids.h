// SPDX-License-Identifier: GPL-2.0
//
// The BPF source of build ids, as perf-buildid record uses it: the program's stacks matched
// against the mappings of the recording, and what the file then says about each mapping.
//
// The recorder feeds every MMAP2, exec COMM and FORK record as it drains the perf ring
// buffers, then calls Match(). Stacks are taken from the BPF ring buffer *before* the perf
// ring buffers are drained (Collect()), so that the MMAP2 record of every mapping a stack can
// name is already known when the stack is matched: the kernel writes a mapping's MMAP2
// record inside mmap(), before any code in it can run and be sampled.
//
// Times must be those of bpf_ktime_get_ns (CLOCK_MONOTONIC): the recorder opens its events
// with use_clockid when it uses BPF.
#ifndef PBID_BPF_MAPPING_IDS_H_
#define PBID_BPF_MAPPING_IDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pbid/bpf/id_matcher.h"
#include "pbid/bpf/stack_ids.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {

class BpfMappingIds {
 public:
  // With the BPF program loaded; the error is the one line record prints when it goes on
  // without BPF.
  static Result<std::unique_ptr<BpfMappingIds>> Load();
  // Without a program: stacks come only through Offer() (tests).
  BpfMappingIds() = default;

  // Runs the program on every sample of the perf event perf_fd.
  Status Attach(int perf_fd);
  // Readable when stacks wait; -1 without a program.
  int poll_fd() const;

  // Every MMAP2 record of the recording, with the id the recorder already has for it (from
  // the kernel's record or read from the file), if any. Decided() names a mapping by the
  // order of these calls, counted from 0, for the caller to find what it kept about it.
  void OnMmap2(const Mmap2Record& m, const std::optional<BuildId>& known, BuildIdSource known_from);
  void OnExec(uint32_t pid, uint64_t t);
  void OnFork(uint32_t parent, uint32_t child, uint64_t t);

  // Takes the stacks waiting in the ring buffer; Match() offers them.
  Status Collect();
  void Match();
  // One stack, offered at once.
  void Offer(const BpfUserStack& stack);

  // What BPF decided, per mapping that it decided something for.
  struct Decided {
    MappingIdEntry entry;  // pid, start, pgoff and time of the MMAP2 record; kBpf or kDisputed
    std::string path;
    uint64_t mapping = 0;  // which OnMmap2 call, counted from 0
  };
  // Mappings that got their id from BPF, and mappings whose file id BPF disputed. A dispute
  // with the kernel's own record is counted but not written: the kernel read the mapped file
  // itself, at mmap time.
  std::vector<Decided> Decisions() const;

  struct Stats {
    uint64_t stacks = 0;          // samples the program sent
    uint64_t frames = 0;          // user frames in them
    uint64_t frames_with_id = 0;  // frames for which the kernel gave (id, offset)
    uint64_t assigned = 0;        // mappings that got an id from BPF
    uint64_t confirmed = 0;       // frames that agreed with an id known otherwise
    uint64_t offset_mismatch = 0; // frames whose offset was not their mapping's
    uint64_t conflicts = 0;       // mappings given two different ids
    uint64_t dropped = 0;         // samples lost because the BPF ring buffer was full
  };
  Stats stats() const;

 private:
  struct MappingInfo {
    uint32_t pid;
    uint64_t start, pgoff, time;
    std::string path;
    BuildIdSource known_from;
  };

  std::unique_ptr<BpfStackIds> program_;
  BpfIdMatcher matcher_;
  std::vector<MappingInfo> mappings_;  // index = the matcher's mapping key
  std::vector<BpfUserStack> pending_;
  Stats stats_;
};

}  // namespace pbid

#endif  // PBID_BPF_MAPPING_IDS_H_
