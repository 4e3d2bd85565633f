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
// Independently of these, each mapping gets the other identities the recorder read from its
// file (kFeatPbidFileIds, matched like 3.): its Go build ID and its file hash.
#ifndef PBID_SESSION_H_
#define PBID_SESSION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {

// What names a mapped file, best first: its GNU build ID, else its Go build ID, else its file
// hash (OpenTelemetry's htlhash, pbid/file_hash.h). Each one is the kind's own value:
// never one written where another is expected.
enum class IdentityKind : uint8_t { kNone, kGnu, kGo, kFileHash };
// "gnu", "go", "file-hash", "none"
const char* IdentityKindName(IdentityKind k);
struct Identity {
  IdentityKind kind = IdentityKind::kNone;
  std::string value;  // hex for gnu and file-hash, the Go build ID string for go; "" for none
};
Identity BestIdentity(const std::optional<BuildId>& gnu, const FileIds& other);

struct Mapping {
  int32_t pid = 0;  // -1 for kernel mappings
  uint32_t tid = 0;
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t prot = 0, flags = 0;  // 0 when the record was an MMAP (v1)
  bool kernel = false;           // the record's cpumode was kernel
  std::string path;
  std::optional<BuildId> build_id;
  BuildIdSource source = BuildIdSource::kNone;
  FileIds file_ids;           // Go build ID and file hash, from kFeatPbidFileIds
  uint32_t maj = 0, min = 0;  // from MMAP2 records without a build id
  uint64_t ino = 0;
  uint64_t time = 0;           // sample_id.time of the record, 0 if absent
  uint64_t record_offset = 0;  // file offset of the MMAP/MMAP2 record
  uint64_t samples = 0;        // samples whose ip fell into this mapping
  size_t dso = 0;              // index into Session::dsos()
};

// One file (or [kernel.kallsyms], [vdso], ...) as perf's DSO list sees it: mappings with the
// same path and build id share it (without a build id: the same path and other identities).
struct Dso {
  std::string path;
  std::optional<BuildId> build_id;
  BuildIdSource source = BuildIdSource::kNone;
  FileIds file_ids;
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
  //     With callbacks only when the caller can take back what they were given (on_restart,
  //     below); otherwise kStream with callbacks surveys.
  //   kSurvey: a first pass finds, for each point where the replay may flush, the earliest time
  //     of anything after it; the second replays.
  enum class Order { kStream, kSurvey };
  explicit Session(const PerfDataReader& reader, Order order = Order::kStream);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Replays all records; call it once. A record whose header does not fit in the file stops
  // processing with an error naming its offset, after everything before it in the file; a
  // record that fails to decode, after everything before it in time order. Records whose
  // event id no attr owns cannot be decoded: they are counted and skipped, and Process() then
  // fails naming the count and the first one (perf stops on them with "failed to process
  // type").
  // on_record, if given, sees every record (after the session handled it) in time order.
  // The order is a stable sort of the whole file by time, but a record is held only until no
  // later one can sort before it: about a round of a file perf wrote (see Order).
  // on_restart, if given, lets kStream stream with callbacks: it is called when the stream is
  // given up, after some records were given to the callbacks, and before the survey gives them
  // every record again from the start. It must forget all they were given.
  using SampleCallback = std::function<void(const SampleContext&)>;
  using RecordCallback = std::function<void(const RecordContext&)>;
  using RestartCallback = std::function<void()>;
  Status Process(const SampleCallback& on_sample = nullptr,
                 const RecordCallback& on_record = nullptr,
                 const RestartCallback& on_restart = nullptr);

  const std::deque<Mapping>& mappings() const;
  const std::vector<Dso>& dsos() const;
  const SessionStats& stats() const;
  std::string CommOf(int32_t pid) const;

  // The mapping that contains ip in process pid (kernel: the kernel's mappings; the kernel
  // image map extends to the end of the address space, as in perf). Inside a callback this is
  // the state at that record's time; after Process() the state at the end of the file.
  // It remembers the last process it looked up: one thread at a time.
  const Mapping* Find(int32_t pid, uint64_t ip, bool kernel) const;

 private:
  // The replay: the ordered-record stream, the address-space model and the build-id policy
  // (lib/ordered_records.h, lib/address_space.h, lib/build_id_policy.h) tied together.
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbid

#endif  // PBID_SESSION_H_
