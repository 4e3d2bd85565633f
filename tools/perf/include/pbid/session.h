// SPDX-License-Identifier: GPL-2.0
//
// A perf.data file replayed in time order: which process had which mapping when each sample
// was taken, with the mapping's build id and where that id came from.
//
//   auto reader = pbid::PerfDataReader::Open(path);          // header checked, mmap'd
//   pbid::Session session(**reader);
//   pbid::Status st = session.Process([&](const pbid::SampleContext& s) { ... });
//   for (const pbid::Mapping& m : session.mappings()) ...
//
// Build-id sources, tried in this order for each MMAP2/MMAP record:
//   1. the record's own id (PERF_RECORD_MISC_MMAP_BUILD_ID, trusted only when the record's
//      event has attr.build_id): kKernelRecord, or kSynthesized for records before
//      PERF_RECORD_FINISHED_INIT (in files without FINISHED_INIT: records with time 0);
//   2. a PERF_RECORD_HEADER_BUILD_ID right after the record for the same file name (written by
//      `perf-buildid record` when the kernel lacks attr.build_id): kFile, or kSynthesized
//      before FINISHED_INIT;
//   3. the recorder's per-mapping section (kFeatPbidMappingIds, matched by pid, start, pgoff
//      and time): an id its BPF program saw at sample time (kBpf), or a dispute between two
//      sources, which leaves the mapping without an id even if 2. gave one;
//   4. the HEADER_BUILD_ID feature table, matched by file name: kFile;
//   5. otherwise kNone.
#ifndef PBID_SESSION_H_
#define PBID_SESSION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {

struct Mapping {
  int32_t pid = 0;  // -1 for kernel mappings
  uint32_t tid = 0;
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t prot = 0, flags = 0;  // 0 when the record was an MMAP (v1)
  bool kernel = false;           // the record's cpumode was kernel
  std::string path;
  std::optional<BuildId> build_id;
  BuildIdSource source = BuildIdSource::kNone;
  uint32_t maj = 0, min = 0;  // from MMAP2 records without a build id
  uint64_t ino = 0;
  uint64_t time = 0;           // sample_id.time of the record, 0 if absent
  uint64_t record_offset = 0;  // file offset of the MMAP/MMAP2 record
  uint64_t samples = 0;        // samples whose ip fell into this mapping
  size_t dso = 0;              // index into Session::dsos()
};

// One file (or [kernel.kallsyms], [vdso], ...) as perf's DSO list sees it: mappings with the
// same path and build id share it.
struct Dso {
  std::string path;
  std::optional<BuildId> build_id;
  BuildIdSource source = BuildIdSource::kNone;
  bool kernel = false;
  uint64_t samples = 0;  // "hit" in perf's terms when > 0
};

// Everything a sample callback needs; pointers are valid during the callback only.
struct SampleContext {
  const SampleRecord& sample;
  const EventAttr& attr;
  const Mapping* mapping;  // nullptr when no mapping contains the ip
  const RecordView& record;
};

// What a record callback sees, after the session handled the record; valid during the
// callback only.
struct RecordContext {
  const RecordView& record;
  const EventAttr& attr;
  size_t attr_index;     // index of attr in the reader's attrs()
  const Mapping* added;  // MMAP/MMAP2: the mapping it added; nullptr if it added none
};

struct SessionStats {
  uint64_t records = 0, samples = 0, lost = 0, lost_samples = 0, mmaps = 0, unresolved = 0;
  uint64_t throttle = 0, bad_records = 0;
  // The most records held at once waiting for their turn in time order: about a round's
  // worth (PERF_RECORD_FINISHED_ROUND) in a file perf wrote, not the file's record count.
  uint64_t max_queued = 0;
  // Passes over the data section: 1 when the file was streamed, 2 when it was surveyed first,
  // 3 when a stream was given up for a survey (see Session::Order).
  uint64_t passes = 0;
  uint64_t unknown_id = 0;  // records whose event id no attr owns (Process() then fails)
  std::map<BuildIdSource, uint64_t> mappings_by_source;
};

class Session {
 public:
  // How Process() puts the records in time order.
  //   kStream: one pass. A round (PERF_RECORD_FINISHED_ROUND) is replayed up to the latest time
  //     of the rounds before the previous one, as perf does. If a record then turns out to be
  //     older than the time the replay has reached, a FINISHED_INIT comes after records were
  //     replayed, a record fails to decode before the last round, or too many records wait,
  //     the session is cleared and surveyed instead: the result is the same either way.
  //     Without callbacks only: what they were given cannot be taken back, so with callbacks
  //     kStream surveys.
  //   kSurvey: a first pass finds, for each point where the replay may flush, the earliest time
  //     of anything after it; the second replays.
  enum class Order { kStream, kSurvey };
  explicit Session(const PerfDataReader& reader, Order order = Order::kStream)
      : reader_(reader), order_(order) {}

