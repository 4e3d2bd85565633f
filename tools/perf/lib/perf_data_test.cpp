// SPDX-License-Identifier: GPL-2.0
//
// perf.data writer -> reader round trips, the other byte order, and corrupt input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string_view>
#include <thread>

#include "../lib/byte_io.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "pbid/session.h"
#include "util/test_util.h"

namespace pbid {
namespace {

EventAttr Attr(std::vector<uint64_t> ids, bool build_id = true) {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  a.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  a.attr.sample_id_all = 1;
  a.attr.mmap = 1;
  a.attr.mmap2 = 1;
  a.attr.build_id = build_id;
  a.attr.freq = 1;
  a.attr.sample_freq = 999;
  a.ids = std::move(ids);
  a.name = "cpu-clock";
  return a;
}

using testing::Records;
using testing::TempPath;

std::vector<uint8_t> ReadAll(const std::string& path) {
  return testing::ReadBytes(path);
}

const BuildId kLibId = *BuildId::FromHex("1111111111111111111111111111111111111111");
const BuildId kExeId = *BuildId::FromHex("22222222222222222222222222222222");

// A MMAP2 of pid 10 at 0x400000 with build id kExeId, for the event with sample id `id`.
Mmap2Record ExeMmap2(std::string_view path, uint64_t id) {
  Mmap2Record m;
  m.pid = m.tid = 10;
  m.start = 0x400000;
  m.len = 0x1000;
  m.filename = path;
  m.has_build_id = true;
  m.build_id = kExeId;
  m.sample_id.pid = m.sample_id.tid = 10;
  m.sample_id.id = id;
  return m;
}

// A small but complete recording: synthesized + kernel MMAP2s, a leaked-bit record from an
// event without build ids, a fallback id record, samples, fork and lost records.
std::vector<RecordBytes> Records(const EventAttr& a, const EventAttr& b, bool swap) {
  std::vector<RecordBytes> out;
  auto sid = [](uint32_t pid, uint64_t time, uint64_t id) {
    SampleId s;
    s.pid = pid;
    s.tid = pid;
    s.time = time;
    s.id = id;
    return s;
  };
  Mmap2Record exe;
  exe.pid = exe.tid = 10;
  exe.start = 0x400000;
  exe.len = 0x1000;
  exe.prot = 5;
  exe.filename = "/bin/exe";
  exe.has_build_id = true;
  exe.build_id = kExeId;
  exe.sample_id = sid(10, 0, a.ids[0]);
  out.push_back(*BuildMmap2(exe, PERF_RECORD_MISC_USER, &a, swap));
  out.push_back(BuildEmptyRecord(kRecordFinishedInit, swap));
  CommRecord c;
  c.pid = c.tid = 10;
  c.comm = "exe";
  c.sample_id = sid(10, 5, a.ids[0]);
  out.push_back(*BuildComm(c, &a, swap));
  Mmap2Record lib = exe;
  lib.start = 0x7f0000000000;
  lib.len = 0x2000;
  lib.filename = "/lib/libx.so";
  lib.build_id = kLibId;
  lib.sample_id = sid(10, 10, a.ids[0]);
  out.push_back(*BuildMmap2(lib, PERF_RECORD_MISC_USER, &a, swap));
  // Event b has no attr.build_id; the kernel leaked the misc bit onto its record.
  Mmap2Record leak;
  leak.pid = leak.tid = 10;
  leak.start = 0x7f1000000000;
  leak.len = 0x1000;
  leak.filename = "/lib/leaky.so";
  leak.maj = 8;
  leak.ino = 99;
  leak.sample_id = sid(10, 11, b.ids[0]);
  RecordBytes lb = *BuildMmap2(leak, PERF_RECORD_MISC_USER, &b, swap);
  uint16_t misc = PERF_RECORD_MISC_USER | kMiscMmapBuildId;
  if (swap)
    misc = internal::Swap16(misc);
  memcpy(lb.data() + 4, &misc, 2);
  out.push_back(lb);
  // A mapping without a kernel id, followed by the id the recorder read from the file.
  Mmap2Record fb = leak;
  fb.start = 0x7f2000000000;
  fb.filename = "/lib/fallback.so";
  fb.sample_id = sid(10, 12, a.ids[0]);
  out.push_back(*BuildMmap2(fb, PERF_RECORD_MISC_USER, &a, swap));
  out.push_back(*BuildHeaderBuildId(-1, PERF_RECORD_MISC_USER, kLibId, "/lib/fallback.so", swap));
  TaskRecord f;
  f.pid = f.tid = 11;
  f.ppid = f.ptid = 10;
  f.time = 15;
  f.sample_id = sid(11, 15, a.ids[0]);
  out.push_back(BuildTask(PERF_RECORD_FORK, f, &a, swap));
  for (uint64_t i = 0; i < 5; i++) {
    SampleRecord s;
    s.cpumode = PERF_RECORD_MISC_USER;
    s.ip = (i % 2 ? 0x7f0000000100 : 0x400100);
    s.period = 1000;
    s.sample_id = sid(i < 4 ? 10 : 11, 20 + i, a.ids[i % 2]);
    out.push_back(*BuildSample(s, {}, a, swap));
  }
  LostRecord l;
  l.id = a.ids[0];
  l.lost = 3;
  l.sample_id = sid(10, 30, a.ids[0]);
  out.push_back(BuildLost(l, &a, swap));
  out.push_back(BuildEmptyRecord(kRecordFinishedRound, swap));
  return out;
}

std::string WriteFile(const char* name) {
  std::string path = TempPath(name);
  EventAttr a = Attr({1, 2}), b = Attr({3}, false);
  b.name = "task-clock";
  auto w = PerfDataWriter::Create(path, {a, b});
  EXPECT_TRUE(w.ok()) << w.error().ToString();
  for (const RecordBytes& r : Records(a, b, false)) {
    EXPECT_TRUE((*w)->WriteRecord(r).ok());
  }
  Features f;
  f.hostname = "host";
  f.osrelease = "5.10.0";
  f.version = "test";
  f.arch = "x86_64";
  f.nr_cpus_avail = 4;
  f.nr_cpus_online = 2;
  f.cpudesc = "Test CPU";
  f.cmdline = std::vector<std::string>{"/usr/bin/perf-buildid", "record", "--", "exe"};
  f.build_ids = std::vector<BuildIdEntry>{{-1, PERF_RECORD_MISC_USER, kLibId, "/lib/libx.so"},
                                          {-1, PERF_RECORD_MISC_USER, kExeId, "/bin/exe"}};
  Status s = (*w)->Finish(f);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return path;
}

void ExpectContent(const PerfDataReader& r) {
  ASSERT_EQ(2u, r.attrs().size());
  EXPECT_EQ((std::vector<uint64_t>{1, 2}), r.attrs()[0].ids);
  EXPECT_EQ("cpu-clock", r.attrs()[0].name);
  EXPECT_EQ("task-clock", r.attrs()[1].name);
  EXPECT_EQ(1u, r.attrs()[0].attr.build_id);
  EXPECT_EQ(0u, r.attrs()[1].attr.build_id);
  EXPECT_EQ(999u, r.attrs()[0].attr.sample_freq);
  EXPECT_EQ(15u, Records(r).size());
}

TEST(PerfDataTest, WriteReadRoundTrip) {
  std::string path = WriteFile("rt.data");
  auto r = PerfDataReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const PerfDataReader& rd = **r;
  EXPECT_FALSE(rd.swapped());
  ExpectContent(rd);
  const Features& f = rd.features();
  EXPECT_EQ("host", f.hostname.value_or(""));
  EXPECT_EQ("5.10.0", f.osrelease.value_or(""));
  EXPECT_EQ("x86_64", f.arch.value_or(""));
  EXPECT_EQ("Test CPU", f.cpudesc.value_or(""));
  EXPECT_EQ(4u, f.nr_cpus_avail.value_or(0));
  EXPECT_EQ(2u, f.nr_cpus_online.value_or(0));
  ASSERT_TRUE(f.cmdline);
  EXPECT_EQ(4u, f.cmdline->size());
  ASSERT_TRUE(f.build_ids);
  ASSERT_EQ(2u, f.build_ids->size());
  EXPECT_EQ(kExeId, (*f.build_ids)[1].build_id);
  EXPECT_EQ(16u, (*f.build_ids)[1].build_id.size());
  EXPECT_EQ("/bin/exe", (*f.build_ids)[1].filename);
  for (int bit : {kFeatBuildId, kFeatHostname, kFeatOsrelease, kFeatVersion, kFeatArch, kFeatNrcpus,
                  kFeatCpudesc, kFeatCmdline, kFeatEventDesc}) {
    EXPECT_TRUE(rd.HasFeature(bit)) << bit;
  }

  // Read -> write -> read: records copied verbatim give an identical data section.
  std::string copy = TempPath("copy.data");
  auto w = PerfDataWriter::Create(copy, rd.attrs());
  ASSERT_TRUE(w.ok());
  for (const RecordView& v : Records(rd))
    ASSERT_TRUE((*w)->WriteRecord(v.data, v.header.size).ok());
  ASSERT_TRUE((*w)->Finish(rd.features()).ok());
  auto r2 = PerfDataReader::Open(copy);
  ASSERT_TRUE(r2.ok()) << r2.error().ToString();
  ExpectContent(**r2);
  std::vector<uint8_t> a = ReadAll(path), b = ReadAll(copy);
  ASSERT_EQ(rd.data_size(), (*r2)->data_size());
  EXPECT_EQ(0,
            memcmp(a.data() + rd.data_offset(), b.data() + (*r2)->data_offset(), rd.data_size()));
  EXPECT_EQ(a, b);  // and the whole file, features included
  unlink(path.c_str());
  unlink(copy.c_str());
}

// perf assigns the feature table's entries to the header's feature bits in ascending bit
// order (perf_header__process_sections). Checked on the raw bytes, not with our own reader: a
// writer that emitted sections in any other order would shift every section after the
// misplaced one onto the wrong bit, and a reader with the same mistake would not notice.
// Long passes hand the file's pages back to the kernel; the records must read the same after.
TEST(PerfDataTest, RecordsReadTheSameAfterThePagesAreReleased) {
  std::string path = WriteFile("release.data");
  auto r = PerfDataReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::vector<uint8_t>> before;
  for (const RecordView& v : Records(**r))
    before.emplace_back(v.data, v.data + v.header.size);
  (*r)->ReleasePages();
  size_t i = 0;
  for (const RecordView& v : Records(**r)) {
    ASSERT_LT(i, before.size());
    EXPECT_EQ(before[i++], std::vector<uint8_t>(v.data, v.data + v.header.size));
  }
  EXPECT_EQ(before.size(), i);
}

TEST(PerfDataTest, FeatureSectionsFollowTheirBitsInTheTable) {
  std::string path = WriteFile("feature-order.data");
  std::vector<uint8_t> file = ReadAll(path);
  unlink(path.c_str());
  ASSERT_GE(file.size(), 104u);
  auto u32 = [&](uint64_t off) {
    uint32_t v = 0;
    EXPECT_LE(off + 4, file.size());
    if (off + 4 <= file.size())
      memcpy(&v, file.data() + off, 4);
    return v;
  };
  auto u64 = [&](uint64_t off) { return u32(off) | uint64_t{u32(off + 4)} << 32; };
  // A perf string: u32 length including padding, then the NUL-terminated text.
  auto str = [&](uint64_t off) {
    uint32_t len = u32(off);
    EXPECT_LE(off + 4 + len, file.size());
    return std::string(reinterpret_cast<const char*>(file.data() + off + 4));
  };
  uint64_t table = u64(40) + u64(48);  // data offset + data size
  std::map<int, uint64_t> section;     // bit -> offset of its payload
  std::map<int, uint64_t> size;
  for (int bit = 0; bit < 256; bit++) {
    if (!((u64(72 + 8 * (bit / 64)) >> (bit % 64)) & 1))
      continue;
    section[bit] = u64(table);
    size[bit] = u64(table + 8);
    table += 16;
  }
  ASSERT_EQ((std::vector<int>{kFeatBuildId, kFeatHostname, kFeatOsrelease, kFeatVersion, kFeatArch,
                              kFeatNrcpus, kFeatCpudesc, kFeatCmdline, kFeatEventDesc}),
            [&] {
              std::vector<int> bits;
              for (auto& [bit, off] : section)
                bits.push_back(bit);
              return bits;
            }());
  EXPECT_EQ(kRecordHeaderBuildId, u32(section[kFeatBuildId]));  // a HEADER_BUILD_ID record
  EXPECT_EQ("host", str(section[kFeatHostname]));
  EXPECT_EQ("5.10.0", str(section[kFeatOsrelease]));
  EXPECT_EQ("test", str(section[kFeatVersion]));
  EXPECT_EQ("x86_64", str(section[kFeatArch]));
  EXPECT_EQ(8u, size[kFeatNrcpus]);
  EXPECT_EQ(4u, u32(section[kFeatNrcpus]));
  EXPECT_EQ(2u, u32(section[kFeatNrcpus] + 4));
  EXPECT_EQ("Test CPU", str(section[kFeatCpudesc]));
  EXPECT_EQ(4u, u32(section[kFeatCmdline]));
  EXPECT_EQ("/usr/bin/perf-buildid", str(section[kFeatCmdline] + 4));
  EXPECT_EQ(2u, u32(section[kFeatEventDesc]));  // nr events
  EXPECT_EQ(kWrittenAttrSize, u32(section[kFeatEventDesc] + 4));
}

// The recorder's own section: read back as written, last in the file (the highest bit), and
// every bad field named.
TEST(PerfDataTest, MappingIdsSectionRoundTripsAndRejectsBadEntries) {
  EventAttr a = Attr({1}, false);
  Features f;
  MappingIdEntry bpf;
  bpf.pid = 42;
  bpf.start = 0x400000;
  bpf.pgoff = 0x1000;
  bpf.time = 123456789;
  bpf.build_id = *BuildId::FromHex("0123456789abcdef0123456789abcdef");  // 16 bytes
  MappingIdEntry disputed = bpf;
  disputed.pid = 43;
  disputed.kind = MappingIdEntry::Kind::kDisputed;
  disputed.build_id = BuildId();
  f.mapping_ids = {bpf, disputed};
  std::string path = TempPath("mapping-ids.data");
  {
    auto w = PerfDataWriter::Create(path, {a});
    ASSERT_TRUE(w.ok());
    Mmap2Record m;
    m.pid = m.tid = 42;
    m.start = 0x400000;
    m.len = 0x1000;
    m.filename = "/bin/x";
    ASSERT_TRUE((*w)->WriteRecord(*BuildMmap2(m, PERF_RECORD_MISC_USER, &a)).ok());
    ASSERT_TRUE((*w)->Finish(f).ok());
  }
  std::vector<uint8_t> file = ReadAll(path);
  unlink(path.c_str());
  auto r = PerfDataReader::FromBytes(file);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_TRUE((*r)->features().mapping_ids);
  const auto& got = *(*r)->features().mapping_ids;
  ASSERT_EQ(2u, got.size());
  EXPECT_EQ(42u, got[0].pid);
  EXPECT_EQ(0x400000u, got[0].start);
  EXPECT_EQ(0x1000u, got[0].pgoff);
  EXPECT_EQ(123456789u, got[0].time);
  EXPECT_EQ(MappingIdEntry::Kind::kBpf, got[0].kind);
  EXPECT_EQ(bpf.build_id, got[0].build_id);
  EXPECT_EQ(MappingIdEntry::Kind::kDisputed, got[1].kind);
  EXPECT_TRUE(got[1].build_id.empty());

  // The section is the last one: find it from the end of the feature table.
  auto [sec, size] = (*r)->FeatureBytes(kFeatPbidMappingIds);
  ASSERT_NE(nullptr, sec);
  ASSERT_EQ(16u + 2 * 56, size);
  const size_t at = file.size() - size;  // the payload ends the file
  auto corrupt = [&](size_t field, uint8_t value, const char* want_field) {
    std::vector<uint8_t> bad = file;
    bad[at + field] = value;
    auto br = PerfDataReader::FromBytes(bad);
    ASSERT_FALSE(br.ok()) << want_field;
    EXPECT_NE(std::string::npos, br.error().ToString().find(want_field)) << br.error().ToString();
  };
  corrupt(4, 40, "feature[PBID_MAPPING_IDS].entry_size");
  corrupt(8, 3, "feature[PBID_MAPPING_IDS].nr");
  corrupt(16 + 28, 9, "feature[PBID_MAPPING_IDS].entry[0].kind");
  corrupt(16 + 29, 21, "feature[PBID_MAPPING_IDS].entry[0].id_size");
  // Another version is skipped, not an error: the mappings just lack these ids.
  std::vector<uint8_t> later = file;
  later[at] = 2;
  auto lr = PerfDataReader::FromBytes(later);
  ASSERT_TRUE(lr.ok()) << lr.error().ToString();
  EXPECT_FALSE((*lr)->features().mapping_ids);
}

// The second section of the recorder, a mapping's Go build ID and file hash: read back as
// written, each file once, and given to the session's mapping (never as its GNU build ID).
TEST(PerfDataTest, FileIdsSectionRoundTripsIntoTheSession) {
  EventAttr a = Attr({1}, false);
  Features f;
  FileIds go, hash_only;
  go.go_build_id = "abc/def/ghi/jkl";
  uint8_t h[FileHash::kSize] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  go.file_hash = FileHash::FromBytes(h);
  hash_only.file_hash = FileHash::FromBytes(h);
  f.file_ids = MappingFileIds{{go, hash_only}, {{42, 0x400000, 0, 7, 0}, {43, 0x500000, 0, 8, 1}}};
  std::string path = TempPath("file-ids.data");
  {
    auto w = PerfDataWriter::Create(path, {a});
    ASSERT_TRUE(w.ok());
    for (uint32_t pid : {42u, 43u}) {
      Mmap2Record m;
      m.pid = m.tid = pid;
      m.start = pid == 42 ? 0x400000 : 0x500000;
      m.len = 0x1000;
      m.filename = "/bin/x";
      m.sample_id.time = pid == 42 ? 7 : 8;
      ASSERT_TRUE((*w)->WriteRecord(*BuildMmap2(m, PERF_RECORD_MISC_USER, &a)).ok());
    }
    ASSERT_TRUE((*w)->Finish(f).ok());
  }
  auto r = PerfDataReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_TRUE((*r)->features().file_ids);
  const MappingFileIds& got = *(*r)->features().file_ids;
  ASSERT_EQ(2u, got.files.size());
  EXPECT_EQ(go, got.files[0]);
  EXPECT_EQ(hash_only, got.files[1]);
  ASSERT_EQ(2u, got.mappings.size());
  EXPECT_EQ(1u, got.mappings[1].file);
  EXPECT_FALSE((*r)->features().build_ids && !(*r)->features().build_ids->empty());
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  ASSERT_EQ(2u, s.mappings().size());
  EXPECT_FALSE(s.mappings()[0].build_id);
  EXPECT_EQ(go, s.mappings()[0].file_ids);
  EXPECT_EQ(IdentityKind::kGo, BestIdentity(std::nullopt, s.mappings()[0].file_ids).kind);
  EXPECT_EQ(IdentityKind::kFileHash, BestIdentity(std::nullopt, s.mappings()[1].file_ids).kind);
  // One path, two identities: two DSOs.
  EXPECT_EQ(2u, s.dsos().size());
  unlink(path.c_str());
}

TEST(PerfDataTest, SessionSourcesAndHits) {
  std::string path = WriteFile("session.data");
  auto r = PerfDataReader::Open(path);
  ASSERT_TRUE(r.ok());
  Session s(**r);
  uint64_t seen = 0;
  ASSERT_TRUE(s.Process([&](const SampleContext& c) {
                 ASSERT_NE(nullptr, c.mapping);
                 seen++;
               }).ok());
  EXPECT_EQ(5u, seen);
  ASSERT_EQ(4u, s.mappings().size());
  const Mapping& exe = s.mappings()[0];
  EXPECT_EQ(BuildIdSource::kSynthesized, exe.source);  // before FINISHED_INIT
  EXPECT_EQ(kExeId, *exe.build_id);
  EXPECT_EQ(3u, exe.samples);
  const Mapping& lib = s.mappings()[1];
  EXPECT_EQ(BuildIdSource::kKernelRecord, lib.source);
  EXPECT_EQ(kLibId, *lib.build_id);
  EXPECT_EQ(2u, lib.samples);  // one from the forked child, which inherited the maps
  const Mapping& leak = s.mappings()[2];
  EXPECT_FALSE(leak.build_id.has_value());
  EXPECT_EQ(BuildIdSource::kNone, leak.source);
  EXPECT_EQ(99u, leak.ino);
  const Mapping& fb = s.mappings()[3];
  EXPECT_EQ(BuildIdSource::kFile, fb.source);
  EXPECT_EQ(kLibId, *fb.build_id);
  EXPECT_EQ(3u, s.stats().lost);
  EXPECT_EQ("exe", s.CommOf(10));
  EXPECT_EQ("exe", s.CommOf(11));
  unlink(path.c_str());
}

// A file written on a big-endian machine, assembled with the builders in swapped order.
TEST(PerfDataTest, ReadsOtherByteOrder) {
  using internal::ByteWriter;
  EventAttr a = Attr({1, 2}), b = Attr({3}, false);
  ByteWriter f(true);
  f.U64(0x32454c4946524550ULL);
  f.U64(104);
  f.U64(kWrittenAttrSize + 16);
  uint64_t ids_off = 104, attrs_off = ids_off + 24;
  uint64_t data_off = attrs_off + 2 * (kWrittenAttrSize + 16);
  std::vector<RecordBytes> recs = Records(a, b, true);
  // Enough after the first 8-byte record that its size read in this machine's order (0x800)
  // fits in the data section: only the byte order can tell that it is wrong.
  for (int i = 0; i < 300; i++)
    recs.push_back(BuildEmptyRecord(kRecordFinishedRound, true));
  uint64_t data_size = 0;
  for (auto& r : recs)
    data_size += r.size();
  f.U64(attrs_off);
  f.U64(2 * (kWrittenAttrSize + 16));
  f.U64(data_off);
  f.U64(data_size);
  f.U64(0);
  f.U64(0);
  f.U64(1ULL << kFeatHostname);
  f.U64(0);
  f.U64(0);
  f.U64(0);
  for (uint64_t id : {1, 2, 3})
    f.U64(id);
  uint64_t off = ids_off;
  for (const EventAttr* e : {&a, &b}) {
    auto bytes = EncodeAttr(e->attr, true);
    f.Bytes(bytes.data(), bytes.size());
    f.U64(off);
    f.U64(e->ids.size() * 8);
    off += e->ids.size() * 8;
  }
  ASSERT_EQ(data_off, f.size());
  for (auto& r : recs)
    f.Bytes(r.data(), r.size());
  uint64_t feat = f.size() + 16;
  f.U64(feat);
  f.U64(4 + 64);
  f.U32(64);
  f.PaddedString("bigendian", 64);

  auto r = PerfDataReader::FromBytes(f.buffer());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE((*r)->swapped());
  EXPECT_EQ("bigendian", (*r)->features().hostname.value_or(""));
  ASSERT_EQ(2u, (*r)->attrs().size());
  EXPECT_EQ(1u, (*r)->attrs()[0].attr.build_id);
  EXPECT_EQ(1u, (*r)->attrs()[0].attr.sample_id_all);
  EXPECT_EQ(0u, (*r)->attrs()[1].attr.build_id);
  EXPECT_EQ(a.attr.sample_type, (*r)->attrs()[0].attr.sample_type);
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  ASSERT_EQ(4u, s.mappings().size());
  EXPECT_EQ(kExeId, *s.mappings()[0].build_id);
  EXPECT_EQ(kLibId, *s.mappings()[1].build_id);
  EXPECT_FALSE(s.mappings()[2].build_id.has_value());
  EXPECT_EQ(99u, s.mappings()[2].ino);
  EXPECT_EQ(5u, s.stats().samples);
  EXPECT_EQ(0u, s.stats().unresolved);
}

TEST(PerfDataTest, EveryTruncationIsRejectedWithFieldAndOffset) {
  std::string path = WriteFile("trunc.data");
  std::vector<uint8_t> all = ReadAll(path);
  unlink(path.c_str());
  ASSERT_TRUE(PerfDataReader::FromBytes(all).ok());
  for (size_t n = 0; n < all.size(); n++) {
    auto r = PerfDataReader::FromBytes(std::vector<uint8_t>(all.begin(), all.begin() + n));
    ASSERT_FALSE(r.ok()) << "truncated to " << n << " bytes was accepted";
    EXPECT_FALSE(r.error().field.empty());
    EXPECT_TRUE(r.error().has_offset()) << r.error().ToString();
  }
}

TEST(PerfDataTest, CorruptHeaderFieldsNameTheField) {
  std::string path = WriteFile("corrupt.data");
  std::vector<uint8_t> all = ReadAll(path);
  unlink(path.c_str());
  struct Case {
    size_t off;
    uint64_t value;
    const char* field;
    uint64_t err_off;
  } cases[] = {
      {8, 99, "header.size", 8},
      {16, 8, "header.attr_size", 16},
      {24, 1ULL << 40, "header.attrs", 24},
      {32, 145, "header.attrs.size", 32},
      {40, 1ULL << 40, "header.data", 40},
      {48, ~0ULL, "header.data", 40},  // offset + size overflows
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bad = all;
    memcpy(bad.data() + c.off, &c.value, 8);
    auto r = PerfDataReader::FromBytes(bad);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(c.field, r.error().field);
    EXPECT_EQ(c.err_off, r.error().offset) << r.error().ToString();
  }
}

// With several events, a record whose id no attr owns must not borrow the first attr: that
// one has attr.build_id, so the MMAP2 build-id bit would be trusted for an unknown event.
TEST(PerfDataTest, UnknownIdGivesNoAttrAndUntrustedBuildId) {
  std::string path = TempPath("unknown-id.data");
  EventAttr a = Attr({1, 2}), b = Attr({3}, false);
  auto w = PerfDataWriter::Create(path, {a, b});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  Mmap2Record m = ExeMmap2("/bin/unknown", 77);  // id 77: owned by neither a nor b
  m.sample_id.time = 1;
  ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &a)).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  for (const RecordView& v : Records(**r))
    EXPECT_EQ(nullptr, (*r)->AttrForRecord(v));
  // The session cannot decode the record either: it is skipped, never given a build id, and
  // Process() fails naming it, as perf does.
  Session s(**r);
  Status st = s.Process();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string::npos, st.error().message.find("(first: id 77)")) << st.error().ToString();
  EXPECT_EQ(1u, s.stats().unknown_id);
  EXPECT_TRUE(s.mappings().empty());
}

