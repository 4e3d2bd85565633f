// SPDX-License-Identifier: GPL-2.0
#include "ordered_records.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace pbid {
namespace internal {
namespace {

Ordered At(uint64_t time, uint64_t offset) {
  return Ordered{time, offset, 0, 0, 0, 0, false};
}

std::vector<std::pair<uint64_t, uint64_t>> FlushAll(OrderedQueue* q, uint64_t bound) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  Status st = q->Flush(bound, [&](const Ordered& e) {
    out.emplace_back(e.time, e.offset);
    return Ok();
  });
  EXPECT_TRUE(st.ok());
  return out;
}

// A flush replays what is at or below its bound as a stable sort by time (equal times in file
// order), across the runs the queue was pushed in, and keeps the rest for the next.
TEST(OrderedQueueTest, AFlushReplaysUpToItsBoundInTimeOrder) {
  OrderedQueue q;
  // Three ascending runs, as three CPUs' stretches of a round.
  for (auto [t, off] : std::vector<std::pair<uint64_t, uint64_t>>{
           {10, 0}, {30, 8}, {50, 16}, {20, 24}, {30, 32}, {60, 40}, {5, 48}, {30, 56}})
    q.Push(At(t, off));
  using V = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ((V{{5, 48}, {10, 0}, {20, 24}, {30, 8}, {30, 32}, {30, 56}}), FlushAll(&q, 30));
  EXPECT_EQ(2u, q.size());
  q.Push(At(40, 64));
  EXPECT_EQ((V{{40, 64}, {50, 16}, {60, 40}}), FlushAll(&q, UINT64_MAX));
  EXPECT_EQ(0u, q.size());
}

// A replay that fails stops the flush with its error.
TEST(OrderedQueueTest, AFailedReplayStopsTheFlush) {
  OrderedQueue q;
  q.Push(At(1, 0));
  q.Push(At(2, 8));
  int replayed = 0;
  Status st = q.Flush(UINT64_MAX, [&](const Ordered& e) -> Status {
    replayed++;
    if (e.time == 1)
      return Error("replay", e.offset, "bad");
    return Ok();
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(1, replayed);
}

RecordView Rec(uint32_t type, uint64_t offset) {
  RecordView r{};
  r.header.type = type;
  r.header.size = 8;
  r.offset = offset;
  return r;
}

// The survey cuts after every round, never before a HEADER_BUILD_ID, and bounds each cut by the
// earliest time after it.
TEST(SurveyTest, CutsFollowRoundsAndBoundByWhatComesAfter) {
  Survey s;
  s.Add(Rec(PERF_RECORD_SAMPLE, 0), 50);
  s.Add(Rec(kRecordFinishedRound, 8), 50);
  s.Add(Rec(PERF_RECORD_MMAP2, 16), 40);  // cut before it
  s.Add(Rec(kRecordFinishedRound, 24), 40);
  s.Add(Rec(kRecordHeaderBuildId, 32), 40);  // no cut: it belongs to the record before
  s.Add(Rec(PERF_RECORD_SAMPLE, 40), 70);    // cut here instead
  s.Add(Rec(PERF_RECORD_SAMPLE, 48), 30);  // reaches back before the chunk ahead of it
  Plan p = s.Finish();
  ASSERT_EQ(2u, p.flushes.size());
  EXPECT_EQ(16u, p.flushes[0].offset);
  EXPECT_EQ(30u, p.flushes[0].bound);
  EXPECT_EQ(40u, p.flushes[1].offset);
  EXPECT_EQ(30u, p.flushes[1].bound);
}

}  // namespace
}  // namespace internal
}  // namespace pbid
