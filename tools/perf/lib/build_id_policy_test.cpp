// SPDX-License-Identifier: GPL-2.0
#include "build_id_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace pbid {
namespace internal {
namespace {

BuildId Id(const char* byte) {
  std::string hex;
  for (int i = 0; i < 20; i++)
    hex += byte;
  return *BuildId::FromHex(hex);
}

Mapping Map(const std::string& path, uint64_t offset) {
  Mapping m;
  m.pid = 10;
  m.start = 0x1000;
  m.end = 0x2000;
  m.time = 5;
  m.path = path;
  m.record_offset = offset;
  return m;
}

// Each source in its turn: the record's own id, the HEADER_BUILD_ID record after it, the
// recorder's section (whose dispute takes away what the file said), the feature table.
TEST(BuildIdPolicyTest, SourcesAreTriedInOrder) {
  Features f;
  f.build_ids.emplace();
  f.build_ids->push_back(BuildIdEntry{});
  f.build_ids->back().filename = "/lib/a.so";
  f.build_ids->back().build_id = Id("aa");
  f.mapping_ids.emplace();
  MappingIdEntry bpf;
  bpf.pid = 10;
  bpf.start = 0x1000;
  bpf.time = 5;
  bpf.build_id = Id("bb");
  f.mapping_ids->push_back(bpf);
  BuildIdPolicy policy;
  policy.Load(f);

  Mapping own = Map("/lib/a.so", 100);
  policy.Resolve(&own, Id("cc"), /*synth=*/false);
  EXPECT_EQ(Id("cc"), own.build_id);
  EXPECT_EQ(BuildIdSource::kKernelRecord, own.source);

  Mapping bpf_hit = Map("/lib/a.so", 200);  // the section beats the table
  policy.Resolve(&bpf_hit, std::nullopt, false);
  EXPECT_EQ(Id("bb"), bpf_hit.build_id);
  EXPECT_EQ(BuildIdSource::kBpf, bpf_hit.source);

  policy.FollowedBy(300, "/lib/a.so", Id("dd"));
  Mapping followed = Map("/lib/a.so", 300);  // the record after it beats the section
  policy.Resolve(&followed, std::nullopt, /*synth=*/true);
  EXPECT_EQ(Id("dd"), followed.build_id);
  EXPECT_EQ(BuildIdSource::kSynthesized, followed.source);

  Mapping table = Map("/lib/a.so", 400);
  table.start = 0x9000;  // no section entry
  policy.Resolve(&table, std::nullopt, false);
  EXPECT_EQ(Id("aa"), table.build_id);
  EXPECT_EQ(BuildIdSource::kFile, table.source);

  Mapping none = Map("/lib/b.so", 500);
  none.start = 0x9000;
  policy.Resolve(&none, std::nullopt, false);
  EXPECT_FALSE(none.build_id);
  EXPECT_EQ(BuildIdSource::kNone, none.source);

  f.mapping_ids->front().kind = MappingIdEntry::Kind::kDisputed;
  Mapping disputed = Map("/lib/a.so", 300);
  policy.Resolve(&disputed, std::nullopt, false);
  EXPECT_FALSE(disputed.build_id);
}

// Mappings of one path share a DSO while their build ids agree; the kernel image's names are
// one DSO.
TEST(BuildIdPolicyTest, DsosAreOnePerPathAndBuildId) {
  BuildIdPolicy policy;
  Mapping a = Map("/lib/a.so", 1);
  a.build_id = Id("aa");
  Mapping a2 = a;
  Mapping b = a;
  b.build_id = Id("bb");
  EXPECT_EQ(0u, policy.DsoFor(a));
  EXPECT_EQ(0u, policy.DsoFor(a2));
  EXPECT_EQ(1u, policy.DsoFor(b));
  Mapping k = Map("[kernel.kallsyms]_text", 2);
  k.kernel = true;
  size_t kd = policy.DsoFor(k);
  EXPECT_EQ("[kernel.kallsyms]", policy.dsos()[kd].path);
  EXPECT_EQ(3u, policy.dsos().size());
  policy.Clear();
  EXPECT_TRUE(policy.dsos().empty());
}

}  // namespace
}  // namespace internal
}  // namespace pbid
