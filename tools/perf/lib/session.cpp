// SPDX-License-Identifier: GPL-2.0
#include "pbid/session.h"

#include <algorithm>
#include <iterator>

namespace pbid {

namespace {

bool IsMmap(const RecordView& r) {
  return r.header.type == PERF_RECORD_MMAP2 || r.header.type == PERF_RECORD_MMAP;
}

// "[kernel.kallsyms]" and perf's "[kernel.kallsyms]_text".
bool IsKernelImage(const std::string& path) {
  return path.rfind(kKernelDsoName, 0) == 0;
}

// The DSO (and build-ID table) name of a mapping: the kernel image under perf's one name.
std::string DsoPath(const Mapping& m) {
  return m.kernel && IsKernelImage(m.path) ? std::string(kKernelDsoName) : m.path;
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

// Sorts *v, which is made of ascending runs starting at the indices in *runs (ascending,
// (*runs)[0] == 0), by merging neighbouring runs until one is left. Each per-CPU stretch of a
// round arrives in order already, so a round is a few runs: a pass or two of merging, where a
// sort would compare every record about log2(round) times.
template <typename T, typename Less>
void MergeRuns(std::vector<T>* v, std::vector<size_t>* runs, std::vector<T>* buf, Less less) {
  while (runs->size() > 1) {
    buf->clear();
    size_t k = 0;
    for (size_t i = 0; i < runs->size(); i += 2) {
      size_t a = (*runs)[i];
      size_t mid = i + 1 < runs->size() ? (*runs)[i + 1] : v->size();
      size_t end = i + 2 < runs->size() ? (*runs)[i + 2] : v->size();
      (*runs)[k++] = a;  // what came before was copied to buf: the run starts at the same index
      std::merge(v->begin() + a, v->begin() + mid, v->begin() + mid, v->begin() + end,
                 std::back_inserter(*buf), less);
    }
    runs->resize(k);
    v->swap(*buf);
  }
}

Error AtRecord(const Error& e, const RecordView& r) {
  Error out = e;
  if (!out.has_offset())
    out.offset = r.offset;
  return out;
}

}  // namespace

std::string Session::CommOf(int32_t pid) const {
  auto it = comms_.find(pid);
  if (it != comms_.end())
    return it->second;
  if (pid <= 0)
    return "swapper";  // perf's name for the idle task and kernel records
  return ":" + std::to_string(pid);
}

size_t Session::DsoFor(const Mapping& m) {
  std::string path = DsoPath(m);
  std::vector<size_t>& same_path = dsos_by_path_[path];
  for (size_t i : same_path) {
    if (dsos_[i].build_id == m.build_id)
      return i;
  }
  Dso d;
  d.path = std::move(path);
  d.build_id = m.build_id;
  d.source = m.source;
  d.kernel = m.kernel;
  dsos_.push_back(std::move(d));
  same_path.push_back(dsos_.size() - 1);
  return dsos_.size() - 1;
}

void Session::AddMapping(Mapping m, const Mapping** added) {
  if (m.end <= m.start)
    return;
  m.dso = DsoFor(m);
  mappings_.push_back(m);
  size_t idx = mappings_.size() - 1;
  *added = &mappings_[idx];
  stats_.mmaps++;
  stats_.mappings_by_source[m.source]++;
  Forget(m.pid);
  // A new mapping replaces whatever it overlaps; pieces of old mappings outside it survive.
  // The first mapping of a table is most often an exec's: the program, its interpreter and
  // its libraries follow, a span or two each. Room for them spares the table a doubling (which
  // most tables never fill) in each of a file's many short processes.
  constexpr size_t kSpansOfAProgram = 16;
  std::shared_ptr<Table>& slot = maps_[m.pid];
  if (!slot) {
    slot = std::make_shared<Table>();
    slot->reserve(kSpansOfAProgram);
  } else if (slot.use_count() > 1) {
    // Copy on write: a child that maps something before it execs, or its parent after the fork.
    auto copy = std::make_shared<Table>();
    copy->reserve(slot->size() + kSpansOfAProgram);
    copy->assign(slot->begin(), slot->end());
    slot = std::move(copy);
  }
  Table& table = *slot;
  // The kernel's table keeps its kernel-image spans indexed too, for Find's fallback.
  bool kernel_table = m.pid == kKernelTable;
  // [first, last): the spans it overlaps. Only the span before the first one starting at or
  // after m.start can reach into it from below.
  auto first = std::lower_bound(table.begin(), table.end(), m.start,
                                [](const Span& s, uint64_t a) { return s.start < a; });
  if (first != table.begin() && std::prev(first)->end > m.start)
    --first;
  auto last = first;
  while (last != table.end() && last->start < m.end)
    ++last;
  // What replaces them, in address order: a piece of the first from below, the new mapping, a
  // piece of the last from above.
  Span pieces[3];
  size_t n = 0;
  if (first != last && first->start < m.start)
    pieces[n++] = Span{first->start, m.start, first->idx};
  pieces[n++] = Span{m.start, m.end, idx};
  if (first != last && std::prev(last)->end > m.end)
    pieces[n++] = Span{m.end, std::prev(last)->end, std::prev(last)->idx};
  if (kernel_table) {
    for (auto it = first; it != last; ++it)
      kernel_images_.erase(it->start);
    for (size_t i = 0; i < n; i++) {
      if (IsKernelImage(mappings_[pieces[i].idx].path))
        kernel_images_[pieces[i].start] = pieces[i].idx;
    }
  }
  // Overwrite the overlapped spans in place, then insert or erase the difference. The move of
  // the spans above is linear in the table's size: a process maps hundreds of files, not the
  // tens of thousands that would make a tree worth its per-node cost.
  size_t overlapped = static_cast<size_t>(last - first);
  size_t pos = static_cast<size_t>(first - table.begin());
  if (overlapped < n)
    table.insert(last, n - overlapped, Span{});
  else
    table.erase(first + static_cast<std::ptrdiff_t>(n), last);
  std::copy(pieces, pieces + n, table.begin() + static_cast<std::ptrdiff_t>(pos));
}

const Mapping* Session::Find(int32_t pid, uint64_t ip, bool kernel) const {
  size_t idx = FindIndex(pid, ip, kernel);
  return idx == kNoMapping ? nullptr : &mappings_[idx];
}

size_t Session::FindIndex(int32_t pid, uint64_t ip, bool kernel) const {
  int32_t key = kernel ? kKernelTable : pid;
  SpanMemo& memo = MemoFor(key);
  if (memo.pid == key && ip >= memo.span.start && ip < memo.span.end)
    return memo.span.idx;
  auto t = maps_.find(key);
  if (t == maps_.end())
    return kNoMapping;
  const Table& table = *t->second;
  auto it = std::upper_bound(table.begin(), table.end(), ip,
                             [](uint64_t a, const Span& s) { return a < s.start; });
  if (it != table.begin()) {
    --it;
    if (ip < it->end) {
      memo = SpanMemo{key, *it};
      return it->idx;
    }
  }
  if (!kernel)
    return kNoMapping;
  // perf extends the kernel image map up to the end of the address space (modules aside): the
  // kernel-image span with the highest start at or below ip, found in its own index so that a
  // sample outside every mapping does not walk them all.
  auto k = kernel_images_.upper_bound(ip);
  if (k == kernel_images_.begin())
    return kNoMapping;
  return std::prev(k)->second;
}

const EventAttr* Session::AttrOf(const RecordView& r) {
  const std::vector<EventAttr>& attrs = reader_.attrs();
  if (attrs.size() <= 1)
    return reader_.AttrForRecord(r);
  // The reader's answer depends on the record's event id alone.
  uint64_t id = RecordEventId(r, reader_.id_place());
  AttrSlot& slot = attr_cache_[id % std::size(attr_cache_)];
  if (!slot.valid || slot.id != id)
    slot = AttrSlot{id, reader_.AttrForRecord(r), true};
  return slot.attr;
}

// A record's time for the replay order: a sample's own, else its sample_id's; a record that has
// none (or does not decode) keeps the time of the record before it in the file.
uint64_t Session::RecordTime(const RecordView& r, const EventAttr* attr, uint64_t last_time) const {
  if (attr == nullptr)
    return last_time;
  std::optional<uint64_t> t;
  if (r.header.type == PERF_RECORD_SAMPLE)
    t = SampleTime(r, *attr);
  else if (r.header.type < kRecordHeaderAttr && (attr->attr.sample_type & PERF_SAMPLE_TIME))
    t = SampleIdTime(r, *attr);
  return t.value_or(last_time);
}

// Where a replay may flush in a surveyed pass: after every PERF_RECORD_FINISHED_ROUND (perf's
// rounds) and, for files without them, every kRecordsPerFlush records, but never right before
// a PERF_RECORD_HEADER_BUILD_ID: that belongs to the record before it, whose replay needs it.
class Session::Cuts {
 public:
  bool Before(const RecordView& r) {
    static constexpr uint64_t kRecordsPerFlush = 1024;
    bool cut =
        (after_round_ || in_chunk_ >= kRecordsPerFlush) && r.header.type != kRecordHeaderBuildId;
    if (cut) {
      after_round_ = false;
      in_chunk_ = 0;
    }
    in_chunk_++;
    if (r.header.type == kRecordFinishedRound)
      after_round_ = true;
    return cut;
  }

