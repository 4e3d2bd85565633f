// SPDX-License-Identifier: GPL-2.0
#include "pbid/records.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <string>

#include "pbid/record_builder.h"

namespace pbid {
namespace {

EventAttr MakeAttr(bool build_id, bool sample_id_all = true) {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                       PERF_SAMPLE_CALLCHAIN;
  a.attr.sample_id_all = sample_id_all;
  a.attr.mmap2 = 1;
  a.attr.build_id = build_id;
  a.ids = {42};
  return a;
}

RecordView View(const RecordBytes& b, bool swap = false) {
  auto h = ParseRecordHeader(b.data(), b.size(), swap, 0);
  EXPECT_TRUE(h.ok()) << h.error().ToString();
  return RecordView{*h, b.data(), 0, swap};
}

SampleId Sid(uint32_t pid, uint64_t time) {
  SampleId s;
  s.pid = pid;
  s.tid = pid + 1;
  s.time = time;
  s.id = 42;
  s.cpu = 1;
  return s;
}

Mmap2Record SomeMmap2(bool with_id) {
  Mmap2Record m;
  m.pid = 100;
  m.tid = 101;
  m.start = 0x7f0000001000;
  m.len = 0x5000;
  m.pgoff = 0x1000;
  m.prot = 5;
  m.flags = 2;
  m.filename = "/usr/lib/libfoo.so";
  m.sample_id = Sid(100, 12345);
  if (with_id) {
    m.has_build_id = true;
    m.build_id = *BuildId::FromHex("0123456789abcdef0123456789abcdef01234567");
  } else {
    m.maj = 8;
    m.min = 1;
    m.ino = 123456;
    m.ino_generation = 7;
  }
  return m;
}

class RecordsTest : public ::testing::TestWithParam<bool> {};  // param: byte-swapped

TEST_P(RecordsTest, Mmap2BuildIdFormRoundTrip) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(true);
  Mmap2Record in = SomeMmap2(true);
  RecordBytes b = *BuildMmap2(in, PERF_RECORD_MISC_USER, &attr, swap);
  ASSERT_EQ(0u, b.size() % 8);
  RecordView v = View(b, swap);
  EXPECT_EQ(PERF_RECORD_MISC_USER | kMiscMmapBuildId, v.header.misc);
  auto out = ParseMmap2(v, &attr);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_TRUE(out->has_build_id);
  EXPECT_EQ(in.build_id, out->build_id);
  EXPECT_EQ(20u, out->build_id.size());
  EXPECT_EQ(in.start, out->start);
  EXPECT_EQ(in.len, out->len);
  EXPECT_EQ(in.pgoff, out->pgoff);
  EXPECT_EQ(in.prot, out->prot);
  EXPECT_EQ(in.flags, out->flags);
  EXPECT_EQ(in.filename, out->filename);
  EXPECT_EQ(100u, out->sample_id.pid);
  EXPECT_EQ(101u, out->sample_id.tid);
  EXPECT_EQ(12345u, out->sample_id.time);
  EXPECT_EQ(42u, out->sample_id.id);
  EXPECT_EQ(1u, out->sample_id.cpu);
}

TEST_P(RecordsTest, Mmap2InodeFormRoundTrip) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(false);
  Mmap2Record in = SomeMmap2(false);
  RecordView v;
  RecordBytes b = *BuildMmap2(in, PERF_RECORD_MISC_USER, &attr, swap);
  v = View(b, swap);
  auto out = ParseMmap2(v, &attr);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_FALSE(out->has_build_id);
  EXPECT_EQ(8u, out->maj);
  EXPECT_EQ(1u, out->min);
  EXPECT_EQ(123456u, out->ino);
  EXPECT_EQ(7u, out->ino_generation);
}

TEST_P(RecordsTest, ShortBuildIdKeepsItsLength) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(true);
  Mmap2Record in = SomeMmap2(true);
  in.build_id = *BuildId::FromHex("00112233445566778899aabbccddeeff");  // md5 style
  RecordBytes b = *BuildMmap2(in, PERF_RECORD_MISC_USER, &attr, swap);
  auto out = ParseMmap2(View(b, swap), &attr);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(16u, out->build_id.size());
  EXPECT_EQ(in.build_id, out->build_id);
}

