// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "pbid/record_builder.h"
#include "pbid/records.h"

namespace pbid {
namespace {

// Every type the uapi header declares, and every type perf writes itself (64 to 83, without
// gaps), has a row whose name is perf's for it: a new type is named as soon as it has a row,
// and one missing from the table shows here.
TEST(RecordTypesTest, EveryKnownTypeHasANamedRow) {
  for (uint32_t type = 1; type < PERF_RECORD_MAX; type++) {
    const RecordType* t = RecordTypeOf(type);
    ASSERT_NE(nullptr, t) << "kernel record type " << type;
    EXPECT_EQ(type, t->type);
    EXPECT_EQ(0, std::string(t->name).rfind("PERF_RECORD_", 0)) << t->name;
  }
  ASSERT_NE(nullptr, RecordTypeOf(kRecordAuxOutputHwId));
  for (uint32_t type = kRecordHeaderAttr; type <= kRecordCompressed2; type++) {
    const RecordType* t = RecordTypeOf(type);
    ASSERT_NE(nullptr, t) << "perf's record type " << type;
    EXPECT_EQ(type, t->type);
  }
  EXPECT_STREQ("PERF_RECORD_COMPRESSED2", RecordTypeName(kRecordCompressed2));
  EXPECT_STREQ("PERF_RECORD_AUX_OUTPUT_HW_ID", RecordTypeName(kRecordAuxOutputHwId));
  EXPECT_STREQ("PERF_RECORD_MMAP2", RecordTypeName(PERF_RECORD_MMAP2));
}

TEST(RecordTypesTest, UnknownTypesHaveNoRow) {
  for (uint32_t type : {0u, kRecordAuxOutputHwId + 1, kRecordHeaderAttr - 1, kRecordCompressed2 + 1,
                        1000u, 0xffffffffu}) {
    EXPECT_EQ(nullptr, RecordTypeOf(type)) << type;
    EXPECT_EQ(nullptr, RecordTypeName(type)) << type;
  }
}

// What `perf script --show-mmap-events --show-task-events` shows besides samples.
TEST(RecordTypesTest, ScriptShowsMappingAndTaskRecords) {
  std::set<uint32_t> shown;
  for (uint32_t type = 0; type < 256; type++) {
    const RecordType* t = RecordTypeOf(type);
    if (t && t->in_script)
      shown.insert(type);
  }
  std::set<uint32_t> want = {PERF_RECORD_MMAP,        PERF_RECORD_LOST, PERF_RECORD_COMM,
                             PERF_RECORD_EXIT,        PERF_RECORD_FORK, PERF_RECORD_MMAP2,
                             PERF_RECORD_LOST_SAMPLES};
  EXPECT_EQ(want, shown);
}

EventAttr Attr() {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a.attr.sample_id_all = 1;
  return a;
}

RecordView View(const RecordBytes& b) {
  auto h = ParseRecordHeader(b.data(), b.size(), false, 0);
  EXPECT_TRUE(h.ok());
  return RecordView{*h, b.data(), 0, false};
}

// A row's check and description are its type's decoder: what decodes is described, what
// does not fails both, naming the decoder's field.
TEST(RecordTypesTest, CheckAndDescribeDecode) {
  EventAttr attr = Attr();
  TaskRecord t;
  t.pid = 10;
  t.ppid = 9;
  t.tid = 11;
  t.ptid = 9;
  RecordBytes b = BuildTask(PERF_RECORD_EXIT, t, &attr, false);
  const RecordType* exit = RecordTypeOf(PERF_RECORD_EXIT);
  ASSERT_NE(nullptr, exit);
  ASSERT_NE(nullptr, exit->check);
  EXPECT_TRUE(exit->check(View(b), &attr).ok());
  auto d = exit->describe(View(b), &attr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ("(10:11):(9:9)", *d);

  // The same record cut after its header and pid: 12 bytes cannot hold an EXIT.
  RecordBytes cut(b.begin(), b.begin() + 12);
  cut[6] = 12;
  cut[7] = 0;
  Status st = exit->check(View(cut), &attr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(0u, st.error().field.rfind("exit", 0)) << st.error().field;
  EXPECT_FALSE(exit->describe(View(cut), &attr).ok());
}

}  // namespace
}  // namespace pbid
