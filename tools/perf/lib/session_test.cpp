// SPDX-License-Identifier: GPL-2.0
//
// Session, beside session.cpp. The session's indexed lookups give the answers of the plain scans
// they replaced: events by id (first owner wins), the kernel-image fallback for kernel samples
// outside every mapping, and process tables shared after FORK until one side changes. Their cost is
// measured on real files (pbid-craft) outside the unit tests; these tests pin the answers.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../tests/record_fixtures.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "pbid/session.h"
#include "util/test_util.h"

namespace pbid {
namespace {

EventAttr Attr(std::vector<uint64_t> ids, bool build_id) {
  return fixtures::SampleAttr(std::move(ids), build_id);
}

// Mappings without a build id unless a test sets one.
Mmap2Record Map(int32_t pid, uint64_t start, uint64_t len, const char* path, uint64_t time) {
  Mmap2Record m = fixtures::Mmap2(pid, start, len, path, 1, time);
  m.has_build_id = false;
  return m;
}

RecordBytes Sample(uint16_t cpumode, int32_t pid, uint64_t ip, uint64_t time, const EventAttr& a,
                   uint64_t id = 1) {
  return *BuildSample(fixtures::Sample(cpumode, ip, pid, id, time), {}, a);
}

RecordBytes Fork(int32_t pid, int32_t ppid, uint64_t time, const EventAttr& a) {
  TaskRecord t;
  t.pid = t.tid = static_cast<uint32_t>(pid);
  t.ppid = t.ptid = static_cast<uint32_t>(ppid);
  t.time = time;
  t.sample_id.pid = t.sample_id.tid = static_cast<uint32_t>(pid);
  t.sample_id.id = 1;
  t.sample_id.time = time;
  return BuildTask(PERF_RECORD_FORK, t, &a);
}

// recs and f written as a file (or a pipe-mode stream) and opened again; nullptr, with the
// test failed, if either side fails.
std::unique_ptr<PerfDataReader> WriteAndOpen(const std::vector<EventAttr>& attrs,
                                             const std::vector<RecordBytes>& recs,
                                             const Features& f = Features(), bool pipe = false) {
  std::string path = testing::TempPath("session.data");
  {
    int fd = pipe ? open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    auto w =
        pipe ? PerfDataWriter::CreatePipe(fd, path, attrs) : PerfDataWriter::Create(path, attrs);
    EXPECT_TRUE(w.ok()) << w.error().ToString();
    if (w.ok()) {
      for (const RecordBytes& r : recs)
        EXPECT_TRUE((*w)->WriteRecord(r).ok());
      EXPECT_TRUE((*w)->Finish(f).ok());
    }
    if (fd >= 0)
      close(fd);
  }
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  return r.ok() ? std::move(*r) : nullptr;
}

// The file's samples in order, each as the path of its mapping ("-" for none).
std::vector<std::string> SamplePaths(const std::vector<EventAttr>& attrs,
                                     const std::vector<RecordBytes>& recs) {
  auto r = WriteAndOpen(attrs, recs);
  std::vector<std::string> out;
  if (!r)
    return out;
  Session s(*r);
  Status st =
      s.Process([&](const SampleContext& c) { out.push_back(c.mapping ? c.mapping->path : "-"); });
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  return out;
}

// Each mapping's path and sample count after a replay without callbacks, as buildid-list's.
std::vector<std::pair<std::string, uint64_t>> MappingSamples(const std::vector<EventAttr>& attrs,
                                                             const std::vector<RecordBytes>& recs) {
  auto r = WriteAndOpen(attrs, recs);
  std::vector<std::pair<std::string, uint64_t>> out;
  if (!r)
    return out;
  Session s(*r);
  Status st = s.Process();
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  for (const Mapping& m : s.mappings())
    out.emplace_back(m.path, m.samples);
  return out;
}

constexpr uint64_t kText = 0xffffffff81000000ULL;
constexpr uint64_t kModule = 0xffffffffc0000000ULL;

TEST(SessionIndexTest, KernelSamplesOutsideEveryMapFallBackToTheImage) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kKernel = PERF_RECORD_MISC_KERNEL;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(-1, kText, 0x1000000, "[kernel.kallsyms]_text", 1), kKernel, &a),
      *BuildMmap2(Map(-1, kModule, 0x1000, "/lib/modules/m.ko", 2), kKernel, &a),
      Sample(kKernel, 0, kText - 1, 3, a),          // below everything
      Sample(kKernel, 0, kText + 0x100, 4, a),      // inside the image
      Sample(kKernel, 0, kModule + 0x10, 5, a),     // inside the module
      Sample(kKernel, 0, kModule + 0x2000, 6, a),   // past the module: the image, as perf
      Sample(kKernel, 0, kText + 0x2000000, 7, a),  // between image and module
      // A module loaded over the middle of the image splits it; both pieces stay the image.
      *BuildMmap2(Map(-1, kText + 0x800000, 0x1000, "/lib/modules/n.ko", 8), kKernel, &a),
      Sample(kKernel, 0, kText + 0x800010, 9, a),
      Sample(kKernel, 0, kText + 0x900000, 10, a),
      Sample(kKernel, 0, kText + 0x7fffff, 11, a),
      // Once nothing of the image is left, nothing falls back to it.
      *BuildMmap2(Map(-1, kText, 0x1000000, "/lib/modules/big.ko", 12), kKernel, &a),
      Sample(kKernel, 0, kModule + 0x2000, 13, a),
  };
  std::vector<std::string> want = {"-",
                                   "[kernel.kallsyms]_text",
                                   "/lib/modules/m.ko",
                                   "[kernel.kallsyms]_text",
                                   "[kernel.kallsyms]_text",
                                   "/lib/modules/n.ko",
                                   "[kernel.kallsyms]_text",
                                   "[kernel.kallsyms]_text",
                                   "-"};
  EXPECT_EQ(want, SamplePaths({a}, recs));
}