TEST_P(RecordsTest, SampleWithCallchain) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(true);
  SampleRecord s;
  s.cpumode = PERF_RECORD_MISC_USER;
  s.ip = 0x401000;
  s.period = 1000000;
  s.sample_id = Sid(7, 999);
  std::vector<uint64_t> chain = {PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000};
  RecordBytes b = *BuildSample(s, chain, attr, swap);
  auto out = ParseSample(View(b, swap), attr);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(0x401000u, out->ip);
  EXPECT_EQ(1000000u, out->period);
  EXPECT_EQ(7u, out->sample_id.pid);
  EXPECT_EQ(8u, out->sample_id.tid);
  EXPECT_EQ(999u, out->sample_id.time);
  EXPECT_EQ(42u, out->sample_id.id);
  EXPECT_EQ(1u, out->sample_id.cpu);
  ASSERT_EQ(4u, out->callchain.size());
  EXPECT_EQ(static_cast<uint64_t>(PERF_CONTEXT_USER), out->callchain[0]);
  EXPECT_EQ(0x403000u, out->callchain[3]);
  EXPECT_EQ(42u, RecordEventId(View(b, swap), attr));
}

// perf drops a callchain with a marker the kernel never writes (-1 out of a user stack walked
// by frame pointers); the kernel's own markers, the guest's among them, are kept.
TEST_P(RecordsTest, UnknownContextMarksACorruptCallchain) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(true);
  SampleRecord s;
  s.cpumode = PERF_RECORD_MISC_KERNEL;
  s.ip = 0xffffffff81000100;
  s.sample_id = Sid(7, 999);
  auto chain_of = [&](std::vector<uint64_t> chain) {
    RecordBytes b = *BuildSample(s, chain, attr, swap);
    auto out = ParseSample(View(b, swap), attr);
    EXPECT_TRUE(out.ok());
    return HasUnknownContext(out->callchain);
  };
  EXPECT_FALSE(chain_of({PERF_CONTEXT_KERNEL, 0xffffffff81000100, PERF_CONTEXT_USER, 0x401000}));
  EXPECT_FALSE(chain_of({PERF_CONTEXT_GUEST, PERF_CONTEXT_GUEST_KERNEL, 0xffffffff81000100,
                         PERF_CONTEXT_GUEST_USER, 0x401000, PERF_CONTEXT_HV}));
  EXPECT_FALSE(chain_of({}));
  EXPECT_TRUE(chain_of({PERF_CONTEXT_KERNEL, 0xffffffff81000100, PERF_CONTEXT_USER, 0xc38dc2,
                        UINT64_MAX}));
  EXPECT_TRUE(chain_of({PERF_CONTEXT_USER, 0x401000, PERF_CONTEXT_MAX}));
  EXPECT_FALSE(IsUnknownContext(PERF_CONTEXT_MAX - 1));
}

TEST_P(RecordsTest, CommForkExitLostThrottle) {
  bool swap = GetParam();
  EventAttr attr = MakeAttr(true);
  CommRecord c;
  c.pid = 5;
  c.tid = 6;
  c.comm = "worker";
  c.exec = true;
  c.sample_id = Sid(5, 1);
  auto co = ParseComm(View(*BuildComm(c, &attr, swap), swap), &attr);
  ASSERT_TRUE(co.ok());
  EXPECT_EQ("worker", co->comm);
  EXPECT_TRUE(co->exec);
  EXPECT_EQ(6u, co->tid);

  TaskRecord t;
  t.pid = 10;
  t.ppid = 9;
  t.tid = 11;
  t.ptid = 9;
  t.time = 77;
  t.sample_id = Sid(10, 77);
  for (uint32_t type : {PERF_RECORD_FORK, PERF_RECORD_EXIT}) {
    RecordBytes b = BuildTask(type, t, &attr, swap);
    RecordView v = View(b, swap);
    EXPECT_EQ(type, v.header.type);
    auto to = ParseTask(v, &attr);
    ASSERT_TRUE(to.ok());
    EXPECT_EQ(10u, to->pid);
    EXPECT_EQ(9u, to->ppid);
    EXPECT_EQ(11u, to->tid);
    EXPECT_EQ(77u, to->time);
    EXPECT_EQ(42u, RecordEventId(v, attr));
  }

  LostRecord l;
  l.id = 42;
  l.lost = 17;
  l.sample_id = Sid(0, 5);
  auto lo = ParseLost(View(BuildLost(l, &attr, swap), swap), &attr);
  ASSERT_TRUE(lo.ok());
  EXPECT_EQ(17u, lo->lost);

  LostSamplesRecord ls;
  ls.lost = 3;
  auto lso = ParseLostSamples(View(BuildLostSamples(ls, &attr, swap), swap), &attr);
  ASSERT_TRUE(lso.ok());
  EXPECT_EQ(3u, lso->lost);

  ThrottleRecord th;
  th.unthrottle = true;
  th.time = 8;
  th.id = 42;
  th.stream_id = 43;
  RecordBytes tb = BuildThrottle(th, &attr, swap);
  EXPECT_EQ(static_cast<uint32_t>(PERF_RECORD_UNTHROTTLE), View(tb, swap).header.type);
  auto tho = ParseThrottle(View(tb, swap), &attr);
  ASSERT_TRUE(tho.ok());
  EXPECT_TRUE(tho->unthrottle);
  EXPECT_EQ(43u, tho->stream_id);
}