// The layout of `perf record -a --buildid-mmap`: a sampling event without mmap2/build_id
// first, a tracking event with them second, and perf's synthesized MMAP2 records (sample id 0)
// carrying bit 14. Those ids are the recording tool's, so they are trusted.
TEST(PerfDataTest, SynthesizedMmap2BelongsToTheTrackingEvent) {
  std::string path = TempPath("tracking.data");
  EventAttr sampling = Attr({1}, false), tracking = Attr({2});
  sampling.attr.mmap = sampling.attr.mmap2 = 0;
  auto w = PerfDataWriter::Create(path, {sampling, tracking});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  Mmap2Record m = ExeMmap2("/bin/already-running", 0);  // id 0: synthesized
  ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &tracking)).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  for (const RecordView& v : Records(**r)) {
    const EventAttr* a = (*r)->AttrForRecord(v);
    ASSERT_NE(nullptr, a);
    EXPECT_EQ(2u, a->ids.at(0));
  }
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  ASSERT_EQ(1u, s.mappings().size());
  ASSERT_TRUE(s.mappings()[0].build_id.has_value());
  EXPECT_EQ(kExeId, *s.mappings()[0].build_id);
}

// Bytes that would decode as a record header of a type we parse, so that a reader which does
// not skip a payload fails or miscounts.
std::vector<uint8_t> BogusPayload(size_t n) {
  std::vector<uint8_t> p(n, 0xff);
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint32_t type = PERF_RECORD_MMAP2;
    uint16_t size = 0x10;
    memcpy(p.data() + i, &type, 4);
    memcpy(p.data() + i + 6, &size, 2);
  }
  return p;
}

