// SPDX-License-Identifier: GPL-2.0
#include "pbid/session.h"

#include <algorithm>
#include <iterator>

#include "address_space.h"
#include "build_id_policy.h"
#include "ordered_records.h"

namespace pbid {

const char* IdentityKindName(IdentityKind k) {
  switch (k) {
    case IdentityKind::kGnu: return "gnu";
    case IdentityKind::kGo: return "go";
    case IdentityKind::kFileHash: return "file-hash";
    case IdentityKind::kNone: break;
  }
  return "none";
}

Identity BestIdentity(const std::optional<BuildId>& gnu, const FileIds& other) {
  if (gnu)
    return Identity{IdentityKind::kGnu, gnu->ToHex()};
  if (other.go_build_id)
    return Identity{IdentityKind::kGo, *other.go_build_id};
  if (other.file_hash)
    return Identity{IdentityKind::kFileHash, other.file_hash->ToHex()};
  return Identity{};
}

namespace {

bool IsMmap(const RecordView& r) {
  return r.header.type == PERF_RECORD_MMAP2 || r.header.type == PERF_RECORD_MMAP;
}

// The fields MMAP and MMAP2 records share.
template <typename MmapLike>
Mapping MappingFrom(const MmapLike& mm) {
  Mapping m;
  m.pid = static_cast<int32_t>(mm.pid);
  m.tid = mm.tid;
  m.start = mm.start;
  m.end = mm.start + mm.len;
  m.pgoff = mm.pgoff;
  m.path = std::string(mm.filename);
  m.time = mm.sample_id.time;
  return m;
}

Error AtRecord(const Error& e, const RecordView& r) {
  Error out = e;
  if (!out.has_offset())
    out.offset = r.offset;
  return out;
}

}  // namespace

using internal::AddressSpace;
using internal::Ordered;
using internal::Plan;

class Session::Impl {
 public:
  Impl(const PerfDataReader& reader, Order order) : reader_(reader), order_(order) {}
  Status Process(const SampleCallback& on_sample, const RecordCallback& on_record,
                 const RestartCallback& on_restart);

  // Process, in steps: the records in time order, then one handler per record type.
  // r's queue entry: its time, and with `decode` a sample's lookup key if it decodes.
  Ordered EntryFor(const RecordView& r, const EventAttr* attr, bool decode,
                   uint64_t last_time) const;
  Plan Survey();
  // The records in time order: at plan's flush points, or (plan == nullptr) streamed at
  // perf's rounds, setting *given_up instead if the file breaks what that presumes.
  Status Pass(const Plan* plan, const SampleCallback& on_sample, const RecordCallback& on_record,
              bool* given_up);
  // Keeps the policy's record of which mapping each PERF_RECORD_HEADER_BUILD_ID follows:
  // *prev_mmap is the offset of the record before r if it was a mapping. Runs for every record
  // of a stream: the rare case is out of line.
  void NoteBuildIdAfterMmap(const RecordView& r, uint64_t* prev_mmap) {
    if (r.header.type == kRecordHeaderBuildId && *prev_mmap != kNoOffset)
      FollowedBy(r, *prev_mmap);
    *prev_mmap = IsMmap(r) ? r.offset : kNoOffset;
  }
  void FollowedBy(const RecordView& build_id, uint64_t mmap_offset);
  // Forgets everything replayed, for a survey after a stream was given up.
  void Reset();
  // Runs twice for every record: the memo's hit is inline.
  const EventAttr* AttrOf(const RecordView& r) {
    if (reader_.attrs().size() <= 1)
      return reader_.AttrForRecord(r);
    // The reader's answer depends on the record's event id alone.
    uint64_t id = RecordEventId(r, reader_.id_place());
    AttrSlot& slot = attr_cache_[id % std::size(attr_cache_)];
    if (!slot.valid || slot.id != id)
      slot = AttrSlot{id, reader_.AttrForRecord(r), true};
    return slot.attr;
  }
  uint64_t RecordTime(const RecordView& r, const EventAttr* attr, uint64_t last_time) const;
  // One record in its turn. A decoded sample (no callback wants it) needs only its lookup,
  // inline: most records of most files.
  Status Replay(const Ordered& e, const SampleCallback& on_sample, const RecordCallback& on_record,
                uint64_t* first_unknown, uint64_t* first_unknown_id) {
    stats_.records++;
    if (e.decoded) {
      Hit(e.pid, e.ip, e.kernel);
      return Ok();
    }
    return ReplayRecord(e, on_sample, on_record, first_unknown, first_unknown_id);
  }
  // The others: their handler, then the caller's callback.
  Status ReplayRecord(const Ordered& e, const SampleCallback& on_sample,
                      const RecordCallback& on_record, uint64_t* first_unknown,
                      uint64_t* first_unknown_id);
  // Written by the recorder, before the kernel's records (source 1. in session.h).
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