TEST_P(RecordsTest, HeaderBuildId) {
  bool swap = GetParam();
  BuildId id = *BuildId::FromHex("aabbccdd");
  RecordBytes b = *BuildHeaderBuildId(-1, PERF_RECORD_MISC_USER, id, "/bin/true", swap);
  // perf 6.1 layout: 36 bytes, then the name padded to 64; then 4 bytes more, so that the
  // record's size is a multiple of 8, which perf 7.x requires of every record.
  EXPECT_EQ(36u + 64u + 4u, b.size());
  EXPECT_EQ(0u, b.size() % 8);
  auto out = ParseHeaderBuildId(View(b, swap));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(-1, out->pid);
  EXPECT_EQ(id, out->build_id);
  EXPECT_EQ("/bin/true", out->filename);
}

INSTANTIATE_TEST_SUITE_P(ByteOrder, RecordsTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Swapped" : "Native"; });

// The leak seen on 6.18.44: the misc bit on a record whose event did not ask for build ids.
// Its union holds maj/min/ino; reading it as an id would invent one.
TEST(Mmap2TrustTest, BitIgnoredWithoutAttrBuildId) {
  EventAttr with = MakeAttr(true), without = MakeAttr(false);
  RecordBytes b = *BuildMmap2(SomeMmap2(false), PERF_RECORD_MISC_USER, &without);
  b[5] |= kMiscMmapBuildId >> 8;  // set bit 14 of misc (little-endian host)
  RecordView v = View(b);
  ASSERT_TRUE(v.header.misc & kMiscMmapBuildId);
  auto m = ParseMmap2(v, &without);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->has_build_id);
  EXPECT_TRUE(m->misc_bit_untrusted);
  EXPECT_EQ(8u, m->maj);
  EXPECT_EQ(123456u, m->ino);
  // No attr at all: not trusted either.
  auto n = ParseMmap2(v, nullptr);
  ASSERT_FALSE(n.ok() && n->has_build_id);
  // Why the attr matters: read as an id, maj=8 is a plausible size and yields a made-up id.
  auto w = ParseMmap2(v, &with);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(8u, w->build_id.size());
  // A size byte outside 1..20 under a build_id event is an error naming the field.
  b[40] = 0x30;
  auto bad = ParseMmap2(View(b), &with);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ("mmap2.build_id_size", bad.error().field);
  EXPECT_EQ(40u, bad.error().offset);
}