// perf record -e intel_pt// writes the AUX data after each PERF_RECORD_AUXTRACE, beyond
// header.size; the reader must step over it.
TEST(PerfDataTest, AuxtracePayloadIsSkipped) {
  using internal::ByteWriter;
  std::string path = TempPath("auxtrace.data");
  EventAttr a = Attr({1});
  auto w = PerfDataWriter::Create(path, {a});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  Mmap2Record m = ExeMmap2("/bin/exe", 1);
  ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &a)).ok());
  std::vector<uint8_t> payload = BogusPayload(64);
  ByteWriter aux(false);
  aux.U32(71);  // PERF_RECORD_AUXTRACE
  aux.U16(0);
  aux.U16(static_cast<uint16_t>(48 + payload.size()));  // the writer wants header.size; patched
  aux.U64(payload.size());                              // size
  aux.U64(0);                                           // offset
  aux.U64(0);                                           // reference
  aux.U32(0);                                           // idx
  aux.U32(10);                                          // tid
  aux.U32(0);                                           // cpu
  aux.U32(0);                                           // reserved
  aux.Bytes(payload.data(), payload.size());
  RecordBytes mmap2 = *BuildMmap2(m, PERF_RECORD_MISC_USER, &a);
  ASSERT_TRUE((*w)->WriteRecord(aux.buffer().data(), aux.buffer().size()).ok());
  SampleRecord smp;
  smp.cpumode = PERF_RECORD_MISC_USER;
  smp.ip = 0x400100;
  smp.period = 1;
  smp.sample_id = m.sample_id;
  smp.sample_id.time = 2;
  ASSERT_TRUE((*w)->WriteRecord(BuildSample(smp, {}, a)).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  std::vector<uint8_t> file = ReadAll(path);
  unlink(path.c_str());
  uint64_t data_off;
  memcpy(&data_off, file.data() + 40, 8);
  uint16_t aux_size = 48;
  memcpy(file.data() + data_off + mmap2.size() + 6, &aux_size, 2);
  auto r = PerfDataReader::FromBytes(file);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(3u, Records(**r).size());
  std::vector<uint32_t> types;
  for (const RecordView& v : Records(**r))
    types.push_back(v.header.type);
  EXPECT_EQ((std::vector<uint32_t>{PERF_RECORD_MMAP2, 71, PERF_RECORD_SAMPLE}), types);
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  EXPECT_EQ(1u, s.stats().samples);
  EXPECT_EQ(0u, s.stats().unresolved);
}