TEST(SessionIndexTest, EventsAreFoundByIdFirstOwnerFirst) {
  // Event 2 repeats id 5 of event 1: the first owner's layout (with build_id) decides.
  EventAttr e1 = Attr({1, 5}, true), e2 = Attr({2, 5}, false), e3 = Attr({3}, true);
  Mmap2Record m = Map(10, 0x400000, 0x1000, "/lib/x.so", 1);
  m.has_build_id = true;
  m.build_id = *BuildId::FromHex(fixtures::kBuildIdHex);
  m.sample_id.id = 5;
  std::string path = testing::TempPath("index-ids.data");
  auto w = PerfDataWriter::Create(path, {e1, e2, e3});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &e1)).ok());
  ASSERT_TRUE((*w)->WriteRecord(Sample(PERF_RECORD_MISC_USER, 10, 0x400010, 2, e3, 3)).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(&(*r)->attrs()[0], (*r)->AttrForId(5));
  EXPECT_EQ(&(*r)->attrs()[1], (*r)->AttrForId(2));
  EXPECT_EQ(&(*r)->attrs()[2], (*r)->AttrForId(3));
  EXPECT_EQ(nullptr, (*r)->AttrForId(4));
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  ASSERT_EQ(1u, s.mappings().size());
  EXPECT_TRUE(s.mappings()[0].build_id.has_value()) << "id 5 read with event 2's layout";
  EXPECT_EQ(1u, s.mappings()[0].samples);
}

TEST(SessionIndexTest, ForkedTablesAreSharedUntilEitherSideMaps) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/parent", 1), kUser, &a),
      Fork(11, 10, 2, a),
      Fork(12, 10, 3, a),
      *BuildMmap2(Map(11, 0x500000, 0x1000, "/lib/child.so", 4), kUser, &a),
      *BuildMmap2(Map(10, 0x600000, 0x1000, "/lib/parent-late.so", 5), kUser, &a),
      *BuildMmap2(Map(12, 0x400000, 0x1000, "/bin/exec-over", 6), kUser, &a),
      Sample(kUser, 11, 0x400010, 7, a),   // inherited
      Sample(kUser, 11, 0x500010, 8, a),   // its own
      Sample(kUser, 11, 0x600010, 9, a),   // the parent's, after the fork: not inherited
      Sample(kUser, 10, 0x500010, 10, a),  // the child's: not the parent's
      Sample(kUser, 10, 0x600010, 11, a),
      Sample(kUser, 10, 0x400010, 12, a),  // untouched by child 12 replacing its copy
      Sample(kUser, 12, 0x400010, 13, a),
      Sample(kUser, 12, 0x500010, 14, a),
  };
  std::vector<std::string> want = {"/bin/parent", "/lib/child.so",  "-", "-", "/lib/parent-late.so",
                                   "/bin/parent", "/bin/exec-over", "-"};
  EXPECT_EQ(want, SamplePaths({a}, recs));
}

RecordBytes Comm(int32_t pid, const char* comm, bool exec, uint64_t time, const EventAttr& a) {
  CommRecord c;
  c.pid = c.tid = static_cast<uint32_t>(pid);
  c.comm = comm;
  c.exec = exec;
  c.sample_id.pid = c.sample_id.tid = static_cast<uint32_t>(pid);
  c.sample_id.id = 1;
  c.sample_id.time = time;
  return *BuildComm(c, &a);
}

// The kernel reports an exec before it maps the new program. As in perf, the mappings from
// before it name what no new mapping covers (the exec's own samples after its COMM have the
// old program's user ip), and the new ones replace what they overlap. A COMM without exec
// (prctl's PR_SET_NAME) changes nothing. Without times the replay is in file order, which need
// not be the kernel's: the exec then leaves the table alone.
TEST(SessionIndexTest, AnExecStartsAFreshTableOverTheOldInTimeOrder) {
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  auto recs = [&](const EventAttr& a) {
    return std::vector<RecordBytes>{
        *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/shell", 1), kUser, &a),
        *BuildMmap2(Map(10, 0x700000, 0x1000, "/lib/libc.so", 2), kUser, &a),
        Fork(11, 10, 3, a),
        Sample(kUser, 11, 0x700010, 4, a),  // before the exec: the parent's libc
        Comm(11, "renamed", false, 5, a),
        Sample(kUser, 11, 0x700010, 6, a),
        Comm(11, "tool", true, 7, a),
        Sample(kUser, 11, 0x700010, 8, a),  // the old libc: the exec's own sample
        Sample(kUser, 11, 0x400010, 9, a),  // the exec'd program is not mapped yet
        *BuildMmap2(Map(11, 0x500000, 0x1000, "/bin/tool", 10), kUser, &a),
        *BuildMmap2(Map(11, 0x400000, 0x1000, "/bin/tool", 11), kUser, &a),
        Sample(kUser, 11, 0x500010, 12, a),
        Sample(kUser, 11, 0x700010, 13, a),  // not covered since: still the old libc
        Sample(kUser, 10, 0x700010, 14, a),  // the parent keeps its own
        Sample(kUser, 11, 0x400010, 15, a),  // covered since: the new program
    };
  };
  EventAttr timed = Attr({1}, true);
  std::vector<std::string> want = {"/lib/libc.so", "/lib/libc.so", "/lib/libc.so", "/bin/shell",
                                   "/bin/tool",    "/lib/libc.so", "/lib/libc.so", "/bin/tool"};
  EXPECT_EQ(want, SamplePaths({timed}, recs(timed)));
  using Hits = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ((Hits{{"/bin/shell", 1}, {"/lib/libc.so", 5}, {"/bin/tool", 1}, {"/bin/tool", 1}}),
            MappingSamples({timed}, recs(timed)));

  EventAttr untimed = timed;
  untimed.attr.sample_type &= ~uint64_t{PERF_SAMPLE_TIME};
  EXPECT_EQ(want, SamplePaths({untimed}, recs(untimed)));
  EXPECT_EQ((Hits{{"/bin/shell", 1}, {"/lib/libc.so", 5}, {"/bin/tool", 1}, {"/bin/tool", 1}}),
            MappingSamples({untimed}, recs(untimed)));
}

// The recorder's per-mapping section names one MMAP2 record each: two files that had one path
// in turn keep their own ids, which perf's name-keyed table cannot do.
struct Decided {
  std::string path;
  std::string id;  // hex, "-" for none
  BuildIdSource source;
};

