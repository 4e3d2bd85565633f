// SPDX-License-Identifier: GPL-2.0
//
// The error convention: kinds, context, and the assign-or-return helpers.
#include "pbid/result.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <cstring>

#include "pbid/perf_data.h"

namespace pbid {
namespace {

Result<int> Half(int v) {
  if (v % 2)
    return Error::Of(ErrorKind::kInvalidArgument, "v", "odd");
  return v / 2;
}

Result<int> Quarter(int v) {
  PBID_ASSIGN_OR_RETURN(int h, Half(v));
  PBID_ASSIGN_OR_RETURN(h, Half(h));
  return h;
}

Status Check(int v) {
  PBID_RETURN_IF_ERROR(Quarter(v));
  return Ok();
}

TEST(ResultTest, AssignOrReturnPassesTheFirstError) {
  ASSERT_TRUE(Quarter(8).ok());
  EXPECT_EQ(2, *Quarter(8));
  auto r = Quarter(6);  // 6 / 2 = 3 is odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrorKind::kInvalidArgument, r.error().kind);
  EXPECT_TRUE(Check(4).ok());
  EXPECT_FALSE(Check(2).ok());
}

TEST(ResultTest, KindsAndContext) {
  EXPECT_EQ(ErrorKind::kCorruptInput, Error("f", 8, "bad").kind);
  EXPECT_EQ(ErrorKind::kIo, Error::Sys("out", ENOSPC, "write failed").kind);
  Error e = Error("header.size", 8, "bad").Context("reading x").Context("report");
  EXPECT_EQ("report: reading x: header.size at offset 0x8: bad", e.ToString());
  EXPECT_EQ(ErrorKind::kCorruptInput, e.kind);
}

// Files this library cannot read but that are not corrupt say so by their kind.
TEST(ResultTest, ReaderErrorsCarryTheirKind) {
  std::vector<uint8_t> v1(104, 0);
  memcpy(v1.data(), "PERFFILE", 8);  // what perf < 2.6.38 wrote, as bytes
  auto r = PerfDataReader::FromBytes(v1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrorKind::kUnsupported, r.error().kind) << r.error().ToString();
  auto junk = PerfDataReader::FromBytes(std::vector<uint8_t>(104, 'x'));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(ErrorKind::kCorruptInput, junk.error().kind);
  auto missing = PerfDataReader::Open("/nonexistent/perf.data");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ErrorKind::kIo, missing.error().kind);
}

}  // namespace
}  // namespace pbid