// A file of the one event `a` around `recs`, in the byte order `swap`, laid out by hand: the
// writer writes this machine's order only.
std::vector<uint8_t> HandBuiltFile(const EventAttr& a, const std::vector<RecordBytes>& recs,
                                   bool swap) {
  using internal::ByteWriter;
  ByteWriter f(swap);
  const uint64_t ids_off = 104, attrs_off = ids_off + 8 * a.ids.size();
  const uint64_t data_off = attrs_off + kWrittenAttrSize + 16;
  uint64_t data_size = 0;
  for (const RecordBytes& r : recs)
    data_size += r.size();
  f.U64(0x32454c4946524550ULL);
  f.U64(104);
  f.U64(kWrittenAttrSize + 16);
  f.U64(attrs_off);
  f.U64(kWrittenAttrSize + 16);
  f.U64(data_off);
  f.U64(data_size);
  for (int i = 0; i < 6; i++)
    f.U64(0);  // event types; no features
  for (uint64_t id : a.ids)
    f.U64(id);
  auto attr = EncodeAttr(a.attr, swap);
  f.Bytes(attr.data(), attr.size());
  f.U64(ids_off);
  f.U64(8 * a.ids.size());
  for (const RecordBytes& r : recs)
    f.Bytes(r.data(), r.size());
  return f.buffer();
}