std::vector<Decided> MappingIds(const std::vector<RecordBytes>& recs, const Features& f,
                                bool pipe = false) {
  auto r = WriteAndOpen({Attr({1}, false)}, recs, f, pipe);
  std::vector<Decided> out;
  if (!r)
    return out;
  Session s(*r);
  EXPECT_TRUE(s.Process().ok());
  for (const Mapping& m : s.mappings())
    out.push_back({m.path, m.build_id ? m.build_id->ToHex() : "-", m.source});
  return out;
}

MappingIdEntry Entry(uint32_t pid, uint64_t start, uint64_t time, const char* hex) {
  MappingIdEntry e;
  e.pid = pid;
  e.start = start;
  e.pgoff = 0;
  e.time = time;
  if (hex == nullptr) {
    e.kind = MappingIdEntry::Kind::kDisputed;
  } else {
    e.kind = MappingIdEntry::Kind::kBpf;
    e.build_id = *BuildId::FromHex(hex);
  }
  return e;
}

constexpr char kIdA[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr char kIdB[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

TEST(SessionMappingIdsTest, EachRecordGetsItsOwnIdThoughThePathIsTheSame) {
  EventAttr a = Attr({1}, false);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/tool", 5), kUser, &a),
      *BuildMmap2(Map(11, 0x400000, 0x1000, "/bin/tool", 6), kUser, &a),
      *BuildMmap2(Map(12, 0x400000, 0x1000, "/bin/tool", 7), kUser, &a),
  };
  Features f;
  f.mapping_ids = {Entry(10, 0x400000, 5, kIdA), Entry(11, 0x400000, 6, kIdB)};
  auto got = MappingIds(recs, f);
  ASSERT_EQ(3u, got.size());
  EXPECT_EQ(kIdA, got[0].id);
  EXPECT_EQ(BuildIdSource::kBpf, got[0].source);
  EXPECT_EQ(kIdB, got[1].id);
  EXPECT_EQ(BuildIdSource::kBpf, got[1].source);
  // pid 12's record has no entry: same path, no id guessed from the others.
  EXPECT_EQ("-", got[2].id);
  EXPECT_EQ(BuildIdSource::kNone, got[2].source);
}

TEST(SessionMappingIdsTest, ADisputeTakesAwayTheIdReadFromTheFile) {
  EventAttr a = Attr({1}, false);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/tool", 5), kUser, &a),
      *BuildHeaderBuildId(-1, kUser, *BuildId::FromHex(kIdA), "/bin/tool"),
      *BuildMmap2(Map(11, 0x400000, 0x1000, "/bin/tool", 6), kUser, &a),
      *BuildHeaderBuildId(-1, kUser, *BuildId::FromHex(kIdA), "/bin/tool"),
  };
  Features f;
  f.mapping_ids = {Entry(10, 0x400000, 5, nullptr)};
  auto got = MappingIds(recs, f);
  ASSERT_EQ(2u, got.size());
  EXPECT_EQ("-", got[0].id);
  EXPECT_EQ(BuildIdSource::kNone, got[0].source);
  EXPECT_EQ(kIdA, got[1].id);
  EXPECT_EQ(BuildIdSource::kFile, got[1].source);
}

// perf stops on a HEADER_FEATURE record it does not know: a stream goes without the section.
TEST(SessionMappingIdsTest, APipeModeStreamDoesNotCarryTheSection) {
  EventAttr a = Attr({1}, false);
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/tool", 5), PERF_RECORD_MISC_USER, &a),
  };
  Features f;
  f.mapping_ids = {Entry(10, 0x400000, 5, kIdA)};
  auto got = MappingIds(recs, f, /*pipe=*/true);
  ASSERT_EQ(1u, got.size());
  EXPECT_EQ("-", got[0].id);
}

// Lookups remember the last process and event they found; a record in between that changes
// what they would find must be seen by the next one.
TEST(SessionIndexTest, LookupsSeeTablesChangeBetweenSamples) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/parent", 1), kUser, &a),
      Sample(kUser, 12, 0x400010, 2, a),  // no process 12 yet
      Fork(12, 10, 3, a),
      Sample(kUser, 12, 0x400010, 4, a),  // now its parent's table
      Fork(11, 10, 5, a),
      Sample(kUser, 10, 0x500010, 6, a),
      // Process 10 shares its table with 11: this mapping goes into a copy.
      *BuildMmap2(Map(10, 0x500000, 0x1000, "/lib/late.so", 7), kUser, &a),
      Sample(kUser, 10, 0x500010, 8, a),
      Sample(kUser, 11, 0x500010, 9, a),
  };
  std::vector<std::string> want = {"-", "/bin/parent", "-", "/lib/late.so", "-"};
  EXPECT_EQ(want, SamplePaths({a}, recs));
}

TEST(SessionIndexTest, EventIdsThatShareAMemoSlotKeepTheirOwnEvents) {
  // Ids 1 and 65 fall into the same slot of the session's memo of id lookups; only event 1
  // asked for build ids, so only its MMAP2 records carry one.
  EventAttr e1 = Attr({1}, true), e2 = Attr({65}, false);
  std::string path = testing::TempPath("memo-ids.data");
  auto w = PerfDataWriter::Create(path, {e1, e2});
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 4; i++) {
    Mmap2Record m = Map(10, 0x400000 + 0x1000 * i, 0x1000, "/lib/x.so", 1 + i);
    m.has_build_id = true;
    m.build_id = *BuildId::FromHex(fixtures::kBuildIdHex);
    m.sample_id.id = i % 2 ? 65 : 1;
    ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &e1)).ok());
  }
  ASSERT_TRUE((*w)->Finish(Features()).ok());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  Session s(**r);
  ASSERT_TRUE(s.Process().ok());
  ASSERT_EQ(4u, s.mappings().size());
  for (size_t i = 0; i < 4; i++)
    EXPECT_EQ(i % 2 == 0, s.mappings()[i].build_id.has_value()) << "mapping " << i;
}