  const PerfDataReader& reader_;
  const Order order_;
  // The replay's state, from here to stats_: Reset() clears each (policy_ keeps the feature
  // sections).
  static constexpr uint64_t kNoOffset = UINT64_MAX;
  uint64_t finished_init_ = kNoOffset;  // offset of the first PERF_RECORD_FINISHED_INIT
  internal::BuildIdPolicy policy_;
  AddressSpace space_;
  SessionStats stats_;
  // AttrOf's memo of the reader's id lookup: each record is matched to its event twice,
  // and a file has only a few ids (one per event and CPU).
  struct AttrSlot {
    uint64_t id = 0;
    const EventAttr* attr = nullptr;
    bool valid = false;
  };
  AttrSlot attr_cache_[64];
  // Where each attr's samples keep their key, by index in the reader's attrs().
  std::vector<SampleKeyPlace> key_places_;
};

Session::Session(const PerfDataReader& reader, Order order)
    : impl_(std::make_unique<Impl>(reader, order)) {}
Session::~Session() = default;

Status Session::Process(const SampleCallback& on_sample, const RecordCallback& on_record,
                        const RestartCallback& on_restart) {
  return impl_->Process(on_sample, on_record, on_restart);
}
const std::deque<Mapping>& Session::mappings() const {
  return impl_->space_.mappings();
}
const std::vector<Dso>& Session::dsos() const {
  return impl_->policy_.dsos();
}
const SessionStats& Session::stats() const {
  return impl_->stats_;
}
std::string Session::CommOf(int32_t pid) const {
  return impl_->space_.CommOf(pid);
}
const Mapping* Session::Find(int32_t pid, uint64_t ip, bool kernel) const {
  return impl_->space_.Find(pid, ip, kernel);
}

// A record's time for the replay order: a sample's own, else its sample_id's; a record that has
// none (or does not decode) keeps the time of the record before it in the file.
uint64_t Session::Impl::RecordTime(const RecordView& r, const EventAttr* attr,
                                   uint64_t last_time) const {
  if (attr == nullptr)
    return last_time;
  std::optional<uint64_t> t;
  if (r.header.type == PERF_RECORD_SAMPLE)
    t = SampleTime(r, *attr);
  else if (r.header.type < kRecordHeaderAttr && (attr->attr.sample_type & PERF_SAMPLE_TIME))
    t = SampleIdTime(r, *attr);
  return t.value_or(last_time);
}

// The survey: file order, nothing held per record (see internal::Survey). A record whose header
// does not fit ends the survey: the pass that follows stops at the same record, with its error.
Plan Session::Impl::Survey() {
  internal::Survey survey;
  uint64_t last_time = 0;
  // Each pass starts with none of the file resident: the pass before may have left up to
  // kReleasePagesEvery of it.
  reader_.ReleasePages();
  PerfDataReader::PageReleaser pages(reader_);
  stats_.passes++;
  uint64_t prev_mmap = kNoOffset;
  (void)reader_.ForEachRecord([&](const RecordView& r) {
    pages.Read(r.header.size);
    if (r.header.type == kRecordFinishedInit && finished_init_ == kNoOffset)
      finished_init_ = r.offset;
    // The replay may queue a mapping (a straggler) before it reads the record after it.
    NoteBuildIdAfterMmap(r, &prev_mmap);
    uint64_t time = RecordTime(r, AttrOf(r), last_time);
    last_time = time;
    survey.Add(r, time);
    return Ok();
  });
  return survey.Finish();
}

void Session::Impl::FollowedBy(const RecordView& build_id, uint64_t mmap_offset) {
  auto b = ParseHeaderBuildId(build_id);
  if (b.ok())
    policy_.FollowedBy(mmap_offset, std::string(b->filename), b->build_id);
}

void Session::Impl::Reset() {
  finished_init_ = kNoOffset;
  policy_.Clear();
  space_.Clear();
  uint64_t passes = stats_.passes;
  stats_ = SessionStats{};
  stats_.passes = passes;
}

Status Session::Impl::Process(const SampleCallback& on_sample, const RecordCallback& on_record,
                              const RestartCallback& on_restart) {
  if (reader_.file_size() >= (uint64_t{1} << internal::kOffsetBits)) {
    return Error::Of(ErrorKind::kUnsupported, "data",
                     "file of " + std::to_string(reader_.file_size()) +
                         " bytes: the replay handles up to 128 TiB");
  }
  policy_.Load(reader_.features());
  key_places_.clear();
  for (const EventAttr& a : reader_.attrs())
    key_places_.push_back(SampleKeyPlaceOf(a));
  if (order_ == Order::kStream && ((!on_sample && !on_record) || on_restart)) {
    bool given_up = false;
    Status st = Pass(nullptr, on_sample, on_record, &given_up);
    if (!given_up)
      return st;
    Reset();
    if (on_restart)
      on_restart();
  }
  Plan plan = Survey();
  return Pass(&plan, on_sample, on_record, nullptr);
}

Status Session::Impl::Pass(const Plan* plan, const SampleCallback& on_sample,
                           const RecordCallback& on_record, bool* given_up) {
  // A stream holds no more than this many records (sizeof(Ordered) each) before it gives up.
  constexpr size_t kMaxStreamed = size_t{1} << 20;
  stats_.passes++;
  uint64_t first_unknown = 0, first_unknown_id = 0;
  internal::OrderedQueue queue;
  reader_.ReleasePages();
  PerfDataReader::PageReleaser pages(reader_);
  bool replay_failed = false;
  auto flush = [&](uint64_t bound, uint64_t until) -> Status {
    Status st = queue.Flush(bound, until, [&](const Ordered& e) {
      if (!e.decoded)
        pages.Reread(e.offset);
      return Replay(e, on_sample, on_record, &first_unknown, &first_unknown_id);
    });
    if (!st.ok())
      replay_failed = true;
    return st;
  };
  size_t next_flush = 0;                                 // into plan->flushes
  size_t next_straggler = 0, next_straggler_offset = 0;  // into plan->stragglers, _offsets
  const bool decode = !on_sample && !on_record;
  // A stream's rounds: the latest time read before the last round ended, and the highest bound
  // a flush has replayed up to (0 before the first: no time is below it).
  bool in_round = false, after_round = false;
  uint64_t latest = 0, latest_at_round = 0, flushed = 0;
  uint64_t last_time = 0;
  uint64_t prev_mmap = kNoOffset;
  bool gave_up = false;
  // Stops the walk; Pass returns Ok() with *given_up set, never this.
  auto give_up = [](const RecordView& r) { return Error("replay", r.offset, "stream given up"); };
  Status walked = reader_.ForEachRecord([&](const RecordView& r) -> Status {
    if (plan) {
      if (next_flush < plan->flushes.size() && plan->flushes[next_flush].offset == r.offset) {
        for (; next_straggler < plan->stragglers.size() &&
               plan->stragglers[next_straggler].flush == next_flush;
             next_straggler++) {
          const internal::Straggler& s = plan->stragglers[next_straggler];
          RecordView late = reader_.RecordAt(s.offset);
          queue.Push(EntryFor(late, AttrOf(late), decode, s.time));
          stats_.max_queued = std::max<uint64_t>(stats_.max_queued, queue.size());
        }
        PBID_RETURN_IF_ERROR(flush(plan->flushes[next_flush++].bound, r.offset));
      }
    } else if (after_round) {
      // perf's rule: what a round holds is no older than the latest record before the previous
      // round ended.
      if (in_round) {
        // A record that fails here need not be the first to fail in time order: a later one in
        // the file may still sort before it, or a FINISHED_INIT change what it was. Only the
        // survey knows.
        if (!flush(latest_at_round, internal::kPastTheFile).ok())
          gave_up = true;
        flushed = latest_at_round;
      }
      latest_at_round = latest;
      in_round = true;
      if (gave_up)
        return give_up(r);
    }
    pages.Read(r.header.size);
    after_round = r.header.type == kRecordFinishedRound;
    if (r.header.type == kRecordFinishedInit && finished_init_ == kNoOffset) {
      // Records already replayed were judged as if the file had none.
      if (!plan && stats_.records > 0)
        gave_up = true;
      finished_init_ = r.offset;
    }
    const EventAttr* attr = AttrOf(r);
    Ordered e = EntryFor(r, attr, decode, last_time);
    uint64_t time = e.time;
    last_time = time;
    if (!plan) {
      if (time < flushed)
        gave_up = true;  // older than what was replayed: perf would warn and go on
      latest = std::max(latest, time);
    }
    if (!plan)  // the survey saw them all
      NoteBuildIdAfterMmap(r, &prev_mmap);
    if (plan && next_straggler_offset < plan->straggler_offsets.size() &&
        plan->straggler_offsets[next_straggler_offset] == r.offset) {
      next_straggler_offset++;  // queued already
      return Ok();
    }
    queue.Push(e);
    stats_.max_queued = std::max<uint64_t>(stats_.max_queued, queue.size());
    if (!plan && queue.size() > kMaxStreamed)
      gave_up = true;
    if (gave_up)
      return give_up(r);
    return Ok();
  });
  if (gave_up) {
    *given_up = true;
    return Ok();
  }
  if (replay_failed)
    return walked;
  // Everything before a record that does not fit is delivered before its error.
  PBID_RETURN_IF_ERROR(flush(UINT64_MAX, internal::kPastTheFile));
  if (!walked.ok())
    return walked;
  if (stats_.unknown_id > 0) {
    return Error("record.id", first_unknown,
                 std::to_string(stats_.unknown_id) +
                     " records carry an event id that no event in the header owns (first: id " +
                     std::to_string(first_unknown_id) + ")");
  }
  return Ok();
}

Ordered Session::Impl::EntryFor(const RecordView& r, const EventAttr* attr, bool decode,
                                uint64_t last_time) const {
  using internal::kAttrUnknown;
  uint64_t index = attr == nullptr ? kAttrUnknown : attr - reader_.attrs().data();
  Ordered e{0, r.offset, std::min(index, kAttrUnknown), 0, 0, 0, false};
  if (decode && index < key_places_.size() && r.header.type == PERF_RECORD_SAMPLE) {
    // Only if it decodes whole (ParseSampleKey checks what ParseSample would), so that a
    // sample that does not is left to fail in its turn, read again then. Its time is the
    // field RecordTime would read (0 when there is none).
    SampleKey key;
    if (ParseSampleKey(r, *attr, key_places_[index], &key)) {
      e.time = key.time;
      e.decoded = 1;
      e.ip = key.ip;
      e.pid = static_cast<int32_t>(key.pid);
      e.kernel = IsKernelCpumode(key.cpumode);
      return e;
    }
  }
  e.time = RecordTime(r, attr, last_time);
  return e;
}

Status Session::Impl::ReplayRecord(const Ordered& e, const SampleCallback& on_sample,
                                   const RecordCallback& on_record, uint64_t* first_unknown,
                                   uint64_t* first_unknown_id) {
  RecordView r = reader_.RecordAt(e.offset);
  const EventAttr* attr = e.attr != internal::kAttrUnknown ? &reader_.attrs()[e.attr] : AttrOf(r);
  if (attr == nullptr) {
    if (stats_.unknown_id++ == 0) {
      *first_unknown = r.offset;
      *first_unknown_id = RecordEventId(r, reader_.id_place());
    }
    return Ok();
  }
  const Mapping* added = nullptr;
  // Initialized, not assigned: a Status holds an Error, and this runs for every record.
  Status st = [&] {
    switch (r.header.type) {
      case PERF_RECORD_MMAP:
      case PERF_RECORD_MMAP2: return OnMmap(r, *attr, Synthesized(e), &added);
      case PERF_RECORD_COMM: return OnComm(r, *attr);
      case PERF_RECORD_FORK: return OnFork(r, *attr);
      case PERF_RECORD_SAMPLE: return OnSample(r, *attr, on_sample);
      default: return OnOther(r, *attr);
    }
  }();
  if (!st.ok())
    return AtRecord(st.error(), r);
  if (on_record) {
    size_t index = static_cast<size_t>(attr - reader_.attrs().data());
    on_record(RecordContext{r, *attr, index, added});
  }
  return Ok();
}

// The build ID of a mapping, from the first source that has one (see session.h).
Status Session::Impl::OnMmap(const RecordView& r, const EventAttr& attr, bool synth,
                             const Mapping** added) {
  Mapping m;
  std::optional<BuildId> rec_id;
  if (r.header.type == PERF_RECORD_MMAP2) {
    PBID_ASSIGN_OR_RETURN(Mmap2Record mm, ParseMmap2(r, &attr));
    m = MappingFrom(mm);
    m.prot = mm.prot;
    m.flags = mm.flags;
    m.maj = mm.maj;
    m.min = mm.min;
    m.ino = mm.ino;
    if (mm.has_build_id)
      rec_id = mm.build_id;
  } else {
    PBID_ASSIGN_OR_RETURN(MmapRecord mm, ParseMmap(r, &attr));
    m = MappingFrom(mm);
  }
  m.kernel = IsKernelCpumode(r.header.misc & kMiscCpumodeMask);
  if (m.kernel)
    m.pid = AddressSpace::kKernelTable;
  m.record_offset = r.offset;
  policy_.Resolve(&m, rec_id, synth);
  // Empty ranges add nothing.
  if (m.end <= m.start)
    return Ok();
  m.dso = policy_.DsoFor(m);
  size_t idx = space_.Add(std::move(m));
  const Mapping& a = space_[idx];
  *added = &a;
  stats_.mmaps++;
  stats_.mappings_by_source[a.source]++;
  return Ok();
}
Status Session::Impl::OnComm(const RecordView& r, const EventAttr& attr) {
  PBID_ASSIGN_OR_RETURN(CommRecord c, ParseComm(r, &attr));
  int32_t pid = static_cast<int32_t>(c.pid);
  space_.SetComm(pid, c.pid == c.tid || c.exec, std::string(c.comm));
  // exec gave the process a new address space, and the kernel reports the exec before it maps
  // the program: its old mappings name code it can no longer run, and the mappings that follow
  // start an empty table (a child of a fork need not copy its parent's). Only when the COMM has
  // a time: otherwise it keeps its place in the file relative to the MMAP2 records, and a task
  // that moved to another CPU during the exec can have its program's MMAP2 before its COMM.
  if (c.exec && (c.sample_id.fields & PERF_SAMPLE_TIME))
    space_.Exec(pid);
  return Ok();
}

Status Session::Impl::OnFork(const RecordView& r, const EventAttr& attr) {
  PBID_ASSIGN_OR_RETURN(TaskRecord t, ParseTask(r, &attr));
  space_.Fork(t.pid, t.ppid);
  return Ok();
}

Status Session::Impl::OnSample(const RecordView& r, const EventAttr& attr,
                               const SampleCallback& on_sample) {
  PBID_ASSIGN_OR_RETURN(SampleRecord s, ParseSample(r, attr));
  const Mapping* m = Hit(static_cast<int32_t>(s.sample_id.pid), s.ip, IsKernelCpumode(s.cpumode));
  if (on_sample)
    on_sample(SampleContext{s, attr, m, r});
  return Ok();
}

const Mapping* Session::Impl::Hit(int32_t pid, uint64_t ip, bool kernel) {
  stats_.samples++;
  size_t idx = space_.FindIndex(pid, ip, kernel);
  if (idx == AddressSpace::kNoMapping) {
    stats_.unresolved++;
    return nullptr;
  }
  Mapping& hit = space_[idx];
  hit.samples++;
  policy_.dso(hit.dso).samples++;
  return &hit;
}

// Records that only count, and the kernel's records the session keeps nothing of: those are
// checked by their row of the record-type table (EXIT, for one), so that the replay of a file
// fails on any kernel record that does not decode. perf's own records are the reader's.
Status Session::Impl::OnOther(const RecordView& r, const EventAttr& attr) {
  switch (r.header.type) {
    case PERF_RECORD_LOST: {
      PBID_ASSIGN_OR_RETURN(LostRecord l, ParseLost(r, &attr));
      stats_.lost += l.lost;
      break;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      PBID_ASSIGN_OR_RETURN(LostSamplesRecord l, ParseLostSamples(r, &attr));
      stats_.lost_samples += l.lost;
      break;
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      PBID_ASSIGN_OR_RETURN(ThrottleRecord t, ParseThrottle(r, &attr));
      (void)t;
      stats_.throttle++;
      break;
    }
    default: {
      const RecordType* t = RecordTypeOf(r.header.type);
      if (t && t->check && r.header.type < kRecordHeaderAttr)
        return t->check(r, &attr);
      break;
    }
  }
  return Ok();
}

}  // namespace pbid