// A sample of event 1 by pid 10 at time t, its call chain `frames` copies of `ip`.
RecordBytes ChainSample(const EventAttr& a, uint64_t t, size_t frames, uint64_t ip, bool swap) {
  SampleRecord smp;
  smp.cpumode = PERF_RECORD_MISC_USER;
  smp.ip = 0x400100;
  smp.period = 1;
  smp.sample_id.pid = smp.sample_id.tid = 10;
  smp.sample_id.id = 1;
  smp.sample_id.time = t;
  return *BuildSample(smp, std::vector<uint64_t>(frames, ip), a, swap);
}

// Opens `image` as a file of its own (unlinked once open), as a window reads it.
Result<std::unique_ptr<PerfDataReader>> OpenAsFile(const std::vector<uint8_t>& image,
                                                   const std::string& name) {
  std::string path = TempPath(name);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.data()),
              static_cast<std::streamsize>(image.size()));
  }
  auto file = PerfDataReader::Open(path);
  unlink(path.c_str());
  return file;
}

// A pass over a file reads it through the window (pread into a ring of chunks), a record read
// again comes from the ring or, beyond it, from the mapping: every byte as the file holds it,
// in both byte orders, for records that run on past a chunk's end (samples of up to 64 KiB)
// and AUXTRACE payloads that skip chunks whole. The same bytes in memory are the reference.
TEST(PerfDataTest, TheWindowReadsWhatTheFileHolds) {
  using internal::ByteWriter;
  constexpr uint64_t kChunk = PerfDataReader::kWindowChunk;
  for (bool swap : {false, true}) {
    SCOPED_TRACE(swap ? "other byte order" : "this machine's order");
    EventAttr a = Attr({1});
    a.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
    std::mt19937_64 rng(swap ? 2 : 1);
    std::vector<RecordBytes> recs;
    recs.push_back(*BuildMmap2(ExeMmap2("/bin/exe", 1), PERF_RECORD_MISC_USER, &a, swap));
    uint64_t bytes = recs.back().size();
    for (uint64_t t = 2; bytes < 3 * PerfDataReader::kWindowChunks * kChunk; t++) {
      if (t % 40 == 0) {
        // AUXTRACE's header and its payload: up to a chunk and a half, skipped by the walk.
        std::vector<uint8_t> payload = BogusPayload(8 * (rng() % (3 * kChunk / 16)));
        ByteWriter aux(swap);
        aux.U32(71);  // PERF_RECORD_AUXTRACE
        aux.U16(0);
        aux.U16(48);
        aux.U64(payload.size());
        for (int i = 0; i < 4; i++)
          aux.U64(0);  // offset, reference, idx and tid, cpu and reserved
        aux.Bytes(payload.data(), payload.size());
        recs.push_back(aux.buffer());
      } else if (t % 7 == 0) {
        recs.push_back(BuildEmptyRecord(kRecordFinishedRound, swap));
      } else {
        // Up to the largest record: 8 bytes a frame, a header.size of at most 65535.
        recs.push_back(ChainSample(a, t, rng() % 8100, 0x400100 + t, swap));
      }
      bytes += recs.back().size();
    }
    std::vector<uint8_t> image = HandBuiltFile(a, recs, swap);
    auto file = OpenAsFile(image, "window.data");
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    auto memory = PerfDataReader::FromBytes(image);
    ASSERT_TRUE(memory.ok()) << memory.error().ToString();
    EXPECT_EQ(swap, (*file)->swapped());
    ASSERT_TRUE((*file)->window_stats().has_value());
    EXPECT_FALSE((*memory)->window_stats().has_value());

    struct Seen {
      uint64_t offset;
      uint32_t type;
      std::vector<uint8_t> bytes;
      bool operator==(const Seen& o) const {
        return offset == o.offset && type == o.type && bytes == o.bytes;
      }
    };
    auto walk = [](const PerfDataReader& r) {
      std::vector<Seen> seen;
      Status st = r.ForEachRecord([&](const RecordView& v) {
        seen.push_back({v.offset, v.header.type, {v.data, v.data + v.header.size}});
        return Ok();
      });
      EXPECT_TRUE(st.ok()) << st.error().ToString();
      return seen;
    };
    std::vector<Seen> from_file = walk(**file), from_memory = walk(**memory);
    ASSERT_EQ(recs.size(), from_memory.size());
    EXPECT_TRUE(from_file == from_memory);
    // Records that run on past their chunk's end, and payloads that span chunks.
    size_t across = 0;
    const uint64_t data = (*file)->data_offset();
    for (const Seen& s : from_file)
      across += (s.offset - data) / kChunk != (s.offset + s.bytes.size() - 1 - data) / kChunk;
    EXPECT_GT(across, 5u);
    PerfDataReader::WindowStats walked = *(*file)->window_stats();
    EXPECT_GE(walked.chunks_read, (*file)->data_size() / kChunk / 2);  // payloads skip some
    EXPECT_EQ(0u, walked.from_mapping);

    // Read again, last to first: the ring's chunks first, then the mapping's bytes.
    for (auto it = from_file.rbegin(); it != from_file.rend(); ++it) {
      RecordView v = (*file)->RecordAt(it->offset);
      ASSERT_EQ(it->type, v.header.type) << it->offset;
      ASSERT_EQ(it->bytes.size(), v.header.size) << it->offset;
      ASSERT_TRUE(std::equal(it->bytes.begin(), it->bytes.end(), v.data)) << it->offset;
    }
    PerfDataReader::WindowStats again = *(*file)->window_stats();
    EXPECT_EQ(walked.chunks_read, again.chunks_read);  // reading again reads no chunk
    EXPECT_GT(again.from_mapping, from_file.size() / 2);
  }
}