// perf writes a round per pass over its per-CPU buffers: a later CPU's records in a round can
// be older than an earlier CPU's, and the next round's older than the end of this one. The
// replay must still be in time order across the boundary, not round by round.
TEST(SessionRoundsTest, RecordsAcrossARoundBoundaryReplayInTimeOrder) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/old", 1), kUser, &a),
      Sample(kUser, 10, 0x400010, 30, a),  // one CPU's buffer reaches t=30 ...
      Sample(kUser, 10, 0x400010, 5, a),   // ... another's this round only t=5
      round,
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/new", 20), kUser, &a),  // exec at t=20
      Sample(kUser, 10, 0x400010, 25, a),
      round,
      Sample(kUser, 10, 0x400010, 40, a),
  };
  // t=5, 25, 30, 40: only the first is older than the exec. Replaying each round when it ends
  // would put t=30 before the exec.
  std::vector<std::string> want = {"/bin/old", "/bin/new", "/bin/new", "/bin/new"};
  EXPECT_EQ(want, SamplePaths({a}, recs));
}

struct Replayed {
  SessionStats stats;
  std::vector<uint64_t> times;  // of every record, in replay order
};

Replayed Replay(const std::vector<EventAttr>& attrs, const std::vector<RecordBytes>& recs) {
  auto r = WriteAndOpen(attrs, recs);
  Replayed out;
  if (!r)
    return out;
  Session s(*r);
  Status st = s.Process(nullptr, [&](const RecordContext& c) {
    auto id = ParseSampleId(c.record, &c.attr);
    if (c.record.header.type == PERF_RECORD_SAMPLE)
      out.times.push_back(ParseSample(c.record, c.attr)->sample_id.time);
    else if (c.record.header.type != kRecordFinishedRound && id.ok())
      out.times.push_back(id->time);
  });
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  out.stats = s.stats();
  return out;
}

// perf trusts that a round never reaches back before the end of the one before the last
// (otherwise: "Timestamp below last timeslice flush"). The session sorts the whole file as it
// always did, and holds back only what a later record could still precede.
std::vector<RecordBytes> ARoundThatReachesBack(const EventAttr& a) {
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  return {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/old", 1), kUser, &a),
      Sample(kUser, 10, 0x400010, 30, a),
      round,
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/new", 20), kUser, &a),
      round,
      Sample(kUser, 10, 0x400010, 40, a),
      round,
      Sample(kUser, 10, 0x400010, 12, a),  // three rounds late, still before the exec
  };
}

TEST(SessionRoundsTest, ARoundThatReachesBackStillReplaysInTimeOrder) {
  EventAttr a = Attr({1}, true);
  std::vector<RecordBytes> recs = ARoundThatReachesBack(a);
  EXPECT_EQ((std::vector<uint64_t>{1, 12, 20, 30, 40}), Replay({a}, recs).times);
  std::vector<std::string> want = {"/bin/old", "/bin/new", "/bin/new"};
  EXPECT_EQ(want, SamplePaths({a}, recs));
}

// A round is merged from the runs it arrives in (each CPU's stretch is in order). However many
// runs there are, the replay is a stable sort: records of equal time keep their file order.
TEST(SessionRoundsTest, ARoundOfManyRunsReplaysAsAStableSort) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/first", 50), kUser, &a),
      Sample(kUser, 10, 0x400010, 70, a),
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/second", 50), kUser, &a),  // same time, later
      Sample(kUser, 10, 0x400010, 60, a),
  };
  for (uint64_t t = 49; t >= 40; t--)  // a run of one record each
    recs.push_back(Sample(kUser, 10, 0x400010, t, a));
  recs.push_back(BuildEmptyRecord(kRecordFinishedRound));
  Replayed r = Replay({a}, recs);
  EXPECT_EQ((std::vector<uint64_t>{40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 50, 60, 70}),
            r.times);
  std::vector<std::string> paths = SamplePaths({a}, recs);
  ASSERT_EQ(12u, paths.size());
  EXPECT_EQ("-", paths[0]);
  EXPECT_EQ("/bin/second", paths[10]);  // t=60: after both mappings, in file order
  EXPECT_EQ("/bin/second", paths[11]);
}

// The memory a replay holds follows the rounds, not the file: 200 rounds of 50 records, each
// round's two CPUs interleaved in time with each other.
TEST(SessionRoundsTest, TheQueueHoldsAboutARoundNotTheFile) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  std::vector<RecordBytes> recs = {*BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/x", 1), kUser, &a)};
  uint64_t t = 100;
  for (int round = 0; round < 200; round++) {
    for (int cpu = 0; cpu < 2; cpu++) {
      for (int i = 0; i < 25; i++)
        recs.push_back(Sample(kUser, 10, 0x400010, t + 2 * i + cpu, a));
    }
    recs.push_back(BuildEmptyRecord(kRecordFinishedRound));
    t += 50;
  }
  Replayed r = Replay({a}, recs);
  EXPECT_EQ(10000u, r.stats.samples);
  EXPECT_TRUE(std::is_sorted(r.times.begin(), r.times.end()));
  EXPECT_LE(r.stats.max_queued, 2 * 51u) << "of " << recs.size() << " records";

  // Without FINISHED_ROUND (some writers never emit it) the queue is bounded as well, by the
  // session's own flush points, as long as the file is roughly in time order.
  recs.erase(
      std::remove_if(recs.begin(), recs.end(), [](const RecordBytes& b) { return b.size() == 8; }),
      recs.end());
  r = Replay({a}, recs);
  EXPECT_EQ(10000u, r.stats.samples);
  EXPECT_TRUE(std::is_sorted(r.times.begin(), r.times.end()));
  EXPECT_LE(r.stats.max_queued, 2048u) << "of " << recs.size() << " records";
}

// The resident part of the mapping that holds `addr`, in bytes (/proc/self/smaps); 0 if none.
uint64_t ResidentAround(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  auto a = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    uint64_t lo = 0, hi = 0;  // a mapping's first line: "lo-hi perms offset ..."
    char dash = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "%c%" SCNx64 " ", &lo, &dash, &hi) == 3 && dash == '-') {
      inside = a >= lo && a < hi;
      continue;
    }
    uint64_t kb = 0;
    if (inside && sscanf(line.c_str(), "Rss: %" SCNu64 " kB", &kb) == 1)
      return kb * 1024;
  }
  return 0;
}