 private:
  bool after_round_ = false;
  uint64_t in_chunk_ = 0;
};

// The survey: file order, nothing held per record. Each flush point's bound is the earliest
// time of everything after it, so a record at or below it can be replayed at once: nothing
// later in the file sorts before it. The replay is then exactly a stable sort of the whole
// file by time, whether or not the file keeps perf's promise that a round never reaches back
// before the one that precedes it. A record whose header does not fit ends the survey: the
// pass that follows stops at the same record, with its error.
//
// A record that reaches back past more than kStragglerReach records (a task preempted between
// taking its timestamp and writing its record, on a loaded machine) would bound every flush
// point since its time, and keep all the records since then in the queue until it is read. It
// is a straggler instead: left out of the bounds, and queued by the replay at the first flush
// point with a later record before it, where no record before that point sorts after it. The
// queue then holds at most kStragglerReach records and a flush's worth. A file where a whole
// stream of records lags (a CPU's buffer read that late, every time) is held as before once
// kStragglerReach of them are listed: the plan is kept from growing with the file too.
Session::Plan Session::Survey() {
  static constexpr uint64_t kStragglerReach = uint64_t{1} << 16;
  Plan plan;
  uint64_t last_time = 0;
  Cuts cuts;
  // Until the backward pass below, a point's bound is the earliest time up to the next point.
  uint64_t chunk_min = UINT64_MAX;
  // Per flush point: the latest time of the records before it (ascending), and their number.
  std::vector<uint64_t> latest_before, records_before;
  uint64_t latest = 0, records = 0;
  uint64_t prev_mmap = kNoOffset;
  // Each pass starts with none of the file resident: the pass before may have left up to
  // kReleasePagesEvery of it.
  reader_.ReleasePages();
  PerfDataReader::PageReleaser pages(reader_);
  stats_.passes++;
  (void)reader_.ForEachRecord([&](const RecordView& r) {
    pages.Read(r.header.size);
    if (cuts.Before(r)) {
      if (!plan.flushes.empty())
        plan.flushes.back().bound = chunk_min;
      plan.flushes.push_back(FlushPoint{r.offset, UINT64_MAX});
      latest_before.push_back(latest);
      records_before.push_back(records);
      chunk_min = UINT64_MAX;
    }
    if (r.header.type == kRecordFinishedInit && finished_init_ == kNoOffset)
      finished_init_ = r.offset;
    // The replay may queue a mapping before it reads the record after it.
    NoteBuildIdAfterMmap(r, &prev_mmap);
    uint64_t time = RecordTime(r, AttrOf(r), last_time);
    last_time = time;
    records++;
    if (!latest_before.empty() && time < latest_before.back() &&
        plan.stragglers.size() < kStragglerReach) {
      size_t k =
          static_cast<size_t>(std::upper_bound(latest_before.begin(), latest_before.end(), time) -
                              latest_before.begin());
      if (records - records_before[k] > kStragglerReach) {
        plan.stragglers.push_back(Straggler{r.offset, time, k});
        plan.straggler_offsets.push_back(r.offset);
        return Ok();
      }
    }
    latest = std::max(latest, time);
    chunk_min = std::min(chunk_min, time);
    return Ok();
  });
  if (!plan.flushes.empty())
    plan.flushes.back().bound = chunk_min;
  uint64_t after = UINT64_MAX;
  for (auto it = plan.flushes.rbegin(); it != plan.flushes.rend(); ++it) {
    after = std::min(after, it->bound);
    it->bound = after;
  }
  std::stable_sort(plan.stragglers.begin(), plan.stragglers.end(),
                   [](const Straggler& a, const Straggler& b) { return a.flush < b.flush; });
  return plan;
}

void Session::NoteBuildIdAfterMmap(const RecordView& r, uint64_t* prev_mmap) {
  if (r.header.type == kRecordHeaderBuildId && *prev_mmap != kNoOffset) {
    auto b = ParseHeaderBuildId(r);
    if (b.ok())
      followed_by_[*prev_mmap] = {std::string(b->filename), b->build_id};
  }
  *prev_mmap = IsMmap(r) ? r.offset : kNoOffset;
}

void Session::Reset() {
  finished_init_ = kNoOffset;
  mappings_.clear();
  dsos_.clear();
  dsos_by_path_.clear();
  maps_.clear();
  std::fill(std::begin(memo_), std::end(memo_), SpanMemo{});
  kernel_images_.clear();
  comms_.clear();
  followed_by_.clear();
  uint64_t passes = stats_.passes;
  stats_ = SessionStats{};
  stats_.passes = passes;
}

Status Session::Process(const SampleCallback& on_sample, const RecordCallback& on_record) {
  if (reader_.file_size() >= (uint64_t{1} << kOffsetBits)) {
    return Error::Of(ErrorKind::kUnsupported, "data",
                     "file of " + std::to_string(reader_.file_size()) +
                         " bytes: the replay handles up to 128 TiB");
  }
  if (reader_.features().build_ids) {
    for (const BuildIdEntry& e : *reader_.features().build_ids)
      table_[e.filename] = e.build_id;
  }
  if (reader_.features().mapping_ids) {
    for (const MappingIdEntry& e : *reader_.features().mapping_ids)
      later_ids_[MappingKey{e.pid, e.start, e.pgoff, e.time}] = &e;
  }
  if (order_ == Order::kStream && !on_sample && !on_record) {
    bool given_up = false;
    Status st = Pass(nullptr, nullptr, nullptr, &given_up);
    if (!given_up)
      return st;
    Reset();
  }
  Plan plan = Survey();
  return Pass(&plan, on_sample, on_record, nullptr);
}

Status Session::Pass(const Plan* plan, const SampleCallback& on_sample,
                     const RecordCallback& on_record, bool* given_up) {
  // A stream holds no more than this many records (sizeof(Ordered) each) before it gives up.
  constexpr size_t kMaxStreamed = size_t{1} << 20;
  stats_.passes++;
  uint64_t first_unknown = 0, first_unknown_id = 0;
  // Ordered by (time, file offset): equal times replay in file order, as a stable sort.
  auto before = [](const Ordered& a, const Ordered& b) {
    return a.time != b.time ? a.time < b.time : a.offset < b.offset;
  };
  // The queue: `held`, sorted, what earlier flushes left from index `head` on, and `fresh`, the
  // records queued since, a sequence of ascending runs each starting at an index in `runs`. A
  // flush merges the runs of `fresh` alone, replays from both in order, and merges what is left
  // of `fresh` into the end of `held` where they overlap: its cost follows what was queued and
  // replayed since the last flush, not what a record far back keeps waiting. The buffers are
  // kept from one flush to the next.
  std::vector<Ordered> held, fresh, merged;
  size_t head = 0;
  std::vector<size_t> runs;
  auto queue = [&](const Ordered& e) {
    if (fresh.empty() || before(e, fresh.back()))
      runs.push_back(fresh.size());
    fresh.push_back(e);
    stats_.max_queued = std::max<uint64_t>(stats_.max_queued, held.size() - head + fresh.size());
  };
  reader_.ReleasePages();
  PerfDataReader::PageReleaser pages(reader_);
  bool replay_failed = false;
  // Replays every queued record that sorts before time `bound` at file offset `until`: the
  // first record that is not queued yet can sort no earlier.
  auto flush = [&](uint64_t bound, uint64_t until) -> Status {
    MergeRuns(&fresh, &runs, &merged, before);
    Ordered limit{bound, until, 0, 0, 0, 0, false};
    size_t f = 0;
    for (;;) {
      bool from_held = head < held.size() && (f == fresh.size() || before(held[head], fresh[f]));
      if (!from_held && f == fresh.size())
        break;
      const Ordered& e = from_held ? held[head] : fresh[f];
      if (!before(e, limit))
        break;
      if (!e.decoded)
        pages.Reread(e.offset);
      Status st = Replay(e, on_sample, on_record, &first_unknown, &first_unknown_id);
      if (!st.ok()) {
        replay_failed = true;
        return st;
      }
      (from_held ? head : f)++;
    }
    if (f < fresh.size()) {
      auto from = std::upper_bound(held.begin() + static_cast<std::ptrdiff_t>(head), held.end(),
                                   fresh[f], before);
      merged.clear();
      std::merge(from, held.end(), fresh.begin() + static_cast<std::ptrdiff_t>(f), fresh.end(),
                 std::back_inserter(merged), before);
      held.erase(from, held.end());
      held.insert(held.end(), merged.begin(), merged.end());
    }
    fresh.clear();
    runs.clear();
    // The replayed front goes once it is half of `held`: each record is moved about once.
    if (head > held.size() / 2) {
      held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    return Ok();
  };
  // Above every offset (Process refuses files larger than kOffsetBits can hold).
  constexpr uint64_t kPastTheFile = (uint64_t{1} << kOffsetBits) - 1;
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
          const Straggler& s = plan->stragglers[next_straggler];
          RecordView late = reader_.RecordAt(s.offset);
          queue(EntryFor(late, AttrOf(late), decode, s.time));
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
        if (!flush(latest_at_round, kPastTheFile).ok())
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
    queue(e);
    if (!plan && held.size() - head + fresh.size() > kMaxStreamed)
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
  PBID_RETURN_IF_ERROR(flush(UINT64_MAX, kPastTheFile));
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

Session::Ordered Session::EntryFor(const RecordView& r, const EventAttr* attr, bool decode,
                                   uint64_t last_time) const {
  uint64_t index = attr == nullptr ? kAttrUnknown : attr - reader_.attrs().data();
  Ordered e{0, r.offset, std::min(index, kAttrUnknown), 0, 0, 0, false};
  if (decode && index < kAttrUnknown && r.header.type == PERF_RECORD_SAMPLE) {
    // Decoded whole, so that a sample that does not decode is left to fail in its turn, read
    // again then. Its time is the field RecordTime would read (0 when there is none).
    Result<SampleRecord> s = ParseSample(r, *attr);
    if (s.ok()) {
      e.time = s->sample_id.time;
      e.decoded = 1;
      e.ip = s->ip;
      e.pid = static_cast<int32_t>(s->sample_id.pid);
      e.kernel = IsKernelCpumode(s->cpumode);
      return e;
    }
  }
  e.time = RecordTime(r, attr, last_time);
  return e;
}

// One record in its turn: its handler, then the caller's callback.
Status Session::Replay(const Ordered& e, const SampleCallback& on_sample,
                       const RecordCallback& on_record, uint64_t* first_unknown,
                       uint64_t* first_unknown_id) {
  stats_.records++;
  if (e.decoded) {  // no callback wants it: what it hit is all there is to do
    Hit(e.pid, e.ip, e.kernel);
    return Ok();
  }
  RecordView r = reader_.RecordAt(e.offset);
  const EventAttr* attr = e.attr != kAttrUnknown ? &reader_.attrs()[e.attr] : AttrOf(r);
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
Status Session::OnMmap(const RecordView& r, const EventAttr& attr, bool synth,
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
    m.pid = kKernelTable;
  m.record_offset = r.offset;
  const MappingIdEntry* later = nullptr;
  if (!rec_id && !later_ids_.empty()) {
    auto l = later_ids_.find(MappingKey{static_cast<uint32_t>(m.pid), m.start, m.pgoff, m.time});
    if (l != later_ids_.end())
      later = l->second;
  }
  if (rec_id) {
    m.build_id = rec_id;
    m.source = synth ? BuildIdSource::kSynthesized : BuildIdSource::kKernelRecord;
  } else if (later && later->kind == MappingIdEntry::Kind::kDisputed) {
    // Two sources disagreed: a wrong id is worse than none.
  } else if (auto f = followed_by_.find(r.offset);
             f != followed_by_.end() && f->second.first == m.path) {
    m.build_id = f->second.second;
    m.source = synth ? BuildIdSource::kSynthesized : BuildIdSource::kFile;
  } else if (later) {
    m.build_id = later->build_id;
    m.source = BuildIdSource::kBpf;
  } else if (auto t = table_.find(DsoPath(m)); t != table_.end()) {
    m.build_id = t->second;
    m.source = BuildIdSource::kFile;
  }
  AddMapping(std::move(m), added);
  return Ok();
}

Status Session::OnComm(const RecordView& r, const EventAttr& attr) {
  PBID_ASSIGN_OR_RETURN(CommRecord c, ParseComm(r, &attr));
  if (c.pid == c.tid || comms_.find(c.pid) == comms_.end() || c.exec)
    comms_[c.pid] = std::string(c.comm);
  // exec gave the process a new address space, and the kernel reports the exec before it maps
  // the program: its old mappings name code it can no longer run, and the mappings that follow
  // start an empty table (a child of a fork need not copy its parent's). Only when the COMM has
  // a time: otherwise it keeps its place in the file relative to the MMAP2 records, and a task
  // that moved to another CPU during the exec can have its program's MMAP2 before its COMM.
  int32_t pid = static_cast<int32_t>(c.pid);
  if (c.exec && pid != kKernelTable && (c.sample_id.fields & PERF_SAMPLE_TIME)) {
    maps_.erase(pid);
    Forget(pid);
  }
  return Ok();
}

Status Session::OnFork(const RecordView& r, const EventAttr& attr) {
  PBID_ASSIGN_OR_RETURN(TaskRecord t, ParseTask(r, &attr));
  int32_t pid = t.pid, ppid = t.ppid;
  // The kernel's table is not a process a FORK could create.
  if (pid != ppid && pid != kKernelTable && maps_.find(pid) == maps_.end()) {
    Forget(pid);
    auto p = maps_.find(ppid);
    if (p != maps_.end())
      maps_[pid] = p->second;
    auto c = comms_.find(ppid);
    if (c != comms_.end() && comms_.find(pid) == comms_.end())
      comms_[pid] = c->second;
  }
  return Ok();
}

Status Session::OnSample(const RecordView& r, const EventAttr& attr,
                         const SampleCallback& on_sample) {
  PBID_ASSIGN_OR_RETURN(SampleRecord s, ParseSample(r, attr));
  const Mapping* m = Hit(static_cast<int32_t>(s.sample_id.pid), s.ip, IsKernelCpumode(s.cpumode));
  if (on_sample)
    on_sample(SampleContext{s, attr, m, r});
  return Ok();
}

const Mapping* Session::Hit(int32_t pid, uint64_t ip, bool kernel) {
  stats_.samples++;
  size_t idx = FindIndex(pid, ip, kernel);
  if (idx == kNoMapping) {
    stats_.unresolved++;
    return nullptr;
  }
  Mapping& hit = mappings_[idx];
  hit.samples++;
  dsos_[hit.dso].samples++;
  return &hit;
}

// Records that only count, and the kernel's records the session keeps nothing of: those are
// checked by their row of the record-type table (EXIT, for one), so that the replay of a file
// fails on any kernel record that does not decode. perf's own records are the reader's.
Status Session::OnOther(const RecordView& r, const EventAttr& attr) {
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
