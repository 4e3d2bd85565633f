// SPDX-License-Identifier: GPL-2.0
#include "pbid/bpf/id_matcher.h"

#include <gtest/gtest.h>

#include <cstring>

#include "util/test_util.h"

namespace pbid {
namespace {

using V = BpfIdMatcher::Verdict;

using testing::IdFromHex;

const BuildId kA = IdFromHex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
const BuildId kB = IdFromHex("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
const BuildId kMd5 = IdFromHex("0123456789abcdef0123456789abcdef");

BpfFrame Frame(uint64_t ip, const BuildId& id, uint64_t file_offset) {
  BpfFrame f;
  f.ip = ip;
  f.has_id = true;
  auto padded = id.Padded();
  memcpy(f.id, padded.data(), sizeof(f.id));
  f.file_offset = file_offset;
  return f;
}

// pid 7 maps a file's text at 0x400000 from file offset 0x1000, at time 100.
class BpfIdMatcherTest : public ::testing::Test {
 protected:
  void SetUp() override { m_.AddMapping(7, 0x400000, 0x10000, 0x1000, 100, kText); }
  static constexpr uint64_t kText = 1, kOther = 2;
  BpfIdMatcher m_;
};

TEST_F(BpfIdMatcherTest, AFrameInTheMappingAtItsOffsetGivesTheId) {
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
  ASSERT_TRUE(m_.IdOf(kText).has_value());
  EXPECT_EQ(kA, *m_.IdOf(kText));
  ASSERT_EQ(1u, m_.assigned().size());
  EXPECT_EQ(kText, m_.assigned()[0]);
  EXPECT_EQ(V::kConfirmed, m_.Offer(7, 160, Frame(0x400456, kA, 0x1456)));
}

TEST_F(BpfIdMatcherTest, AFrameFromAnotherMappingIsRejectedByItsOffset) {
  // The IP lies in the mapping, but the kernel resolved it in a file mapped from offset 0:
  // another mapping than the one the recorder knows at this address.
  EXPECT_EQ(V::kOffsetMismatch, m_.Offer(7, 150, Frame(0x400123, kB, 0x123)));
  EXPECT_FALSE(m_.IdOf(kText).has_value());
  EXPECT_TRUE(m_.assigned().empty());
}

TEST_F(BpfIdMatcherTest, NoMappingForAnotherProcessAnAddressOutsideOrAnEarlierTime) {
  EXPECT_EQ(V::kNoMapping, m_.Offer(8, 150, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kNoMapping, m_.Offer(7, 150, Frame(0x410000, kA, 0x11000)));
  EXPECT_EQ(V::kNoMapping, m_.Offer(7, 99, Frame(0x400123, kA, 0x1123)));
  EXPECT_FALSE(m_.IdOf(kText).has_value());
}

TEST_F(BpfIdMatcherTest, AFrameFromBeforeAReplacementBelongsToTheOldMapping) {
  // At time 200 another file is mapped over the same addresses, from the same offset.
  m_.AddMapping(7, 0x400000, 0x10000, 0x1000, 200, kOther);
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 250, Frame(0x400123, kB, 0x1123)));
  EXPECT_EQ(kA, *m_.IdOf(kText));
  EXPECT_EQ(kB, *m_.IdOf(kOther));
}

TEST_F(BpfIdMatcherTest, ExecEndsTheMappings) {
  m_.Exec(7, 300);
  EXPECT_EQ(V::kNoMapping, m_.Offer(7, 301, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 299, Frame(0x400123, kA, 0x1123)));
}

TEST_F(BpfIdMatcherTest, AForkedChildSharesTheParentsMappingsFromTheFork) {
  m_.Fork(7, 8, 120);
  EXPECT_EQ(V::kNoMapping, m_.Offer(8, 110, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kAssigned, m_.Offer(8, 130, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(kA, *m_.IdOf(kText));
  // The child's exec ends its copy only.
  m_.Exec(8, 140);
  EXPECT_EQ(V::kNoMapping, m_.Offer(8, 150, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kConfirmed, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
}

TEST_F(BpfIdMatcherTest, AnIdThatDisagreesWithTheFilesIsDroppedWithIt) {
  m_.KnownId(kText, kA);
  EXPECT_EQ(V::kConfirmed, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kConflict, m_.Offer(7, 160, Frame(0x400123, kB, 0x1123)));
  EXPECT_FALSE(m_.IdOf(kText).has_value());
  EXPECT_TRUE(m_.Disputed(kText));
  EXPECT_EQ(1u, m_.conflicts());
  // and it stays dropped, whatever comes next
  EXPECT_EQ(V::kConflict, m_.Offer(7, 170, Frame(0x400123, kA, 0x1123)));
  m_.KnownId(kText, kA);
  EXPECT_FALSE(m_.IdOf(kText).has_value());
}

TEST_F(BpfIdMatcherTest, TwoFramesWithDifferentIdsForOneMappingConflict) {
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
  EXPECT_EQ(V::kConflict, m_.Offer(7, 160, Frame(0x400124, kB, 0x1124)));
  EXPECT_FALSE(m_.IdOf(kText).has_value());
}

TEST_F(BpfIdMatcherTest, AFileIdArrivingAfterADifferentBpfIdConflicts) {
  EXPECT_EQ(V::kAssigned, m_.Offer(7, 150, Frame(0x400123, kA, 0x1123)));
  m_.KnownId(kText, kB);
  EXPECT_FALSE(m_.IdOf(kText).has_value());
  EXPECT_EQ(1u, m_.conflicts());
}

TEST_F(BpfIdMatcherTest, AFrameWithoutAnIdChangesNothing) {
  BpfFrame f;
  f.ip = 0x400123;
  EXPECT_EQ(V::kNoId, m_.Offer(7, 150, f));
  EXPECT_FALSE(m_.IdOf(kText).has_value());
}

TEST(BpfFrameBuildIdTest, TheKernelsPaddingIsUndone) {
  EXPECT_EQ(kA, BpfFrameBuildId(Frame(0, kA, 0)));
  EXPECT_EQ(kMd5, BpfFrameBuildId(Frame(0, kMd5, 0)));
  EXPECT_TRUE(BpfFrameMatches(Frame(0, kMd5, 0), kMd5));
  EXPECT_FALSE(BpfFrameMatches(Frame(0, kMd5, 0), kA));
}

}  // namespace
}  // namespace pbid