// A record can be written long after its time: a task preempted between taking the timestamp
// and writing the record, on a loaded machine. Everything recorded since then sorts after it,
// and used to wait for it in the queue: held until it was read, and merged again at every flush
// meanwhile, so that a file with one such record took time and memory that grew with the file.
// A seeded file of perf's rounds (two CPUs, interleaved in time) with stragglers far behind:
// mappings, each with its id in a HEADER_BUILD_ID after it, and samples. The replay is still the
// exact stable sort by time, which a plain sort of the same records gives here.
TEST(SessionRoundsTest, AStragglerFarBackDoesNotHoldTheFileInTheQueue) {
  EventAttr a = Attr({1}, false);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  constexpr uint64_t kRounds = 320, kPerCpu = 512, kRoundTime = 2 * kPerCpu;
  const BuildId id = *BuildId::FromHex(fixtures::kBuildIdHex);
  std::mt19937_64 rng(20261204);
  std::vector<RecordBytes> recs;
  // Every record with a time, as (time, place in the file, mapping number or -1 for a sample),
  // in file order: stable-sorted by time, what the replay must see.
  struct Timed {
    uint64_t time;
    int mapping;
  };
  std::vector<Timed> timed;
  std::vector<std::string> paths;
  auto map = [&](uint64_t time) {
    paths.push_back("/bin/v" + std::to_string(paths.size()));
    recs.push_back(*BuildMmap2(Map(10, 0x400000, 0x1000, paths.back().c_str(), time), kUser, &a));
    recs.push_back(*BuildHeaderBuildId(-1, kUser, id, paths.back()));
    timed.push_back({time, static_cast<int>(paths.size() - 1)});
  };
  auto sample = [&](uint64_t time) {
    recs.push_back(Sample(kUser, 10, 0x400010, time, a));
    timed.push_back({time, -1});
  };
  map(1);
  for (uint64_t round = 0; round < kRounds; round++) {
    uint64_t base = 100 + round * kRoundTime;
    for (uint64_t cpu = 0; cpu < 2; cpu++) {
      for (uint64_t i = 0; i < kPerCpu; i++)
        sample(base + 2 * i + cpu);
    }
    if (round % 40 == 20)
      map(base + kRoundTime - 1);  // in its place
    // A sample a few rounds late, and a mapping far later with the same time: the sample is
    // first in the file, so it replays first, still in the old mapping.
    constexpr uint64_t kTie = kRounds / 2 + 7, kTieTime = 100 + (kTie - 3) * kRoundTime + 5;
    if (round == kTie)
      sample(kTieTime);
    if (round == kTie + 150)
      map(kTieTime);
    if (round >= kRounds / 2 && rng() % 16 == 0) {
      // From 100 to 300 rounds back: up to 300,000 records reach past it.
      uint64_t back = std::min<uint64_t>(round, 100 + rng() % 200);
      uint64_t time = base - back * kRoundTime + rng() % kRoundTime;
      if (rng() % 2)
        map(time);
      else
        sample(time);
    }
    recs.push_back(BuildEmptyRecord(kRecordFinishedRound));
  }
  ASSERT_GT(paths.size(), 12u) << "the seed gave too few stragglers";
  std::vector<std::pair<std::string, uint64_t>> want;  // each mapping's samples
  std::vector<uint64_t> want_times;
  {
    std::vector<Timed> sorted = timed;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Timed& x, const Timed& y) { return x.time < y.time; });
    int current = -1;
    for (const Timed& t : sorted) {
      want_times.push_back(t.time);
      if (t.mapping >= 0) {
        want.emplace_back(paths[static_cast<size_t>(t.mapping)], 0);
        current = static_cast<int>(want.size() - 1);
      } else if (current >= 0) {
        want[static_cast<size_t>(current)].second++;
      }
    }
  }
  auto r = WriteAndOpen({a}, recs);
  ASSERT_TRUE(r);
  const uint64_t a_quarter = recs.size() / 4;
  // Before any pass, a record read again comes from the mapping: where the file is mapped.
  const void* file = r->RecordAt(r->data_offset()).data;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (Session::Order order : {Session::Order::kStream, Session::Order::kSurvey}) {
    Session s(*r, order);
    ASSERT_TRUE(s.Process().ok());
    // The stragglers are read where they are queued, far ahead of the pass and of its window:
    // from the mapping, whose pages go again as the pass goes on, not at its end.
    EXPECT_LE(ResidentAround(file), 2 * page);
    std::vector<std::pair<std::string, uint64_t>> got;
    for (const Mapping& m : s.mappings()) {
      got.emplace_back(m.path, m.samples);
      EXPECT_EQ(BuildIdSource::kFile, m.source) << m.path;
    }
    EXPECT_EQ(want, got);
    EXPECT_LE(s.stats().max_queued, a_quarter) << "of " << recs.size() << " records";
  }
  // With a callback, every record in the same order.
  Session s(*r);
  std::vector<uint64_t> got_times;
  ASSERT_TRUE(s.Process(nullptr, [&](const RecordContext& c) {
                 if (c.record.header.type == PERF_RECORD_SAMPLE)
                   got_times.push_back(ParseSample(c.record, c.attr)->sample_id.time);
                 else if (c.record.header.type == PERF_RECORD_MMAP2)
                   got_times.push_back(ParseSampleId(c.record, &c.attr)->time);
               }).ok());
  EXPECT_TRUE(want_times == got_times);
  EXPECT_LE(s.stats().max_queued, a_quarter) << "of " << recs.size() << " records";
}

// Without callbacks the file is streamed once (Session::Order). What each mapping ends up with
// must be what the survey's exact replay gives, whether the stream holds or is given up.
struct Outcome {
  std::vector<std::tuple<std::string, uint64_t, BuildIdSource>> mappings;  // path, samples, source
  uint64_t passes = 0;
};

Outcome Mappings(const PerfDataReader& r, Session::Order order) {
  Session s(r, order);
  Status st = s.Process();
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  Outcome out;
  for (const Mapping& m : s.mappings())
    out.mappings.emplace_back(m.path, m.samples, m.source);
  out.passes = s.stats().passes;
  return out;
}

