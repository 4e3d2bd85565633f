// SPDX-License-Identifier: GPL-2.0
//
// The pprof writer, read back twice: by protobuf (field by field) and by the real
// `go tool pprof` (-top and -raw), which must show our function names and build IDs.
#include "pbid/symbolize/pprof_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "profile.pb.h"
#include "test_util.h"

namespace pbid {
namespace {

using namespace pbid::testing;  // NOLINT: test helpers

const char kUnsymbolizedId[] = "0123456789abcdef0123456789abcdef01234567";

// A profile of the fixture workload: its real runtime addresses, symbolized from the debug file
// found by build ID, with 50/30/20 samples, plus one mapping nobody can symbolize.
class PprofTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    root_ = tmp_.path() + "/root";
    ASSERT_TRUE(MakeDirs(root_));
    path_ = tmp_.path() + "/workload";
    ASSERT_TRUE(CopyFile(FixturePath("workload.stripped"), path_, true));
    hex_ = ReadelfBuildId(path_);
    ASSERT_EQ(40u, hex_.size());
    ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
    recorded_ = RecordWorkload(path_);
    ASSERT_EQ(3u, recorded_.size());
  }

  std::string Build() {
    SymbolizerOptions o;
    o.build_id_root = root_;
    o.use_debuginfod = false;
    auto s = Symbolizer::Create(o);
    EXPECT_TRUE(s.ok());
    auto id = *BuildId::FromHex(hex_);
    PprofBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}}, {"cpu", "nanoseconds"}, 1000000);
    const std::pair<const char*, int> counts[] = {
        {"spin_alpha", 50}, {"spin_beta", 30}, {"spin_outer", 20}};
    for (const auto& [fn, n] : counts) {
      const RecordedFunction& f = recorded_.at(fn);
      PprofMapping m{f.start, f.end, f.pgoff, path_, hex_, "gnu"};
      uint64_t mid = b.AddMapping(m);
      auto r = (*s)->SymbolizeAddress(id, path_, f.start, f.pgoff, f.addr);
      EXPECT_TRUE(r.ok());
      EXPECT_EQ(SymbolizeStatus::kOk, r->status) << fn;
      uint64_t loc = b.AddLocation(mid, f.addr, r->frames);
      EXPECT_TRUE(b.AddSample({loc}, {n, n * 1000000}, {{"pid", 42}}).ok());
    }
    uint64_t lib = b.AddMapping(
        {0x7f0000000000, 0x7f0000010000, 0x1000, "/usr/lib/libunknown.so", kUnsymbolizedId, "gnu"});
    uint64_t raw = b.AddLocation(lib, 0x7f0000000abc, {});
    EXPECT_TRUE(b.AddSample({raw}, {5, 5000000}).ok());
    EXPECT_FALSE(b.AddSample({raw}, {1}).ok()) << "wrong value count must be rejected";
    b.SetTime(1700000000000000000, 105000000);
    std::string out = tmp_.path() + "/profile.pb.gz";
    Status st = b.WriteGzip(out);
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    return out;
  }

  TempDir tmp_;
  std::string root_, path_, hex_;
  std::map<std::string, RecordedFunction> recorded_;
};

TEST_F(PprofTest, RoundTripsThroughProtobuf) {
  std::string out = Build();
  auto p = ReadPprofGzip(out);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  const perftools::profiles::Profile& prof = **p;
  ASSERT_GE(prof.string_table_size(), 1);
  EXPECT_EQ("", prof.string_table(0));
  ASSERT_EQ(2, prof.sample_type_size());
  EXPECT_EQ("samples", prof.string_table(prof.sample_type(0).type()));
  EXPECT_EQ("nanoseconds", prof.string_table(prof.sample_type(1).unit()));
  EXPECT_EQ(4, prof.sample_size());
  // All three functions live in one text mapping; the unknown library is a second one.
  ASSERT_EQ(2, prof.mapping_size());
  const auto& m0 = prof.mapping(0);
  EXPECT_EQ(hex_, prof.string_table(m0.build_id()));
  EXPECT_EQ(recorded_.at("spin_alpha").start, m0.memory_start());
  EXPECT_EQ(recorded_.at("spin_alpha").end, m0.memory_limit());
  EXPECT_EQ(recorded_.at("spin_alpha").pgoff, m0.file_offset());
  EXPECT_TRUE(m0.has_functions());
  EXPECT_TRUE(m0.has_line_numbers());
  const auto& m1 = prof.mapping(1);
  EXPECT_EQ(kUnsymbolizedId, prof.string_table(m1.build_id()));
  EXPECT_FALSE(m1.has_functions());
  bool raw_found = false;
  for (const auto& loc : prof.location()) {
    if (loc.mapping_id() == m1.id()) {
      raw_found = true;
      EXPECT_EQ(0x7f0000000abcu, loc.address()) << "unsymbolized locations keep their address";
      EXPECT_EQ(0, loc.line_size());
    } else {
      EXPECT_GE(loc.line_size(), 1);
    }
  }
  EXPECT_TRUE(raw_found);
}

class GoPprofTest : public PprofTest {
 protected:
  void SetUp() override {
    if (RunCommand("command -v go").exit_code != 0)
      GTEST_SKIP() << "go (Debian golang-go) not installed";
    PprofTest::SetUp();
  }
  // go tool pprof offline: private HOME/GOCACHE, no symbol server, no binary search path.
  CommandResult Pprof(const std::string& args, const std::string& file) {
    std::string env = "HOME=" + Quote(tmp_.path()) + " GOCACHE=" + Quote(tmp_.path() + "/gocache") +
                      " GOFLAGS= GOPROXY=off PPROF_BINARY_PATH=" + Quote(tmp_.path() + "/none") +
                      " PPROF_TMPDIR=" + Quote(tmp_.path());
    return RunCommand(env + " go tool pprof -symbolize=none " + args + " " + Quote(file), 120);
  }
};

TEST_F(GoPprofTest, TopShowsFunctionsInOrder) {
  std::string out = Build();
  CommandResult r = Pprof("-top -sample_index=samples", out);
  ASSERT_EQ(0, r.exit_code) << r.output;
  size_t a = r.output.find("spin_alpha"), b = r.output.find("spin_beta"),
         c = r.output.find("spin_outer");
  ASSERT_NE(std::string::npos, a) << r.output;
  ASSERT_NE(std::string::npos, b) << r.output;
  ASSERT_NE(std::string::npos, c) << r.output;
  EXPECT_LT(a, b) << r.output;
  EXPECT_LT(b, c) << r.output;
  // 50 of 105 samples.
  EXPECT_NE(std::string::npos, r.output.find("47.62%")) << r.output;
}

TEST_F(GoPprofTest, RawShowsBuildIdsAndAddresses) {
  std::string out = Build();
  CommandResult r = Pprof("-raw", out);
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_NE(std::string::npos, r.output.find(hex_)) << r.output;
  EXPECT_NE(std::string::npos, r.output.find(kUnsymbolizedId)) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("0x7f0000000abc")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("spin_alpha")) << r.output;
}

}  // namespace
}  // namespace pbid