  // Replays all records; call it once. A record whose header does not fit in the file stops
  // processing with an error naming its offset, after everything before it in the file; a
  // record that fails to decode, after everything before it in time order. Records whose
  // event id no attr owns cannot be decoded: they are counted and skipped, and Process() then
  // fails naming the count and the first one (perf stops on them with "failed to process
  // type").
  // on_record, if given, sees every record (after the session handled it) in time order.
  // The order is a stable sort of the whole file by time, but a record is held only until no
  // later one can sort before it: about a round of a file perf wrote (see Order).
  using SampleCallback = std::function<void(const SampleContext&)>;
  using RecordCallback = std::function<void(const RecordContext&)>;
  Status Process(const SampleCallback& on_sample = nullptr,
                 const RecordCallback& on_record = nullptr);

  const std::deque<Mapping>& mappings() const { return mappings_; }
  const std::vector<Dso>& dsos() const { return dsos_; }
  const SessionStats& stats() const { return stats_; }
  std::string CommOf(int32_t pid) const;

  // The mapping that contains ip in process pid (kernel: the kernel's mappings; the kernel
  // image map extends to the end of the address space, as in perf). Inside a callback this is
  // the state at that record's time; after Process() the state at the end of the file.
  // It remembers the last process it looked up: one thread at a time.
  const Mapping* Find(int32_t pid, uint64_t ip, bool kernel) const;

 private:
  // Process, in steps: the records in time order, then one handler per record type.
  // One per record waiting to be replayed: kept small, since a round can hold many. Half of
  // it serves decoded samples only, and is unused in a replay with callbacks.
  // Process refuses files whose offsets do not fit (128 TiB and more: none would be mapped).
  static constexpr unsigned kOffsetBits = 47, kAttrBits = 16;
  struct Ordered {
    uint64_t time;
    uint64_t offset : kOffsetBits;
    // Index of the record's event in the reader's attrs(), found when it was queued;
    // kAttrUnknown: none owns it (or a file of 64 Ki events, looked up again).
    uint64_t attr : kAttrBits;
    // A sample decoded when it was queued, for a replay without callbacks: it needs only the
    // sample's lookup key, kept below, and not the record, read again in time order long
    // after it left the cache. The lookup itself waits for the replay: the tables change.
    uint64_t decoded : 1;
    uint64_t ip;  // the rest only when decoded
    int32_t pid;
    bool kernel;
  };
  static constexpr uint64_t kAttrUnknown = (uint64_t{1} << kAttrBits) - 1;
  static_assert(sizeof(Ordered) == 32, "Ordered is one entry per queued record");
  // r's queue entry: its time, and with `decode` a sample's lookup key if it decodes.
  Ordered EntryFor(const RecordView& r, const EventAttr* attr, bool decode,
                   uint64_t last_time) const;
  // Where the replay may flush: before the record at `offset`, every queued record with a time
  // at or below `bound`, the earliest time of any record from there to the end of the file.
  struct FlushPoint {
    uint64_t offset;
    uint64_t bound;
  };
  // A record far later in the file than its time: the replay queues it at flush point
  // `flush`, read ahead, and passes over it where the file has it, so that the records it
  // would otherwise keep waiting (all those since its time) do not pile up in the queue.
  // `time` is its time in the survey, which a record without one took from the record before.
  struct Straggler {
    uint64_t offset, time;
    size_t flush;  // index into Plan::flushes
  };
  struct Plan {
    std::vector<FlushPoint> flushes;          // in file order
    std::vector<Straggler> stragglers;        // by flush, then file order
    std::vector<uint64_t> straggler_offsets;  // the same records' offsets, in file order
  };
  class Cuts;  // the survey's flush points
  Plan Survey();
  // The records in time order: at plan's flush points, or (plan == nullptr) streamed at
  // perf's rounds, setting *given_up instead if the file breaks what that presumes.
  Status Pass(const Plan* plan, const SampleCallback& on_sample, const RecordCallback& on_record,
              bool* given_up);
  // Keeps followed_by_: *prev_mmap is the offset of the record before r if it was a mapping.
  void NoteBuildIdAfterMmap(const RecordView& r, uint64_t* prev_mmap);
  // Forgets everything replayed, for a survey after a stream was given up.
  void Reset();
  const EventAttr* AttrOf(const RecordView& r);
  uint64_t RecordTime(const RecordView& r, const EventAttr* attr, uint64_t last_time) const;
  Status Replay(const Ordered& e, const SampleCallback& on_sample, const RecordCallback& on_record,
                uint64_t* first_unknown, uint64_t* first_unknown_id);
  // Written by the recorder, before the kernel's records (source 1. at the top of this file).
  bool Synthesized(const Ordered& e) const {
    return finished_init_ != kNoOffset ? e.offset < finished_init_ : e.time == 0;
  }
  Status OnMmap(const RecordView& r, const EventAttr& attr, bool synth, const Mapping** added);
  Status OnComm(const RecordView& r, const EventAttr& attr);
  Status OnFork(const RecordView& r, const EventAttr& attr);
  Status OnSample(const RecordView& r, const EventAttr& attr, const SampleCallback& on_sample);
  // Counts a sample in the mapping it hit, if any, and returns that.
  const Mapping* Hit(int32_t pid, uint64_t ip, bool kernel);
  Status OnOther(const RecordView& r, const EventAttr& attr);