TEST(RecordErrorsTest, TruncatedRecordsNameFieldAndOffset) {
  EventAttr attr = MakeAttr(true);
  RecordBytes b = *BuildMmap2(SomeMmap2(true), PERF_RECORD_MISC_USER, &attr);
  // Header says more than is there.
  auto h = ParseRecordHeader(b.data(), b.size() - 8, false, 0x100);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ("record.header.size", h.error().field);
  EXPECT_EQ(0x106u, h.error().offset);
  // Size below the header itself.
  RecordBytes tiny = b;
  tiny[6] = 4;
  tiny[7] = 0;
  EXPECT_FALSE(ParseRecordHeader(tiny.data(), tiny.size(), false, 0).ok());
  // A record claiming 48 bytes cannot hold an MMAP2.
  RecordBytes small(b.begin(), b.begin() + 48);
  small[6] = 48;
  small[7] = 0;
  RecordView v = View(small);
  auto m = ParseMmap2(v, &attr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ("mmap2.header.size", m.error().field);
  // Filename without NUL before the sample_id block.
  RecordBytes nonul = *BuildMmap2(SomeMmap2(false), 0, nullptr);
  for (size_t i = 72; i < nonul.size(); i++)
    nonul[i] = 'x';
  auto mm = ParseMmap2(View(nonul), nullptr);
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ("mmap2.filename", mm.error().field);
  EXPECT_EQ(72u, mm.error().offset);
  // Callchain count beyond the record.
  SampleRecord s;
  RecordBytes sb = *BuildSample(s, {1, 2}, attr);
  size_t nr_off = 8 + 8 * 6;  // identifier, ip, tid, time, cpu, period
  sb[nr_off] = 200;
  auto so = ParseSample(View(sb), attr);
  ASSERT_FALSE(so.ok());
  EXPECT_EQ("sample.callchain.nr", so.error().field);
  EXPECT_EQ(nr_off, so.error().offset);
}

// A sample cut short anywhere in its fixed fields fails naming the first field that is not
// there, at its offset, whether the fields are read one by one or in one go.
TEST(RecordErrorsTest, SampleCutShortNamesTheFirstMissingField) {
  EventAttr attr = MakeAttr(true);  // identifier, ip, tid, time, cpu, period, callchain
  SampleRecord s;
  s.sample_id = Sid(7, 999);
  RecordBytes full = *BuildSample(s, {1, 2}, attr);
  const char* fields[] = {"sample.identifier", "sample.ip",     "sample.tid",         "sample.time",
                          "sample.cpu",        "sample.period", "sample.callchain.nr"};
  for (size_t k = 0; k < std::size(fields); k++) {
    RecordBytes cut = full;  // the bytes stay: only the record's size says they are not its
    cut[6] = static_cast<uint8_t>(8 + 8 * k);
    cut[7] = 0;
    auto so = ParseSample(View(cut), attr);
    ASSERT_FALSE(so.ok()) << "record of " << 8 + 8 * k << " bytes";
    EXPECT_EQ(fields[k], so.error().field);
    EXPECT_EQ(8 + 8 * k, so.error().offset);
  }
  auto so = ParseSample(View(full), attr);
  ASSERT_TRUE(so.ok()) << so.error().ToString();
  EXPECT_EQ(999u, so->sample_id.time);
}

// An attr that samples PERIOD and each field of `optional` whose bit is set in mask.
template <size_t N>
EventAttr AttrSampling(const uint64_t (&optional)[N], uint32_t mask) {
  EventAttr attr = MakeAttr(true);
  attr.attr.sample_type = PERF_SAMPLE_PERIOD;
  for (size_t b = 0; b < N; b++) {
    if (mask & (1u << b))
      attr.attr.sample_type |= optional[b];
  }
  return attr;
}

// The session orders records by the time these read in place, and finds their event by the id
// read in place; they must be what the decoders find, whatever fields come before them, in
// both byte orders.
TEST_P(RecordsTest, TimesAndIdsReadInPlaceAreTheDecoders) {
  bool swap = GetParam();
  constexpr uint64_t kOptional[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,  PERF_SAMPLE_TID,
                                    PERF_SAMPLE_TIME,       PERF_SAMPLE_ID,  PERF_SAMPLE_CPU,
                                    PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_ADDR};
  for (uint32_t mask = 0; mask < (1u << std::size(kOptional)); mask++) {
    EventAttr attr = AttrSampling(kOptional, mask);
    SCOPED_TRACE("sample_type " + std::to_string(attr.attr.sample_type));
    SampleRecord s;
    s.ip = 0x401000;
    s.sample_id = Sid(7, 999);
    RecordBytes sample = *BuildSample(s, {}, attr, swap);
    auto ps = ParseSample(View(sample, swap), attr);
    ASSERT_TRUE(ps.ok()) << ps.error().ToString();
    EXPECT_EQ(std::optional<uint64_t>(ps->sample_id.time), SampleTime(View(sample, swap), attr));
    bool has_id = attr.attr.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER);
    EXPECT_EQ(has_id ? 42u : 0u, ps->sample_id.id);
    EXPECT_EQ(ps->sample_id.id, RecordEventId(View(sample, swap), attr));

    CommRecord c;
    c.pid = c.tid = 7;
    c.comm = "worker";
    c.sample_id = Sid(7, 555);
    RecordBytes comm = *BuildComm(c, &attr, swap);
    auto pi = ParseSampleId(View(comm, swap), &attr);
    ASSERT_TRUE(pi.ok()) << pi.error().ToString();
    EXPECT_EQ(std::optional<uint64_t>(pi->time), SampleIdTime(View(comm, swap), attr));
    EXPECT_EQ(has_id ? 42u : 0u, pi->id);
    EXPECT_EQ(pi->id, RecordEventId(View(comm, swap), attr));
  }
}

