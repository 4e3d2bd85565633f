// SPDX-License-Identifier: GPL-2.0
//
// Internal: the records of a perf.data file in time order, as perf's ordered_events.c keeps
// them. A record is queued as a small entry (Ordered) and held until no later record can sort
// before it; a flush replays the queued entries up to a bound in (time, file offset) order.
// Where a replay may flush comes from perf's rounds (PERF_RECORD_FINISHED_ROUND), or from a
// survey of the whole file first (Plan): see Session::Order.
#ifndef PBID_LIB_ORDERED_RECORDS_H_
#define PBID_LIB_ORDERED_RECORDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {
namespace internal {

// One per record waiting to be replayed: kept small, since a round can hold many. Half of
// it serves decoded samples only, and is unused in a replay with callbacks.
// Session::Process refuses files whose offsets do not fit (128 TiB and more: none would be
// mapped).
inline constexpr unsigned kOffsetBits = 47, kAttrBits = 16;
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
inline constexpr uint64_t kAttrUnknown = (uint64_t{1} << kAttrBits) - 1;
static_assert(sizeof(Ordered) == 32, "Ordered is one entry per queued record");

// Ordered by (time, file offset): equal times replay in file order, as a stable sort.
inline bool Before(const Ordered& a, const Ordered& b) {
  return a.time != b.time ? a.time < b.time : a.offset < b.offset;
}

// Before as a type, for the algorithms below: passed as the function itself, every comparison
// of a merge or a search could be an indirect call.
struct OrderedBefore {
  bool operator()(const Ordered& a, const Ordered& b) const { return Before(a, b); }
};

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

// The records waiting for their turn: `held_`, sorted, what earlier flushes left from index
// `head_` on, and `fresh_`, the records queued since, a sequence of ascending runs each
// starting at an index in `runs_`. A flush merges the runs of fresh_ alone, replays from both
// in order, and merges what is left of fresh_ into the end of held_ where they overlap: its
// cost follows what was queued and replayed since the last flush, not what a record far back
// keeps waiting. The buffers are kept from one flush to the next.
class OrderedQueue {
 public:
  void Push(const Ordered& e) {
    if (fresh_.empty() || Before(e, fresh_.back()))
      runs_.push_back(fresh_.size());
    fresh_.push_back(e);
  }
  size_t size() const { return held_.size() - head_ + fresh_.size(); }