// Rounds in perf's order: a round's records are no older than the latest record before the
// previous round ended, though they reach back into the previous round itself.
TEST(SessionStreamTest, AFileInPerfsOrderIsReadOnce) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  std::vector<RecordBytes> recs = {
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/old", 1), kUser, &a),
      Sample(kUser, 10, 0x400010, 30, a),
      Sample(kUser, 10, 0x400010, 5, a),
      round,
      *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/new", 20), kUser, &a),
      Sample(kUser, 10, 0x400010, 25, a),
      Sample(kUser, 10, 0x400010, 6, a),  // before the exec, a round late: still in perf's order
      round,
      Sample(kUser, 10, 0x400010, 40, a),
      round,
      Sample(kUser, 10, 0x400010, 35, a),
  };
  auto r = WriteAndOpen({a}, recs);
  ASSERT_TRUE(r);
  Outcome streamed = Mappings(*r, Session::Order::kStream);
  Outcome surveyed = Mappings(*r, Session::Order::kSurvey);
  using M = decltype(streamed.mappings)::value_type;
  EXPECT_EQ((std::vector<M>{{"/bin/old", 2, BuildIdSource::kNone},
                            {"/bin/new", 4, BuildIdSource::kNone}}),
            streamed.mappings);
  EXPECT_EQ(surveyed.mappings, streamed.mappings);
  EXPECT_EQ(1u, streamed.passes);
  EXPECT_EQ(2u, surveyed.passes);
}

// A record older than what perf's rule already replayed: the stream is given up, and the
// survey replays the file exactly (t=12 before the exec at t=20).
TEST(SessionStreamTest, ARoundThatReachesBackIsSurveyedAfterAll) {
  EventAttr a = Attr({1}, true);
  auto r = WriteAndOpen({a}, ARoundThatReachesBack(a));
  ASSERT_TRUE(r);
  Outcome streamed = Mappings(*r, Session::Order::kStream);
  using M = decltype(streamed.mappings)::value_type;
  EXPECT_EQ((std::vector<M>{{"/bin/old", 1, BuildIdSource::kNone},
                            {"/bin/new", 2, BuildIdSource::kNone}}),
            streamed.mappings);
  EXPECT_EQ(3u, streamed.passes);
}

// Whether a mapping was synthesized depends on whether the file has a FINISHED_INIT at all:
// one that comes after records were replayed without it gives the stream up.
TEST(SessionStreamTest, AFinishedInitAfterARoundIsSurveyedAfterAll) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  Mmap2Record synth = fixtures::Mmap2(10, 0x400000, 0x1000, "/bin/running", 1, 3);
  std::vector<RecordBytes> recs = {
      *BuildMmap2(synth, kUser, &a),  // time 3, before FINISHED_INIT: the recorder's
      round,
      Sample(kUser, 10, 0x400010, 4, a),
      round,
      Sample(kUser, 10, 0x400010, 5, a),
      round,
      BuildEmptyRecord(kRecordFinishedInit),
      Sample(kUser, 10, 0x400010, 6, a),
  };
  auto r = WriteAndOpen({a}, recs);
  ASSERT_TRUE(r);
  Outcome streamed = Mappings(*r, Session::Order::kStream);
  using M = decltype(streamed.mappings)::value_type;
  EXPECT_EQ((std::vector<M>{{"/bin/running", 3, BuildIdSource::kSynthesized}}), streamed.mappings);
  EXPECT_EQ(3u, streamed.passes);
  // Without the FINISHED_INIT, a mapping with a time is the kernel's, and the stream holds.
  recs.erase(recs.begin() + 6);
  r = WriteAndOpen({a}, recs);
  ASSERT_TRUE(r);
  streamed = Mappings(*r, Session::Order::kStream);
  EXPECT_EQ((std::vector<M>{{"/bin/running", 3, BuildIdSource::kKernelRecord}}), streamed.mappings);
  EXPECT_EQ(1u, streamed.passes);
}

// With callbacks there is no second try unless the caller can start over: the survey comes
// first.
TEST(SessionStreamTest, CallbacksAreAlwaysSurveyed) {
  EventAttr a = Attr({1}, true);
  auto r = WriteAndOpen({a}, {Sample(PERF_RECORD_MISC_USER, 10, 0x400010, 4, a)});
  ASSERT_TRUE(r);
  Session s(*r);
  uint64_t seen = 0;
  ASSERT_TRUE(s.Process([&](const SampleContext&) { seen++; }).ok());
  EXPECT_EQ(1u, seen);
  EXPECT_EQ(2u, s.stats().passes);
}

// A caller that can start over is streamed: once when the stream holds; when it is given up,
// told so, and then given every sample again in the survey's order.
TEST(SessionStreamTest, CallbacksThatCanStartOverAreStreamed) {
  EventAttr a = Attr({1}, true);
  auto samples = [&](const PerfDataReader& r, Session::Order order, uint64_t* restarts,
                     uint64_t* passes) {
    Session s(r, order);
    std::vector<std::pair<uint64_t, std::string>> seen;  // time, mapping
    auto on_sample = [&](const SampleContext& c) {
      seen.emplace_back(c.sample.sample_id.time, c.mapping ? c.mapping->path : "");
    };
    auto restart = [&] {
      ++*restarts;
      seen.clear();
    };
    Status st = order == Session::Order::kStream ? s.Process(on_sample, nullptr, restart)
                                                 : s.Process(on_sample);
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    *passes = s.stats().passes;
    return seen;
  };
  auto held = WriteAndOpen({a}, {Sample(PERF_RECORD_MISC_USER, 10, 0x400010, 4, a)});
  ASSERT_TRUE(held);
  uint64_t restarts = 0, passes = 0;
  EXPECT_EQ(1u, samples(*held, Session::Order::kStream, &restarts, &passes).size());
  EXPECT_EQ(0u, restarts);
  EXPECT_EQ(1u, passes);
  auto back = WriteAndOpen({a}, ARoundThatReachesBack(a));
  ASSERT_TRUE(back);
  uint64_t survey_restarts = 0, survey_passes = 0;
  auto surveyed = samples(*back, Session::Order::kSurvey, &survey_restarts, &survey_passes);
  auto streamed = samples(*back, Session::Order::kStream, &restarts, &passes);
  EXPECT_EQ(surveyed, streamed);
  EXPECT_EQ(1u, restarts);
  EXPECT_EQ(3u, passes);
}