// The key a replay without callbacks reads in place is ParseSample's, and it is read exactly
// when ParseSample succeeds: for every mix of the fixed fields, with and without a callchain
// or a tail field (which ParseSample must decode), for the record cut at every length and for
// a callchain count past its end, in both byte orders.
TEST_P(RecordsTest, SampleKeysAreParseSamplesFieldsWhenItSucceeds) {
  bool swap = GetParam();
  constexpr uint64_t kOptional[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,        PERF_SAMPLE_TID,
                                    PERF_SAMPLE_TIME,       PERF_SAMPLE_ID,        PERF_SAMPLE_CPU,
                                    PERF_SAMPLE_ADDR,       PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW};
  size_t keys = 0, fails = 0;
  for (uint32_t mask = 0; mask < (1u << std::size(kOptional)); mask++) {
    EventAttr attr = AttrSampling(kOptional, mask);
    SCOPED_TRACE("sample_type " + std::to_string(attr.attr.sample_type));
    SampleRecord s;
    s.cpumode = PERF_RECORD_MISC_KERNEL;
    s.ip = 0xffffffff81000010;
    s.sample_id = Sid(7, 999);
    SampleTail tail;
    tail.raw = {1, 2, 3, 4};
    RecordBytes full = *BuildSample(s, {0x401000, 0x402000}, tail, attr, swap);
    std::vector<RecordBytes> variants;
    for (size_t size = 8; size <= full.size(); size += 8) {
      RecordBytes cut = full;  // the bytes stay: only the record's size says they are not its
      uint16_t size16 = static_cast<uint16_t>(size);
      cut[6] = static_cast<uint8_t>(swap ? size16 >> 8 : size16 & 0xff);
      cut[7] = static_cast<uint8_t>(swap ? size16 & 0xff : size16 >> 8);
      variants.push_back(cut);
    }
    if (attr.attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
      size_t nr_off =
          8 + 8 * static_cast<size_t>(__builtin_popcountll(
                      attr.attr.sample_type & ~(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)));
      for (uint8_t nr : {3, 200}) {
        RecordBytes bad = full;
        bad[swap ? nr_off + 7 : nr_off] = nr;
        variants.push_back(bad);
      }
    }
    for (const RecordBytes& b : variants) {
      RecordView v = View(b, swap);
      auto ps = ParseSample(v, attr);
      SampleKey key;
      bool got = ParseSampleKey(v, attr, &key);
      ASSERT_EQ(ps.ok(), got) << "record of " << v.header.size << " bytes";
      if (!got) {
        fails++;
        continue;
      }
      keys++;
      EXPECT_EQ(ps->sample_id.time, key.time);
      EXPECT_EQ(ps->ip, key.ip);
      EXPECT_EQ(ps->sample_id.pid, key.pid);
      EXPECT_EQ(ps->cpumode, key.cpumode);
    }
  }
  EXPECT_GT(keys, 0u);
  EXPECT_GT(fails, 0u);
}

