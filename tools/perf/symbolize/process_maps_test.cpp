// SPDX-License-Identifier: GPL-2.0
#include "process_maps.h"

#include <gtest/gtest.h>

namespace pbid {
namespace {

MappedFile Map(uint64_t start, uint64_t len, uint64_t pgoff, const char* name) {
  MappedFile m;
  m.start = start;
  m.len = len;
  m.pgoff = pgoff;
  m.filename = name;
  return m;
}

TEST(ProcessMapsTest, FindsByAddressAndComputesFileOffset) {
  ProcessMaps pm;
  pm.Add(10, Map(0x1000, 0x2000, 0x5000, "a"));
  pm.Add(10, Map(0x8000, 0x1000, 0, "b"));
  ASSERT_NE(nullptr, pm.Find(10, 0x1000));
  EXPECT_EQ(0x5010u, pm.Find(10, 0x1010)->FileOffset(0x1010));
  EXPECT_EQ("b", pm.Find(10, 0x8fff)->filename);
  EXPECT_EQ(nullptr, pm.Find(10, 0x3000));  // end is exclusive
  EXPECT_EQ(nullptr, pm.Find(10, 0x0fff));
  EXPECT_EQ(nullptr, pm.Find(11, 0x1000));
}

TEST(ProcessMapsTest, NewMappingSplitsWhatItOverlaps) {
  ProcessMaps pm;
  pm.Add(1, Map(0x1000, 0x3000, 0x0, "old"));
  pm.Add(1, Map(0x2000, 0x1000, 0x0, "new"));
  EXPECT_EQ("old", pm.Find(1, 0x1fff)->filename);
  EXPECT_EQ("new", pm.Find(1, 0x2000)->filename);
  const MappedFile* tail = pm.Find(1, 0x3000);
  ASSERT_NE(nullptr, tail);
  EXPECT_EQ("old", tail->filename);
  EXPECT_EQ(0x2000u, tail->pgoff) << "the tail keeps its file offset";
  EXPECT_EQ(0x2000u, tail->FileOffset(0x3000));
}

TEST(ProcessMapsTest, ForkCopiesAndChildChangesStayPrivate) {
  ProcessMaps pm;
  pm.Add(1, Map(0x1000, 0x1000, 0, "parent"));
  pm.Fork(1, 2);
  pm.Add(2, Map(0x1000, 0x1000, 0, "child-exec"));
  EXPECT_EQ("parent", pm.Find(1, 0x1000)->filename);
  EXPECT_EQ("child-exec", pm.Find(2, 0x1000)->filename);
}

TEST(ProcessMapsTest, EmptyOrWrappingRangesAreIgnored) {
  ProcessMaps pm;
  pm.Add(1, Map(0x1000, 0, 0, "empty"));
  pm.Add(1, Map(UINT64_MAX - 10, 100, 0, "wraps"));
  EXPECT_EQ(nullptr, pm.Find(1, 0x1000));
  EXPECT_EQ(nullptr, pm.Find(1, UINT64_MAX - 5));
}

}  // namespace
}  // namespace pbid