  // Replays, in time order, every queued record that sorts before time `bound` at file offset
  // `until` (the first record not queued yet can sort no earlier): replay(const Ordered&) ->
  // Status. The first that fails stops the flush with its error.
  template <typename Replay>
  Status Flush(uint64_t bound, uint64_t until, Replay&& replay) {
    MergeRuns(&fresh_, &runs_, &merged_, OrderedBefore());
    Ordered limit{bound, until, 0, 0, 0, 0, false};
    size_t f = 0;
    for (;;) {
      bool from_held =
          head_ < held_.size() && (f == fresh_.size() || Before(held_[head_], fresh_[f]));
      if (!from_held && f == fresh_.size())
        break;
      const Ordered& e = from_held ? held_[head_] : fresh_[f];
      if (!Before(e, limit))
        break;
      Status st = replay(e);
      if (!st.ok())
        return st;
      (from_held ? head_ : f)++;
    }
    if (f < fresh_.size()) {
      auto from = std::upper_bound(held_.begin() + static_cast<std::ptrdiff_t>(head_), held_.end(),
                                   fresh_[f], OrderedBefore());
      merged_.clear();
      std::merge(from, held_.end(), fresh_.begin() + static_cast<std::ptrdiff_t>(f), fresh_.end(),
                 std::back_inserter(merged_), OrderedBefore());
      held_.erase(from, held_.end());
      held_.insert(held_.end(), merged_.begin(), merged_.end());
    }
    fresh_.clear();
    runs_.clear();
    // The replayed front goes once it is half of held_: each record is moved about once.
    if (head_ > held_.size() / 2) {
      held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return Ok();
  }

 private:
  std::vector<Ordered> held_, fresh_, merged_;
  size_t head_ = 0;
  std::vector<size_t> runs_;
};

// Above every offset (Session::Process refuses files larger than kOffsetBits can hold): a
// flush bound by time alone.
inline constexpr uint64_t kPastTheFile = (uint64_t{1} << kOffsetBits) - 1;

// Where a replay may flush: before the record at `offset`, every queued record with a time
// at or below `bound`, the earliest time of any record from there to the end of the file.
struct FlushPoint {
  uint64_t offset;
  uint64_t bound;
};
// A record far later in the file than its time: the replay queues it at flush point `flush`,
// read ahead, and passes over it where the file has it, so that the records it would otherwise
// keep waiting (all those since its time) do not pile up in the queue. `time` is its time in
// the survey, which a record without one took from the record before.
struct Straggler {
  uint64_t offset, time;
  size_t flush;  // index into Plan::flushes
};
struct Plan {
  std::vector<FlushPoint> flushes;          // in file order
  std::vector<Straggler> stragglers;        // by flush, then file order
  std::vector<uint64_t> straggler_offsets;  // the same records' offsets, in file order
};

// Where a replay may flush in a surveyed pass: after every PERF_RECORD_FINISHED_ROUND (perf's
// rounds) and, for files without them, every kRecordsPerFlush records, but never right before
// a PERF_RECORD_HEADER_BUILD_ID: that belongs to the record before it, whose replay needs it.
class Cuts {
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

// The survey's plan, from every record in file order and its time. Each flush point's bound is
// the earliest time of everything after it, so a record at or below it can be replayed at once:
// nothing later in the file sorts before it. The replay is then exactly a stable sort of the
// whole file by time, whether or not the file keeps perf's promise that a round never reaches
// back before the one that precedes it.
//
// A record that reaches back past more than kStragglerReach records (a task preempted between
// taking its timestamp and writing its record, on a loaded machine) would bound every flush
// point since its time, and keep all the records since then in the queue until it is read. It
// is a straggler instead: left out of the bounds, and queued by the replay at the first flush
// point with a later record before it, where no record before that point sorts after it. The
// queue then holds at most kStragglerReach records and a flush's worth. A file where a whole
// stream of records lags (a CPU's buffer read that late, every time) is held as before once
// kStragglerReach of them are listed: the plan is kept from growing with the file too.
class Survey {
 public:
  static constexpr uint64_t kStragglerReach = uint64_t{1} << 16;

  void Add(const RecordView& r, uint64_t time) {
    if (cuts_.Before(r)) {
      if (!plan_.flushes.empty())
        plan_.flushes.back().bound = chunk_min_;
      plan_.flushes.push_back(FlushPoint{r.offset, UINT64_MAX});
      latest_before_.push_back(latest_);
      records_before_.push_back(records_);
      chunk_min_ = UINT64_MAX;
    }
    records_++;
    if (!latest_before_.empty() && time < latest_before_.back() &&
        plan_.stragglers.size() < kStragglerReach) {
      size_t k =
          static_cast<size_t>(std::upper_bound(latest_before_.begin(), latest_before_.end(), time) -
                              latest_before_.begin());
      if (records_ - records_before_[k] > kStragglerReach) {
        plan_.stragglers.push_back(Straggler{r.offset, time, k});
        plan_.straggler_offsets.push_back(r.offset);
        return;
      }
    }
    latest_ = std::max(latest_, time);
    chunk_min_ = std::min(chunk_min_, time);
  }
  Plan Finish() {
    if (!plan_.flushes.empty())
      plan_.flushes.back().bound = chunk_min_;
    uint64_t after = UINT64_MAX;
    for (auto it = plan_.flushes.rbegin(); it != plan_.flushes.rend(); ++it) {
      after = std::min(after, it->bound);
      it->bound = after;
    }
    std::stable_sort(plan_.stragglers.begin(), plan_.stragglers.end(),
                     [](const Straggler& a, const Straggler& b) { return a.flush < b.flush; });
    return std::move(plan_);
  }

 private:
  Plan plan_;
  Cuts cuts_;
  // Until Finish, a point's bound is the earliest time up to the next point.
  uint64_t chunk_min_ = UINT64_MAX;
  // Per flush point: the latest time of the records before it (ascending), and their number.
  std::vector<uint64_t> latest_before_, records_before_;
  uint64_t latest_ = 0, records_ = 0;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_ORDERED_RECORDS_H_