TEST(RecordErrorsTest, TimesReadInPlaceNeedTheRecordToHoldThem) {
  EventAttr attr = MakeAttr(true);  // identifier, ip, tid, time, ...
  SampleRecord s;
  s.sample_id = Sid(7, 999);
  RecordBytes sample = *BuildSample(s, {}, attr);
  sample[6] = 8 + 3 * 8;  // ends before the time
  sample[7] = 0;
  EXPECT_EQ(std::nullopt, SampleTime(View(sample), attr));
  sample[6] = 8 + 4 * 8;  // holds it
  EXPECT_EQ(std::optional<uint64_t>(999), SampleTime(View(sample), attr));

  CommRecord c;
  c.pid = c.tid = 7;
  c.comm = "worker";
  c.sample_id = Sid(7, 555);
  RecordBytes comm = *BuildComm(c, &attr);
  comm[6] = static_cast<uint8_t>(8 + attr.SampleIdSize() - 8);
  comm[7] = 0;
  EXPECT_EQ(std::nullopt, SampleIdTime(View(comm), attr));
}

// The id read in place is read only from records that carry one, and only within the record.
TEST(RecordErrorsTest, IdsReadInPlaceNeedTheRecordToHoldThem) {
  auto resize = [](RecordBytes* b, size_t size) {
    (*b)[6] = static_cast<uint8_t>(size);
    (*b)[7] = static_cast<uint8_t>(size >> 8);
  };
  EventAttr ident = MakeAttr(true);  // IDENTIFIER: first in a sample, last in a sample_id
  EventAttr id = MakeAttr(true);     // ID: after IP, TID, TIME; before CPU in a sample_id
  id.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                        PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  for (const EventAttr* attr : {&ident, &id}) {
    SCOPED_TRACE("sample_type " + std::to_string(attr->attr.sample_type));
    SampleRecord s;
    s.sample_id = Sid(7, 999);
    RecordBytes sample = *BuildSample(s, {}, *attr);
    size_t at = attr == &ident ? 8 : 32;
    resize(&sample, at + 7);
    EXPECT_EQ(0u, RecordEventId(View(sample), *attr));
    resize(&sample, at + 8);
    EXPECT_EQ(42u, RecordEventId(View(sample), *attr));

    CommRecord c;
    c.pid = c.tid = 7;
    c.comm = "worker";
    c.sample_id = Sid(7, 555);
    RecordBytes comm = *BuildComm(c, attr);
    EXPECT_EQ(42u, RecordEventId(View(comm), *attr));
    // Records of the tool's own types carry no sample_id, whatever their last bytes hold.
    comm[0] = kRecordHeaderAttr;
    EXPECT_EQ(0u, RecordEventId(View(comm), *attr));
    comm[0] = PERF_RECORD_COMM;
    size_t back = attr == &ident ? 8 : 16;
    resize(&comm, back + 7);
    EXPECT_EQ(0u, RecordEventId(View(comm), *attr));
    resize(&comm, back + 8);  // the id would be the 8 bytes after the header
    uint64_t after_header;
    memcpy(&after_header, comm.data() + 8, 8);
    EXPECT_EQ(after_header, RecordEventId(View(comm), *attr));

    EventAttr no_sample_id = *attr;
    no_sample_id.attr.sample_id_all = 0;
    RecordBytes bare = *BuildComm(c, &no_sample_id);
    EXPECT_EQ(0u, RecordEventId(View(bare), no_sample_id));
  }
}

// A sample with every field after the callchain that ParseSample decodes: the layout of
// `perf record --call-graph dwarf -b`, with a branch stack that has its hw_idx.
EventAttr TailAttr() {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
                       PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  a.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
  a.attr.sample_regs_user = 0b1011;  // three registers: 0, 1 and 3
  return a;
}

SampleTail SomeTail() {
  SampleTail t;
  t.raw = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 4 + 12: the next field stays aligned
  t.branch_hw_idx = 77;
  t.branches = {{0x1000, 0x2000, 0x3}, {0x4000, 0x5000, 0x6}};
  t.regs = {100, 101, 103};
  t.stack.resize(64);
  for (size_t i = 0; i < t.stack.size(); i++)
    t.stack[i] = static_cast<uint8_t>(i);
  t.stack_dyn_size = 40;
  return t;
}

// Where SomeTail's fields are in a TailAttr sample: header, ip, tid, callchain of one entry.
constexpr size_t kRawAt = 40, kBranchAt = 56, kHwIdxAt = 64, kRegsAt = 120, kStackAt = 152,
                 kDynSizeAt = 224, kTailEnd = 232;