// The recorder writes a mapping's id, when the kernel could not, as a HEADER_BUILD_ID right
// after the MMAP2. The survey's flush points fall every 1024 records in a file without rounds;
// one that fell between the two would replay the mapping before its id was read.
TEST(SessionStreamTest, NoFlushComesBetweenAMappingAndItsId) {
  EventAttr a = Attr({1}, false);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  BuildId id = *BuildId::FromHex(fixtures::kBuildIdHex);
  std::vector<RecordBytes> recs;
  for (uint64_t t = 1; t <= 1023; t++)
    recs.push_back(Sample(kUser, 10, 0x400010, t, a));
  recs.push_back(*BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/late", 1024), kUser, &a));
  recs.push_back(*BuildHeaderBuildId(-1, kUser, id, "/bin/late"));  // record 1025
  recs.push_back(Sample(kUser, 10, 0x400010, 1025, a));
  auto r = WriteAndOpen({a}, recs);
  ASSERT_TRUE(r);
  for (Session::Order order : {Session::Order::kStream, Session::Order::kSurvey}) {
    Outcome o = Mappings(*r, order);
    using M = decltype(o.mappings)::value_type;
    EXPECT_EQ((std::vector<M>{{"/bin/late", 1, BuildIdSource::kFile}}), o.mappings);
  }
}

// An MMAP2 too short for its fields, whose sample_id (and so its time) still reads.
RecordBytes BadMmap2(int32_t pid, uint64_t time, const EventAttr& a) {
  RecordBytes full =
      *BuildMmap2(Map(pid, 0x400000, 0x1000, "/bin/bad", time), PERF_RECORD_MISC_USER, &a);
  RecordBytes out(full.begin(), full.begin() + 8);
  out.insert(out.end(), full.end() - static_cast<std::ptrdiff_t>(a.SampleIdSize()), full.end());
  uint16_t size = static_cast<uint16_t>(out.size());
  memcpy(out.data() + 6, &size, 2);
  return out;
}

// A record that fails to decode in a round's flush need not be the first to fail in time
// order: one later in the file can sort before it. Both orders fail on the same record, after
// replaying the same records before it.
TEST(SessionStreamTest, ARecordThatFailsInARoundFailsAsInTheSurvey) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  for (bool last_fails : {true, false}) {
    std::vector<RecordBytes> recs = {
        BadMmap2(10, 5, a),
        round,
        Sample(kUser, 10, 0x400010, 100, a),
        round,
        last_fails ? BadMmap2(10, 3, a) : Sample(kUser, 10, 0x400010, 3, a),
    };
    auto r = WriteAndOpen({a}, recs);
    ASSERT_TRUE(r);
    std::vector<RecordView> in_file = testing::Records(*r);
    ASSERT_EQ(5u, in_file.size());
    uint64_t first_to_fail = in_file[last_fails ? 4 : 0].offset + 6;  // its header.size
    for (Session::Order order : {Session::Order::kStream, Session::Order::kSurvey}) {
      Session s(*r, order);
      Status st = s.Process();
      ASSERT_FALSE(st.ok());
      EXPECT_EQ(first_to_fail, st.error().offset) << st.error().ToString();
      EXPECT_EQ(last_fails ? 1u : 2u, s.stats().records);  // the failing one counts
    }
  }
}

// A sample whose last field (the period) is cut off.
RecordBytes ShortSample(int32_t pid, uint64_t time, const EventAttr& a) {
  RecordBytes out = Sample(PERF_RECORD_MISC_USER, pid, 0x400010, time, a);
  out.resize(out.size() - 8);
  uint16_t size = static_cast<uint16_t>(out.size());
  memcpy(out.data() + 6, &size, 2);
  return out;
}

// Without a sample callback a sample is decoded when it is queued, not when it is replayed.
// Each order, with and without a callback, counts the same hits (the kernel's among them), and
// a sample that does not decode fails in its turn, after the same records.
TEST(SessionStreamTest, SamplesDecodedWhenQueuedCountAndFailInTheirTurn) {
  EventAttr a = Attr({1}, true);
  constexpr uint16_t kUser = PERF_RECORD_MISC_USER, kKernel = PERF_RECORD_MISC_KERNEL;
  RecordBytes round = BuildEmptyRecord(kRecordFinishedRound);
  struct Seen {
    std::vector<std::pair<std::string, uint64_t>> hits;  // path, samples
    uint64_t samples, unresolved, records;
    std::string error;
  };
  for (bool short_sample : {false, true}) {
    SCOPED_TRACE(short_sample ? "a short sample" : "all samples whole");
    std::vector<RecordBytes> recs = {
        *BuildMmap2(Map(-1, kText, 0x1000000, "[kernel.kallsyms]_text", 1), kKernel, &a),
        *BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/x", 2), kUser, &a),
        Sample(kUser, 10, 0x400010, 4, a),
        round,
        Sample(kUser, 10, 0x500010, 6, a),  // in no mapping
        short_sample ? ShortSample(10, 5, a) : Sample(kUser, 10, 0x400020, 5, a),
        Sample(kKernel, 10, kText + 0x100, 7, a),
        Sample(kUser, 10, 0x400030, 8, a),
    };
    auto r = WriteAndOpen({a}, recs);
    ASSERT_TRUE(r);
    auto run = [&](Session::Order order, bool callback) {
      Session s(*r, order);
      uint64_t given = 0;
      Status st = callback ? s.Process([&](const SampleContext&) { given++; }) : s.Process();
      Seen seen{{},
                s.stats().samples,
                s.stats().unresolved,
                s.stats().records,
                st.ok() ? "" : st.error().ToString()};
      for (const Mapping& m : s.mappings())
        seen.hits.emplace_back(m.path, m.samples);
      if (callback) {
        EXPECT_EQ(seen.samples, given);
      }
      return seen;
    };
    Seen whole = run(Session::Order::kSurvey, true);
    if (short_sample) {
      EXPECT_NE("", whole.error);
      EXPECT_EQ(5u, whole.records);  // the mappings, the sample at 4, the round, the short one
    } else {
      using Hits = decltype(whole.hits);
      EXPECT_EQ((Hits{{"[kernel.kallsyms]_text", 1}, {"/bin/x", 3}}), whole.hits);
      EXPECT_EQ(5u, whole.samples);
      EXPECT_EQ(1u, whole.unresolved);
    }
    for (Session::Order order : {Session::Order::kSurvey, Session::Order::kStream}) {
      Seen ahead = run(order, false);
      EXPECT_EQ(whole.hits, ahead.hits);
      EXPECT_EQ(whole.samples, ahead.samples);
      EXPECT_EQ(whole.unresolved, ahead.unresolved);
      EXPECT_EQ(whole.records, ahead.records);
      EXPECT_EQ(whole.error, ahead.error);
    }
  }
}