// The read-ahead thread reads the chunk after the one a pass has loaded; the pass takes its
// buffer. What the pass sees must be the file's bytes however the two meet: the thread done
// before the pass asks (the pass pauses at each new chunk here, long enough for a copy of
// 128 KiB on a loaded machine), or not (the second pass, which does not pause).
TEST(PerfDataTest, TheReadAheadHandsOverTheFilesBytes) {
  constexpr uint64_t kChunk = PerfDataReader::kWindowChunk;
  EventAttr a = Attr({1});
  a.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  std::mt19937_64 rng(3);
  std::vector<RecordBytes> recs;
  recs.push_back(*BuildMmap2(ExeMmap2("/bin/exe", 1), PERF_RECORD_MISC_USER, &a));
  uint64_t bytes = recs.back().size();
  for (uint64_t t = 2; bytes < 3 * PerfDataReader::kWindowChunks * kChunk; t++) {
    recs.push_back(ChainSample(a, t, rng() % 600, 0x400000 + t, false));  // each different
    bytes += recs.back().size();
  }
  auto file = OpenAsFile(HandBuiltFile(a, recs, false), "read-ahead.data");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  const PerfDataReader& r = **file;
  const uint64_t data = r.data_offset();
  uint64_t chunks = 0;  // those a record starts in: a pass reads each once

  auto walk = [&](bool pause) {
    size_t n = 0;
    uint64_t chunk = UINT64_MAX;
    chunks = 0;
    Status st = r.ForEachRecord([&](const RecordView& v) {
      EXPECT_LT(n, recs.size());
      if (n < recs.size()) {
        EXPECT_EQ(recs[n].size(), v.header.size) << v.offset;
        EXPECT_TRUE(std::equal(recs[n].begin(), recs[n].end(), v.data)) << v.offset;
      }
      n++;
      if ((v.offset - data) / kChunk != chunk) {
        chunk = (v.offset - data) / kChunk;
        chunks++;
        if (pause)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return Ok();
    });
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    EXPECT_EQ(recs.size(), n);
  };
  walk(true);
  PerfDataReader::WindowStats first = *r.window_stats();
  EXPECT_EQ(chunks, first.chunks_read);
  // The first two chunks are the pass's own; the thread starts with the third.
  EXPECT_GT(chunks, 16u);
  EXPECT_GE(first.chunks_read_ahead, (chunks - 2) * 3 / 4) << "of " << chunks;
  EXPECT_EQ(0u, first.from_mapping);

  // A second pass, as a report's survey and replay are: the thread's last chunk was dropped
  // with the ring, and the pass starts over from the first chunk.
  r.ReleasePages();
  walk(false);
  PerfDataReader::WindowStats second = *r.window_stats();
  EXPECT_EQ(2 * chunks, second.chunks_read);
  EXPECT_EQ(0u, second.from_mapping);

  // A pass that stops early, in the chunk where the thread was just asked for more, must not
  // leave it asleep for the passes after it.
  for (int round = 0; round < 3; round++) {
    r.ReleasePages();
    Status stop = r.ForEachRecord([&](const RecordView& v) -> Status {
      if ((v.offset - data) / kChunk >= 1)
        return Error("test", "stop in the second chunk");
      return Ok();
    });
    EXPECT_FALSE(stop.ok());
  }
  r.ReleasePages();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t before = r.window_stats()->chunks_read_ahead;
  walk(true);
  EXPECT_GE(r.window_stats()->chunks_read_ahead - before, (chunks - 2) * 3 / 4);

  // A child forked while the thread runs has no thread: it reads, and lets go of the reader,
  // without it (a join there would wait for good). Not under ThreadSanitizer, which cannot
  // follow a child that starts threads after such a fork ("dup thread with used id"); the
  // plain and ASan builds run it.
#ifndef __SANITIZE_THREAD__
  r.ReleasePages();
  walk(false);  // the thread may be reading ahead as the fork comes
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);
    size_t n = 0;
    bool same = true;
    r.ReleasePages();
    Status st = r.ForEachRecord([&](const RecordView& v) {
      same = same && n < recs.size() && recs[n].size() == v.header.size &&
             std::equal(recs[n].begin(), recs[n].end(), v.data);
      n++;
      return Ok();
    });
    file->reset();
    _exit(st.ok() && same && n == recs.size() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
#endif
}

// A pipe stream (perf record -o -) of an event with tracepoints carries the tracing data after
// PERF_RECORD_HEADER_TRACING_DATA; a payload running past the stream is an error.
TEST(PerfDataTest, PipeTracingDataPayloadIsSkipped) {
  using internal::ByteWriter;
  EventAttr a = Attr({1});
  auto stream = [&](uint32_t declared) {
    ByteWriter f(false);
    f.U64(0x32454c4946524550ULL);
    f.U64(16);
    auto attr = EncodeAttr(a.attr, false);
    f.U32(kRecordHeaderAttr);
    f.U16(0);
    f.U16(static_cast<uint16_t>(8 + attr.size() + 8));
    f.Bytes(attr.data(), attr.size());
    f.U64(1);
    std::vector<uint8_t> payload = BogusPayload(32);
    f.U32(kRecordHeaderTracingData);
    f.U16(0);
    f.U16(16);
    f.U32(declared);
    f.U32(0);
    f.Bytes(payload.data(), payload.size());
    RecordBytes end = BuildEmptyRecord(kRecordFinishedRound);
    f.Bytes(end.data(), end.size());
    return f.buffer();
  };
  auto r = PerfDataReader::FromBytes(stream(32));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE((*r)->pipe_mode());
  EXPECT_EQ(3u, Records(**r).size());
  std::vector<uint32_t> types;
  for (const RecordView& v : Records(**r))
    types.push_back(v.header.type);
  EXPECT_EQ(
      (std::vector<uint32_t>{kRecordHeaderAttr, kRecordHeaderTracingData, kRecordFinishedRound}),
      types);
  auto bad = PerfDataReader::FromBytes(stream(4096));  // pipe mode: its records are read at once
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ("data.tracing_data.size", bad.error().field);
  EXPECT_EQ(16u + 8 + kWrittenAttrSize + 8 + 8, bad.error().offset);
}

// perf record -z announces its compressed records with HEADER_COMPRESSED, which says how much
// one decompresses to: without it they cannot be read (perf cannot either), and saying nothing
// and listing no build ids would look like an empty recording. With it: zstd_stream_test.cpp.
TEST(PerfDataTest, CompressedRecordsWithoutTheirFeatureAreAnError) {
  std::string path = TempPath("compressed.data");
  EventAttr a = Attr({1});
  auto w = PerfDataWriter::Create(path, {a});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  internal::ByteWriter z(false);
  z.U32(81);  // PERF_RECORD_COMPRESSED
  z.U16(0);
  z.U16(24);
  z.Zeros(16);
  ASSERT_TRUE((*w)->WriteRecord(z.buffer().data(), z.buffer().size()).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();  // the header is fine
  Status st = (*r)->ForEachRecord([](const RecordView&) { return Ok(); });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ("data.compressed", st.error().field);
  EXPECT_EQ(ErrorKind::kCorruptInput, st.error().kind);
  EXPECT_NE(std::string::npos, st.error().message.find("HEADER_COMPRESSED"))
      << st.error().ToString();
  Session s(**r);
  st = s.Process();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ("data.compressed", st.error().field);
}

// A record header that cannot be right stops the walk where it is, with the field and offset of
// what is wrong. Records in this machine's byte order are walked by an inline fast path
// (PlainRecord) that must leave each of these to CheckRecord; the other order is always checked
// (ReadsOtherByteOrder).
TEST(PerfDataTest, ABadRecordHeaderStopsTheWalkWhereItIs) {
  std::string path = WriteFile("bad-header.data");
  const std::vector<uint8_t> good = ReadAll(path);
  unlink(path.c_str());
  uint64_t data_off, data_size;
  memcpy(&data_off, good.data() + 40, 8);
  memcpy(&data_size, good.data() + 48, 8);
  ASSERT_LT(data_size, 0xffffu);
  const auto just_past = static_cast<uint16_t>(data_size + 1);  // from the first record
  struct Case {
    const char* what;
    uint32_t type;      // 0: the record's own
    uint16_t size;      // 0: the record's own
    uint64_t payload;   // written at +8 when not 0
    const char* field;  // of the error
    uint64_t at;        // its offset from the record
  };
  const Case cases[] = {
      {"size below the header's", 0, 7, 0, "data.record.header.size", 6},
      {"size one byte past the data section", 0, just_past, 0, "data.record.header.size", 6},
      {"PERF_RECORD_COMPRESSED", kRecordCompressed, 0, 0, "data.compressed", 0},
      {"PERF_RECORD_COMPRESSED2", kRecordCompressed2, 0, 0, "data.compressed", 0},
      {"AUXTRACE too small for its payload size", kRecordAuxtrace, 8, 0, "data.auxtrace.size", 6},
      {"AUXTRACE payload past the data section", kRecordAuxtrace, 0, 1 << 30, "data.auxtrace.size",
       8},
      {"TRACING_DATA too small for its payload size", kRecordHeaderTracingData, 8, 0,
       "data.tracing_data.size", 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<uint8_t> file = good;
    uint8_t* rec = file.data() + data_off;  // the first record, an MMAP2 of 100 bytes or more
    if (c.type != 0)
      memcpy(rec, &c.type, 4);
    if (c.size != 0)
      memcpy(rec + 6, &c.size, 2);
    if (c.payload != 0)
      memcpy(rec + 8, &c.payload, 8);
    auto r = PerfDataReader::FromBytes(file);
    ASSERT_TRUE(r.ok()) << r.error().ToString();  // the header and the features are fine
    size_t seen = 0;
    Status st = (*r)->ForEachRecord([&](const RecordView&) -> Status {
      // A size below 8 taken for a record's would run into the record's fields, and there
      // walk in place for ever.
      if (++seen > 1000)
        return Error("test", "the walk does not end");
      return Ok();
    });
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(c.field, st.error().field) << st.error().ToString();
    EXPECT_EQ(data_off + c.at, st.error().offset) << st.error().ToString();
    EXPECT_EQ(0u, seen);
  }
}

// header.size has 16 bits: a sample with 9000 frames must be refused, not written with its
// size wrapped to a few hundred bytes (the reader would then parse its callchain as records).
TEST(PerfDataTest, OversizedRecordIsRejected) {
  EventAttr a = Attr({1});
  a.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  SampleRecord s;
  s.cpumode = PERF_RECORD_MISC_USER;
  s.sample_id.id = 1;
  std::vector<uint64_t> fits(8000, 0x400100), too_deep(9000, 0x400100);
  RecordBytes ok = *BuildSample(s, fits, a);
  EXPECT_GT(ok.size(), 64000u);
  EXPECT_LE(ok.size(), kMaxRecordSize);
  auto big = BuildSample(s, too_deep, a);
  ASSERT_FALSE(big.ok()) << "a " << big->size() << "-byte record was built";
  EXPECT_EQ("sample.callchain", big.error().field);
  EXPECT_EQ(ErrorKind::kInvalidArgument, big.error().kind);
  std::string path = TempPath("oversized.data");
  auto w = PerfDataWriter::Create(path, {a});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_TRUE((*w)->WriteRecord(ok).ok());
  Status st = (*w)->WriteRecord(big);  // the builder's error, not an empty record
  ASSERT_FALSE(st.ok());
  EXPECT_EQ("sample.callchain", st.error().field);
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(1u, Records(**r).size());
}

// Attrs whose ids sections each fit in the file but overlap would make the reader copy the
// file size times the attr count; the sum must be bounded by the file.
TEST(PerfDataTest, OverlappingIdsSectionsAreRejected) {
  std::string path = WriteFile("ids-overlap.data");
  std::vector<uint8_t> all = ReadAll(path);
  unlink(path.c_str());
  uint64_t attr_size, attrs_off;
  memcpy(&attr_size, all.data() + 16, 8);
  memcpy(&attrs_off, all.data() + 24, 8);
  uint64_t whole[2] = {0, all.size() / 8 * 8};
  for (uint64_t i = 0; i < 2; i++)
    memcpy(all.data() + attrs_off + i * attr_size + attr_size - 16, whole, 16);
  auto r = PerfDataReader::FromBytes(all);
  ASSERT_FALSE(r.ok()) << "two attrs sharing the whole file as ids were accepted";
  EXPECT_EQ("attr[1].ids.size", r.error().field);
  EXPECT_EQ(attrs_off + 2 * attr_size - 8, r.error().offset);
}

// Random corruption must give a clean error or a valid parse, never a crash.
TEST(PerfDataTest, RandomCorruptionNeverCrashes) {
  std::string path = WriteFile("fuzz.data");
  std::vector<uint8_t> all = ReadAll(path);
  unlink(path.c_str());
  std::mt19937 rng(12345);
  int rejected = 0;
  for (int iter = 0; iter < 3000; iter++) {
    std::vector<uint8_t> bad = all;
    int flips = 1 + rng() % 4;
    for (int i = 0; i < flips; i++)
      bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    auto r = PerfDataReader::FromBytes(bad);
    if (!r.ok()) {
      rejected++;
      continue;
    }
    Session s(**r);
    Status st = s.Process([](const SampleContext&) {});
    if (!st.ok())
      rejected++;
  }
  EXPECT_GT(rejected, 0);
}

// `-i -` for every command: a file arriving through a pipe reads like the file itself; a read
// error names the input.
TEST(PerfDataTest, FromStreamReadsAPipe) {
  std::string path = WriteFile("stream.data");
  std::vector<uint8_t> all = ReadAll(path);
  unlink(path.c_str());
  int p[2];
  ASSERT_EQ(0, pipe(p));
  std::thread writer([&] {
    size_t off = 0;
    while (off < all.size()) {
      ssize_t n = write(p[1], all.data() + off, std::min<size_t>(1000, all.size() - off));
      if (n <= 0)
        break;
      off += n;
    }
    close(p[1]);
  });
  auto r = PerfDataReader::FromStream(p[0], "stdin");
  writer.join();
  close(p[0]);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContent(**r);

  auto bad = PerfDataReader::FromStream(-1, "stdin");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ("stdin", bad.error().field);
  EXPECT_EQ(EBADF, bad.error().sys_errno);
}

TEST(PerfDataTest, OpenErrors) {
  auto r = PerfDataReader::Open("/nonexistent/perf.data");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ENOENT, r.error().sys_errno);
  auto d = PerfDataReader::Open("/");
  ASSERT_FALSE(d.ok());
  auto w = PerfDataWriter::Create("/nonexistent/x.data", {Attr({1})});
  ASSERT_FALSE(w.ok());
  auto none = PerfDataWriter::Create(TempPath("none.data"), {});
  ASSERT_FALSE(none.ok());
}

}  // namespace
}  // namespace pbid