TEST_P(RecordsTest, SampleTailFieldsInPlace) {
  bool swap = GetParam();
  EventAttr attr = TailAttr();
  SampleRecord s;
  s.ip = 0x401000;
  RecordBytes b = *BuildSample(s, {0x401000}, SomeTail(), attr, swap);
  ASSERT_EQ(kTailEnd, b.size());
  RecordView v = View(b, swap);
  auto out = ParseSample(v, attr);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  RawView raw = out->raw(v);
  ASSERT_EQ(12u, raw.size);
  EXPECT_EQ(0, memcmp(raw.data, SomeTail().raw.data(), 12));
  EXPECT_EQ(b.data() + kRawAt + 4, raw.data);  // a view, not a copy
  EXPECT_EQ(77u, out->branch_hw_idx(v, attr));
  BranchStackView br = out->branch_stack(v, attr);
  ASSERT_EQ(2u, br.size());
  EXPECT_EQ(0x4000u, br[1].from);
  EXPECT_EQ(0x5000u, br[1].to);
  EXPECT_EQ(0x6u, br[1].flags);
  RegsView regs = out->regs_user(v, attr);
  EXPECT_EQ(uint64_t{PERF_SAMPLE_REGS_ABI_64}, regs.abi());
  ASSERT_EQ(3u, regs.size());
  EXPECT_EQ(101u, regs[1]);
  EXPECT_EQ(std::optional<uint64_t>(103), regs.Get(3));  // the third value: bit 2 is not set
  EXPECT_EQ(std::nullopt, regs.Get(2));
  EXPECT_EQ(std::nullopt, regs.Get(64));
  StackView stack = out->stack_user(v);
  EXPECT_EQ(64u, stack.size);
  EXPECT_EQ(40u, stack.valid_size());
  EXPECT_EQ(b.data() + kStackAt + 8, stack.data);
  EXPECT_EQ(63, stack.data[63]);
  EXPECT_EQ(0x401000u, out->callchain[0]);

  // Without the hw_idx bit the branch entries follow nr directly.
  EventAttr no_idx = attr;
  no_idx.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  RecordBytes c = *BuildSample(s, {0x401000}, SomeTail(), no_idx, swap);
  ASSERT_EQ(kTailEnd - 8, c.size());
  RecordView cv = View(c, swap);
  auto co = ParseSample(cv, no_idx);
  ASSERT_TRUE(co.ok()) << co.error().ToString();
  EXPECT_EQ(0u, co->branch_hw_idx(cv, no_idx));
  EXPECT_EQ(0x1000u, co->branch_stack(cv, no_idx)[0].from);
  EXPECT_EQ(3u, co->regs_user(cv, no_idx).size());
}

// A sample in a kernel thread has no user registers (ABI_NONE, no values) and an empty stack
// copy (size 0, no dyn_size); the fields after them are still found.
TEST(RecordsTailTest, NoUserRegistersNoStack) {
  EventAttr attr = TailAttr();
  SampleTail t = SomeTail();
  t.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
  t.stack.clear();
  SampleRecord s;
  RecordBytes b = *BuildSample(s, {1}, t, attr);
  ASSERT_EQ(kRegsAt + 8 + 8, b.size());
  RecordView v = View(b);
  auto out = ParseSample(v, attr);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(uint64_t{PERF_SAMPLE_REGS_ABI_NONE}, out->regs_user(v, attr).abi());
  EXPECT_EQ(0u, out->regs_user(v, attr).size());
  EXPECT_EQ(std::nullopt, out->regs_user(v, attr).Get(0));
  EXPECT_EQ(nullptr, out->stack_user(v).data);
  EXPECT_EQ(0u, out->stack_user(v).size);
  // A sample without these bits has empty views.
  EventAttr plain = MakeAttr(true);
  RecordBytes p = *BuildSample(s, {1}, plain);
  auto po = ParseSample(View(p), plain);
  ASSERT_TRUE(po.ok());
  EXPECT_EQ(0u, po->regs_user(View(p), plain).size());
  EXPECT_EQ(0u, po->stack_user(View(p)).size);
  EXPECT_EQ(0u, po->raw(View(p)).size);
  EXPECT_EQ(0u, po->branch_stack(View(p), plain).size());
}

