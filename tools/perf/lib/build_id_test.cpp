// SPDX-License-Identifier: GPL-2.0
#include "pbid/build_id.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace pbid {
namespace {

TEST(BuildIdTest, HexRoundTripKeepsLength) {
  auto id = BuildId::FromHex("00112233445566778899AABBCCDDEEFF00000000");
  ASSERT_TRUE(id.ok()) << id.error().ToString();
  EXPECT_EQ(20u, id->size());
  EXPECT_EQ("00112233445566778899aabbccddeeff00000000", id->ToHex());

  auto md5 = BuildId::FromHex("00112233445566778899aabbccddeeff");
  ASSERT_TRUE(md5.ok());
  EXPECT_EQ(16u, md5->size());
  // Same leading bytes, different length: a 16-byte id is not a padded 20-byte one.
  EXPECT_NE(*id, *md5);
  EXPECT_EQ(id->Padded(), md5->Padded());
}

TEST(BuildIdTest, FromBytes) {
  const uint8_t b[] = {0xde, 0xad, 0xbe, 0xef};
  auto id = BuildId::FromBytes(b, sizeof(b));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ("deadbeef", id->ToHex());
  EXPECT_EQ(0, memcmp(b, id->data(), 4));
  EXPECT_EQ(0, id->data()[4]);
}

TEST(BuildIdTest, RejectsBadSizes) {
  uint8_t b[21] = {};
  EXPECT_FALSE(BuildId::FromBytes(b, 0).ok());
  EXPECT_FALSE(BuildId::FromBytes(b, 21).ok());
  EXPECT_TRUE(BuildId::FromBytes(b, 20).ok());
  EXPECT_TRUE(BuildId::FromBytes(b, 1).ok());
  EXPECT_EQ("build_id.size", BuildId::FromBytes(b, 21).error().field);
}

TEST(BuildIdTest, RejectsBadHex) {
  EXPECT_FALSE(BuildId::FromHex("").ok());
  EXPECT_FALSE(BuildId::FromHex("abc").ok());
  EXPECT_FALSE(BuildId::FromHex(std::string(42, 'a')).ok());
  auto bad = BuildId::FromHex("ab0g", "arg");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ("arg", bad.error().field);
  EXPECT_EQ(2u, bad.error().offset);
}

TEST(BuildIdTest, HashAndOrder) {
  std::unordered_set<BuildId> set;
  set.insert(*BuildId::FromHex("aa"));
  set.insert(*BuildId::FromHex("aa00"));
  set.insert(*BuildId::FromHex("AA"));
  EXPECT_EQ(2u, set.size());
  EXPECT_TRUE(*BuildId::FromHex("ff") < *BuildId::FromHex("0000"));
}

TEST(BuildIdTest, DefaultIsEmpty) {
  BuildId id;
  EXPECT_TRUE(id.empty());
  EXPECT_EQ("", id.ToHex());
  EXPECT_STREQ("kernel", BuildIdSourceName(BuildIdSource::kKernelRecord));
}

TEST(ErrorTest, ToStringNamesFieldAndOffset) {
  Error e("header.data.size", 0x28, "beyond end of file");
  EXPECT_EQ("header.data.size at offset 0x28: beyond end of file", e.ToString());
  Error n("open", "cannot open");
  EXPECT_EQ("open: cannot open", n.ToString());
  Result<int> r = Error("x", "y");
  EXPECT_FALSE(r.ok());
  Result<int> v = 3;
  EXPECT_EQ(3, *v);
}

}  // namespace
}  // namespace pbid