  void AddMapping(Mapping m, const Mapping** added);
  size_t DsoFor(const Mapping& m);
  static constexpr size_t kNoMapping = SIZE_MAX;
  size_t FindIndex(int32_t pid, uint64_t ip, bool kernel) const;

  const PerfDataReader& reader_;
  const Order order_;
  // From the feature sections, for OnMmap.
  std::unordered_map<std::string, BuildId> table_;  // HEADER_BUILD_ID by file name
  // kFeatPbidMappingIds by the MMAP2 record's (pid, start, pgoff, time).
  using MappingKey = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>;
  std::map<MappingKey, const MappingIdEntry*> later_ids_;
  // The replay's state, from here to stats_: Reset() clears each.
  static constexpr uint64_t kNoOffset = UINT64_MAX;
  uint64_t finished_init_ = kNoOffset;  // offset of the first PERF_RECORD_FINISHED_INIT
  // Every mapping of the file, in the order the replay added them. A deque, because a stream
  // learns their number only at its end: a vector's doublings would move every mapping into
  // fresh memory that must be faulted in, holding both buffers meanwhile.
  std::deque<Mapping> mappings_;
  std::vector<Dso> dsos_;
  // DSO path -> the indices into dsos_ of its DSOs (one per build id; nearly always one).
  std::unordered_map<std::string, std::vector<size_t>> dsos_by_path_;
  // [start, end) of a process's address space -> index into mappings_.
  struct Span {
    uint64_t start, end;
    size_t idx;
  };
  // A process's spans, sorted by start and disjoint. Shared by a process and the children it
  // forked until one of them maps something: a FORK costs O(1), and the first change after it
  // copies the table, unless the child execs first (OnComm drops its reference). A sorted array,
  // not a tree, so that copy is one allocation and a memcpy: a file holds tens of thousands of
  // short processes, and copying trees node by node was the largest single cost of replaying one.
  using Table = std::vector<Span>;
  std::unordered_map<int32_t, std::shared_ptr<Table>> maps_;
  static constexpr int32_t kKernelTable = -1;  // maps_'s key for the kernel (Mapping::pid)
  // FindIndex's memo, per process (direct-mapped by pid): the span its last lookup found.
  // Most samples of a process hit the mapping its previous one hit, while samples of a few
  // processes interleave. A process's entry is forgotten when its table changes (AddMapping,
  // OnFork, OnComm); an empty span (end 0) matches nothing.
  struct SpanMemo {
    int32_t pid = 0;
    Span span{0, 0, 0};
  };
  mutable SpanMemo memo_[256];
  SpanMemo& MemoFor(int32_t pid) const { return memo_[static_cast<uint32_t>(pid) % 256]; }
  void Forget(int32_t pid) { MemoFor(pid) = SpanMemo{}; }
  // The spans of maps_[kKernelTable] whose mapping is the kernel image: start -> index into
  // mappings_.
  std::map<uint64_t, size_t> kernel_images_;
  std::unordered_map<int32_t, std::string> comms_;
  // MMAP/MMAP2 offset -> the HEADER_BUILD_ID record right after it (the recorder's fallback).
  std::unordered_map<uint64_t, std::pair<std::string, BuildId>> followed_by_;
  SessionStats stats_;
  // AttrOf's memo of the reader's id lookup: each record is matched to its event twice,
  // and a file has only a few ids (one per event and CPU).
  struct AttrSlot {
    uint64_t id = 0;
    const EventAttr* attr = nullptr;
    bool valid = false;
  };
  AttrSlot attr_cache_[64];
};

}  // namespace pbid

#endif  // PBID_SESSION_H_
