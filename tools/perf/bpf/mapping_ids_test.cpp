// SPDX-License-Identifier: GPL-2.0
#include "pbid/bpf/mapping_ids.h"

#include <gtest/gtest.h>

#include <cstring>

#include "util/test_util.h"

namespace pbid {
namespace {

using testing::IdFromHex;

const BuildId kA = IdFromHex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
const BuildId kB = IdFromHex("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");

Mmap2Record Mmap(uint32_t pid, uint64_t start, uint64_t t, const char* path) {
  Mmap2Record m;
  m.pid = m.tid = pid;
  m.start = start;
  m.len = 0x10000;
  m.pgoff = 0x1000;
  m.filename = path;
  m.sample_id.time = t;
  return m;
}

// One sample of pid at time t with a single frame at ip, whose (id, offset) is its mapping's.
BpfUserStack Stack(uint32_t pid, uint64_t t, uint64_t ip, const BuildId& id, uint64_t start) {
  BpfUserStack s;
  s.pid = s.tid = pid;
  s.time_ns = t;
  BpfFrame f;
  f.ip = ip;
  f.has_id = true;
  auto padded = id.Padded();
  memcpy(f.id, padded.data(), sizeof(f.id));
  f.file_offset = ip - start + 0x1000;
  s.frames.push_back(f);
  return s;
}

TEST(BpfMappingIdsTest, AMappingWithoutAnIdGetsTheFramesId) {
  BpfMappingIds ids;
  ids.OnMmap2(Mmap(8, 0x500000, 90, "/bin/other"), kA, BuildIdSource::kFile);
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/gone"), std::nullopt, BuildIdSource::kNone);
  ids.Offer(Stack(7, 150, 0x400123, kA, 0x400000));
  auto d = ids.Decisions();
  ASSERT_EQ(1u, d.size());
  EXPECT_EQ(MappingIdEntry::Kind::kBpf, d[0].entry.kind);
  EXPECT_EQ(kA, d[0].entry.build_id);
  EXPECT_EQ(7u, d[0].entry.pid);
  EXPECT_EQ(0x400000u, d[0].entry.start);
  EXPECT_EQ(0x1000u, d[0].entry.pgoff);
  EXPECT_EQ(100u, d[0].entry.time);
  EXPECT_EQ("/bin/gone", d[0].path);
  EXPECT_EQ(1u, d[0].mapping);  // the second OnMmap2
  EXPECT_EQ(1u, ids.stats().assigned);
}

TEST(BpfMappingIdsTest, AFileIdThatBpfContradictsIsDisputed) {
  BpfMappingIds ids;
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/x"), kA, BuildIdSource::kFile);
  ids.Offer(Stack(7, 150, 0x400123, kB, 0x400000));
  auto d = ids.Decisions();
  ASSERT_EQ(1u, d.size());
  EXPECT_EQ(MappingIdEntry::Kind::kDisputed, d[0].entry.kind);
  EXPECT_EQ(1u, ids.stats().conflicts);
}

TEST(BpfMappingIdsTest, AKernelRecordStandsAgainstBpfButTheConflictIsCounted) {
  BpfMappingIds ids;
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/x"), kA, BuildIdSource::kKernelRecord);
  ids.Offer(Stack(7, 150, 0x400123, kB, 0x400000));
  EXPECT_TRUE(ids.Decisions().empty());
  EXPECT_EQ(1u, ids.stats().conflicts);
}

TEST(BpfMappingIdsTest, AnAgreeingFrameWritesNothing) {
  BpfMappingIds ids;
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/x"), kA, BuildIdSource::kFile);
  ids.Offer(Stack(7, 150, 0x400123, kA, 0x400000));
  EXPECT_TRUE(ids.Decisions().empty());
  EXPECT_EQ(1u, ids.stats().confirmed);
}

// Why the recorder collects stacks before it drains the perf ring buffers: a stack offered
// before its mapping's MMAP2 record was seen finds no mapping.
TEST(BpfMappingIdsTest, AStackBeforeItsMappingIsKnownGetsNothing) {
  BpfMappingIds ids;
  ids.Offer(Stack(7, 150, 0x400123, kA, 0x400000));
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/x"), std::nullopt, BuildIdSource::kNone);
  EXPECT_TRUE(ids.Decisions().empty());
}

TEST(BpfMappingIdsTest, AForkedChildsSampleNamesTheParentsMapping) {
  BpfMappingIds ids;
  ids.OnMmap2(Mmap(7, 0x400000, 100, "/bin/x"), std::nullopt, BuildIdSource::kNone);
  ids.OnFork(7, 8, 120);
  ids.Offer(Stack(8, 150, 0x400123, kA, 0x400000));
  auto d = ids.Decisions();
  ASSERT_EQ(1u, d.size());
  EXPECT_EQ(7u, d[0].entry.pid);
  EXPECT_EQ(kA, d[0].entry.build_id);
}

TEST(BpfMappingIdsTest, WithoutAProgramThereIsNothingToAttach) {
  BpfMappingIds ids;
  EXPECT_EQ(-1, ids.poll_fd());
  EXPECT_FALSE(ids.Attach(0).ok());
  EXPECT_TRUE(ids.Collect().ok());
}

}  // namespace
}  // namespace pbid
