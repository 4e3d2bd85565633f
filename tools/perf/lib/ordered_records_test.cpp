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
  Status st = q->Flush(bound, kPastTheFile, [&](const Ordered& e) {
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

// What a flush leaves is held sorted; records queued after it that sort among those held are
// merged in, and a bound at a file offset keeps equal times in file order across flushes.
TEST(OrderedQueueTest, RecordsQueuedLaterMergeWithThoseHeld) {
  OrderedQueue q;
  for (auto [t, off] : std::vector<std::pair<uint64_t, uint64_t>>{{10, 0}, {50, 8}, {60, 16}})
    q.Push(At(t, off));
  using V = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ((V{{10, 0}}), FlushAll(&q, 20));
  q.Push(At(55, 24));
  q.Push(At(45, 32));
  q.Push(At(50, 40));
  EXPECT_EQ(5u, q.size());
  // Up to time 50 before offset 40: the record at 40 itself, queued, does not sort before it.
  std::vector<std::pair<uint64_t, uint64_t>> out;
  ASSERT_TRUE(q.Flush(50, 40, [&](const Ordered& e) {
                 out.emplace_back(e.time, e.offset);
                 return Ok();
               }).ok());
  EXPECT_EQ((V{{45, 32}, {50, 8}}), out);
  EXPECT_EQ((V{{50, 40}, {55, 24}, {60, 16}}), FlushAll(&q, UINT64_MAX));
}

// A replay that fails stops the flush with its error.
TEST(OrderedQueueTest, AFailedReplayStopsTheFlush) {
  OrderedQueue q;
  q.Push(At(1, 0));
  q.Push(At(2, 8));
  int replayed = 0;
  Status st = q.Flush(UINT64_MAX, kPastTheFile, [&](const Ordered& e) -> Status {
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
  s.Add(Rec(PERF_RECORD_SAMPLE, 48), 30);    // reaches back before the chunk ahead of it
  Plan p = s.Finish();
  ASSERT_EQ(2u, p.flushes.size());
  EXPECT_EQ(16u, p.flushes[0].offset);
  EXPECT_EQ(30u, p.flushes[0].bound);
  EXPECT_EQ(40u, p.flushes[1].offset);
  EXPECT_EQ(30u, p.flushes[1].bound);
}

// A record written far later than its time (more than kStragglerReach records after the flush
// point its time belongs before) is listed as a straggler, queued at that point, and does not
// lower the bounds of the flush points in between: they would otherwise hold everything since.
TEST(SurveyTest, ARecordFarBehindIsAStragglerAndLeavesTheBoundsAlone) {
  Survey s;
  const uint64_t n = Survey::kStragglerReach + 4096;
  for (uint64_t i = 0; i < n; i++)
    s.Add(Rec(PERF_RECORD_SAMPLE, i * 8), i + 1);
  s.Add(Rec(PERF_RECORD_SAMPLE, n * 8), 5);  // its time is that of the 5th record
  Plan p = s.Finish();
  ASSERT_EQ(1u, p.stragglers.size());
  EXPECT_EQ(n * 8, p.stragglers[0].offset);
  EXPECT_EQ(5u, p.stragglers[0].time);
  EXPECT_EQ(0u, p.stragglers[0].flush);  // queued before the first cut replays
  ASSERT_EQ(std::vector<uint64_t>{n * 8}, p.straggler_offsets);
  ASSERT_FALSE(p.flushes.empty());
  EXPECT_GT(p.flushes[0].bound, 1000u);
}

}  // namespace
}  // namespace internal
}  // namespace pbid
