// SPDX-License-Identifier: GPL-2.0
//
// Symbolization through a real elfutils debuginfod started by the test on a loopback port,
// with no local debug directory: the debug file (and, for the replaced-binary case, the
// executable) exist only on the server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "debuginfod_client.h"
#include "pbid/symbolize/symbolizer.h"
#include "test_util.h"

namespace pbid {
namespace {

using namespace pbid::testing;  // NOLINT: test helpers

const char* const kFunctions[] = {"spin_alpha", "spin_beta", "spin_outer"};

bool HaveDebuginfod() {
  return RunCommand("command -v debuginfod").exit_code == 0;
}

class DebuginfodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveDebuginfod())
      GTEST_SKIP() << "debuginfod (Debian package debuginfod) not installed";
    ASSERT_FALSE(tmp_.path().empty());
    serve_ = tmp_.path() + "/served";
    ASSERT_TRUE(MakeDirs(serve_));
    ASSERT_TRUE(MakeDirs(tmp_.path() + "/bin"));
    ASSERT_TRUE(MakeDirs(tmp_.path() + "/empty-root"));
    recorded_path_ = tmp_.path() + "/bin/workload";
    ASSERT_TRUE(CopyFile(FixturePath("workload.stripped"), recorded_path_, true));
    hex_ = ReadelfBuildId(recorded_path_);
    ASSERT_EQ(40u, hex_.size());
    id_ = *BuildId::FromHex(hex_);
    recorded_ = RecordWorkload(recorded_path_);
    ASSERT_EQ(3u, recorded_.size());
    // A private client cache: nothing cached by an earlier run may make this pass.
    setenv("DEBUGINFOD_CACHE_PATH", (tmp_.path() + "/client-cache").c_str(), 1);
    setenv("DEBUGINFOD_TIMEOUT", "20", 1);
  }

  void StartServer(int files) {
    std::string err = server_.Start(serve_, tmp_.path(), files);
    ASSERT_EQ("", err);
  }

  SymbolizerOptions Options() const {
    SymbolizerOptions o;
    o.build_id_root = tmp_.path() + "/empty-root";
    o.use_debuginfod = true;
    o.debuginfod_urls = server_.url();
    return o;
  }

  void ExpectNamesAll(Symbolizer& s) {
    for (const char* fn : kFunctions) {
      const RecordedFunction& f = recorded_.at(fn);
      auto r = s.SymbolizeAddress(id_, recorded_path_, f.start, f.pgoff, f.addr);
      ASSERT_TRUE(r.ok()) << r.error().ToString();
      ASSERT_EQ(SymbolizeStatus::kOk, r->status)
          << fn << ": " << SymbolizeStatusName(r->status) << "\nserver log:\n"
          << server_.log();
      EXPECT_EQ(fn, r->frames.back().function);
      EXPECT_EQ(SymbolSource::kDebuginfod, r->source);
      for (const SourceFrame& fr : r->frames) {
        EXPECT_EQ(std::string::npos, fr.function.find("decoy"));
      }
    }
  }

  TempDir tmp_;
  DebuginfodServer server_;
  std::string serve_, recorded_path_, hex_;
  BuildId id_;
  std::map<std::string, RecordedFunction> recorded_;
};

TEST_F(DebuginfodTest, DebugFileFromServerNamesFunctions) {
  ASSERT_TRUE(CopyFile(FixturePath("workload.debug"), serve_ + "/workload.debug", false));
  StartServer(1);
  auto s = Symbolizer::Create(Options());
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ExpectNamesAll(**s);
  SymbolizerCoverage c = (*s)->Coverage();
  EXPECT_EQ(1, c.modules_by_source[SymbolSource::kDebuginfod]);
  EXPECT_EQ(0, c.path_mismatches);
  // The executable came from the recorded path: only the debug file was asked for.
  EXPECT_EQ(1, c.debuginfod_queries);
}

TEST_F(DebuginfodTest, ReplacedBinaryIsSymbolizedFromServerExecutable) {
  ASSERT_TRUE(CopyFile(FixturePath("workload.debug"), serve_ + "/workload.debug", false));
  ASSERT_TRUE(CopyFile(FixturePath("workload.stripped"), serve_ + "/workload", true));
  StartServer(2);
  ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.full"), recorded_path_, true));
  auto s = Symbolizer::Create(Options());
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ExpectNamesAll(**s);
  EXPECT_EQ(1, (*s)->Coverage().path_mismatches);
}

TEST_F(DebuginfodTest, MissingIdIsAskedOnce) {
  StartServer(0);
  auto client = DebuginfodClient::Create(server_.url());
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  ASSERT_TRUE((*client)->Enabled());
  auto missing = *BuildId::FromHex("00112233445566778899aabbccddeeff00112233");
  for (int i = 0; i < 3; i++) {
    EXPECT_FALSE((*client)->Find(missing, DebuginfodClient::Kind::kDebuginfo).has_value());
  }
  EXPECT_EQ(1, (*client)->queries());
  EXPECT_EQ("", (*client)->last_error()) << "a plain miss is not an error";
}

TEST_F(DebuginfodTest, FoundIdIsNotAskedAgain) {
  ASSERT_TRUE(CopyFile(FixturePath("workload.debug"), serve_ + "/workload.debug", false));
  StartServer(1);
  auto client = DebuginfodClient::Create(server_.url());
  ASSERT_TRUE(client.ok());
  auto p1 = (*client)->Find(id_, DebuginfodClient::Kind::kDebuginfo);
  auto p2 = (*client)->Find(id_, DebuginfodClient::Kind::kDebuginfo);
  ASSERT_TRUE(p1.has_value()) << server_.log();
  EXPECT_EQ(*p1, *p2);
  EXPECT_EQ(hex_, ReadelfBuildId(*p1));
  EXPECT_EQ(1, (*client)->queries());
}

TEST_F(DebuginfodTest, ServerDownIsReportedNotFatal) {
  // Nothing listens on this port: lookups fail, symbolization degrades to "not found".
  int port = FreeTcpPort();
  SymbolizerOptions o = Options();
  o.debuginfod_urls = "http://127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.full"), recorded_path_, true));
  auto s = Symbolizer::Create(o);
  ASSERT_TRUE(s.ok());
  auto r = (*s)->SymbolizeOffset(id_, recorded_path_, recorded_.at("spin_alpha").file_offset());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SymbolizeStatus::kNotFound, r->status);
  EXPECT_NE("", (*s)->Coverage().debuginfod_error);
}

}  // namespace
}  // namespace pbid