// A sample cut short anywhere in the fields after the callchain fails naming the field, at
// its offset; a count or size that the record cannot hold names the count.
TEST(RecordErrorsTest, SampleTailCutShortNamesTheField) {
  EventAttr attr = TailAttr();
  SampleRecord s;
  RecordBytes full = *BuildSample(s, {0x401000}, SomeTail(), attr);
  struct Cut {
    size_t size;
    const char* field;
    size_t offset;
  };
  const Cut cuts[] = {
      {kRawAt + 2, "sample.raw.size", kRawAt},
      {kRawAt + 10, "sample.raw.size", kRawAt},
      {kBranchAt + 4, "sample.branch_stack.nr", kBranchAt},
      {kHwIdxAt + 4, "sample.branch_stack.hw_idx", kHwIdxAt},
      {kHwIdxAt + 8 + 30, "sample.branch_stack.nr", kBranchAt},
      {kRegsAt + 4, "sample.regs_user.abi", kRegsAt},
      {kRegsAt + 8 + 16, "sample.regs_user.regs", kRegsAt + 8},
      {kStackAt + 4, "sample.stack_user.size", kStackAt},
      {kStackAt + 8 + 32, "sample.stack_user.size", kStackAt},
      {kDynSizeAt + 4, "sample.stack_user.dyn_size", kDynSizeAt},
  };
  for (const Cut& c : cuts) {
    RecordBytes cut = full;  // the bytes stay: only the record's size says they are not its
    cut[6] = static_cast<uint8_t>(c.size);
    cut[7] = static_cast<uint8_t>(c.size >> 8);
    auto so = ParseSample(View(cut), attr);
    ASSERT_FALSE(so.ok()) << "record of " << c.size << " bytes";
    EXPECT_EQ(c.field, so.error().field) << "record of " << c.size << " bytes";
    EXPECT_EQ(c.offset, so.error().offset) << "record of " << c.size << " bytes";
  }
  // Values no kernel writes.
  SampleTail t = SomeTail();
  t.stack_dyn_size = 65;
  auto dyn = ParseSample(View(*BuildSample(s, {1}, t, attr)), attr);
  ASSERT_FALSE(dyn.ok());
  EXPECT_EQ("sample.stack_user.dyn_size", dyn.error().field);
  EXPECT_EQ(kDynSizeAt, dyn.error().offset);
  t = SomeTail();
  t.regs_abi = 3;
  auto abi = ParseSample(View(*BuildSample(s, {1}, t, attr)), attr);
  ASSERT_FALSE(abi.ok());
  EXPECT_EQ("sample.regs_user.abi", abi.error().field);
  EXPECT_EQ(kRegsAt, abi.error().offset);
  // More registers in the mask than the record holds values for.
  EventAttr more = attr;
  more.attr.sample_regs_user = 0xffff;
  auto regs = ParseSample(View(full), more);
  ASSERT_FALSE(regs.ok());
  EXPECT_EQ("sample.regs_user.regs", regs.error().field);
  EXPECT_EQ(kRegsAt + 8, regs.error().offset);
}

TEST(AttrCodecTest, RoundTripBothOrders) {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_freq = 999;
  a.freq = 1;
  a.sample_type = 0x10187;
  a.mmap = 1;
  a.mmap2 = 1;
  a.build_id = 1;
  a.sample_id_all = 1;
  a.wakeup_watermark = 4096;
  a.sample_max_stack = 127;
  for (bool swap : {false, true}) {
    auto bytes = EncodeAttr(a, swap);
    ASSERT_EQ(kWrittenAttrSize, bytes.size());
    auto out = DecodeAttr(bytes.data(), bytes.size(), swap, 0);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(a.config, out->config);
    EXPECT_EQ(999u, out->sample_freq);
    EXPECT_EQ(a.sample_type, out->sample_type);
    EXPECT_EQ(1u, out->freq);
    EXPECT_EQ(1u, out->build_id);
    EXPECT_EQ(1u, out->mmap2);
    EXPECT_EQ(0u, out->inherit);
    EXPECT_EQ(4096u, out->wakeup_watermark);
    EXPECT_EQ(127u, out->sample_max_stack);
  }
  auto bytes = EncodeAttr(a, false);
  auto small = DecodeAttr(bytes.data(), 60, false, 0x40);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ("attr.size", small.error().field);
}

}  // namespace
}  // namespace pbid