// A pass reads the file through the window (kWindowChunks chunks of kWindowChunk bytes, on the
// heap) and maps none of it while the records it reads again are still in the ring; memory
// follows the mappings and symbols whatever the file's size. Each order has its own passes:
// the stream, seen when it is done, and the survey and its replay, seen while the replay
// delivers samples too.
TEST(SessionMemoryTest, APassReadsTheFileThroughTheWindow) {
  EventAttr a = Attr({1}, true);
  std::vector<RecordBytes> recs;
  recs.push_back(*BuildMmap2(Map(10, 0x400000, 0x10000, "/bin/x", 1), PERF_RECORD_MISC_USER, &a));
  // Six stretches of samples, in perf's rounds of 1000.
  const std::vector<uint64_t> chain(12, 0x400100);
  uint64_t bytes = 0;
  for (uint64_t t = 2; bytes < 6 * PerfDataReader::kReleasePagesEvery; t++) {
    recs.push_back(
        *BuildSample(fixtures::Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, t), chain, a));
    bytes += recs.back().size();
    if (t % 1000 == 0)
      recs.push_back(BuildEmptyRecord(kRecordFinishedRound));
  }
  auto reader = WriteAndOpen({a}, recs);
  ASSERT_TRUE(reader);
  // Before any pass, a record read again comes from the mapping: where the file is mapped.
  const void* file = reader->RecordAt(reader->data_offset()).data;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  ASSERT_GT(ResidentAround(file), 0u);
  ASSERT_GT(reader->data_size(), 2 * PerfDataReader::kWindowChunks * PerfDataReader::kWindowChunk);

  Session streamed(*reader);
  Status st = streamed.Process();
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(1u, streamed.stats().passes);
  EXPECT_LE(ResidentAround(file), page);
  ASSERT_TRUE(reader->window_stats().has_value());
  const uint64_t chunks = reader->data_size() / PerfDataReader::kWindowChunk;
  EXPECT_GE(reader->window_stats()->chunks_read, chunks);
  const uint64_t mapped_before = reader->window_stats()->from_mapping;

  Session surveyed(*reader);
  uint64_t most = 0, samples = 0;
  st = surveyed.Process([&](const SampleContext&) {
    if (++samples % 1024 == 0)
      most = std::max(most, ResidentAround(file));
  });
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(2u, surveyed.stats().passes);
  EXPECT_LE(most, page);
  EXPECT_LE(ResidentAround(file), page);
  EXPECT_GE(reader->window_stats()->chunks_read, 3 * chunks);
  EXPECT_EQ(mapped_before, reader->window_stats()->from_mapping);  // all from the ring
}

// A round longer than the window: its replay reads the records again from the mapping, and
// delivers what the same file read from memory does.
TEST(SessionMemoryTest, AReplayBeyondTheWindowReadsTheMapping) {
  EventAttr a = Attr({1}, true);
  std::vector<RecordBytes> recs;
  recs.push_back(*BuildMmap2(Map(10, 0x400000, 0x10000, "/bin/x", 1), PERF_RECORD_MISC_USER, &a));
  recs.push_back(*BuildMmap2(Map(11, 0x500000, 0x10000, "/bin/y", 1), PERF_RECORD_MISC_USER, &a));
  const std::vector<uint64_t> chain(12, 0x400100);
  uint64_t bytes = 0;
  // One round of three windows, its times out of file order, so that the replay goes back to
  // the start of it.
  const uint64_t round = 3 * PerfDataReader::kWindowChunks * PerfDataReader::kWindowChunk;
  for (uint64_t i = 0; bytes < round; i++) {
    int32_t pid = i % 3 == 0 ? 11 : 10;
    uint64_t ip = pid == 11 ? 0x500100 : 0x400100;
    uint64_t t = 10 + (i * 7919) % 100003;
    recs.push_back(*BuildSample(fixtures::Sample(PERF_RECORD_MISC_USER, ip, pid, 1, t), chain, a));
    bytes += recs.back().size();
  }
  recs.push_back(BuildEmptyRecord(kRecordFinishedRound));
  std::string path = testing::TempPath("beyond-window.data");
  {
    auto w = PerfDataWriter::Create(path, {a});
    ASSERT_TRUE(w.ok()) << w.error().ToString();
    for (const RecordBytes& r : recs)
      ASSERT_TRUE((*w)->WriteRecord(r).ok());
    ASSERT_TRUE((*w)->Finish(Features()).ok());
  }
  auto file = PerfDataReader::Open(path);
  auto memory = PerfDataReader::FromBytes(testing::ReadBytes(path));
  unlink(path.c_str());
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_TRUE(memory.ok()) << memory.error().ToString();
  auto replay = [](const PerfDataReader& r) {
    std::vector<std::string> seen;
    Session s(r);
    Status st = s.Process([&](const SampleContext& c) {
      seen.push_back(std::to_string(c.sample.sample_id.time) + " " +
                     std::to_string(c.sample.sample_id.pid) + " " +
                     (c.mapping != nullptr ? c.mapping->path : "-"));
    });
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    return seen;
  };
  std::vector<std::string> from_file = replay(**file), from_memory = replay(**memory);
  ASSERT_EQ(recs.size() - 3, from_memory.size());
  EXPECT_EQ(from_memory, from_file);
  ASSERT_TRUE((*file)->window_stats().has_value());
  EXPECT_GT((*file)->window_stats()->from_mapping, from_file.size() / 2);
}

}  // namespace
}  // namespace pbid
