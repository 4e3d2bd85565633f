// SPDX-License-Identifier: GPL-2.0
//
// The symbolizer against real files: the fixture workload is built with DWARF, split with
// objcopy --only-keep-debug and stripped at build time. "Recording" is the workload reporting
// its own runtime addresses and mappings; build IDs come from readelf.
#include "pbid/symbolize/symbolizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <set>
#include <vector>

#include "test_util.h"

namespace pbid {
namespace {

using testing::CopyFile;
using testing::FixturePath;
using testing::InstallInBuildIdDir;
using testing::MakeDirs;
using testing::ReadelfBuildId;
using testing::RecordedFunction;
using testing::RecordWorkload;
using testing::TempDir;

const char* const kFunctions[] = {"spin_alpha", "spin_beta", "spin_outer"};

class SymbolizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    bin_dir_ = tmp_.path() + "/bin";
    root_ = tmp_.path() + "/root";  // stands in for /usr/lib/debug
    ASSERT_TRUE(MakeDirs(bin_dir_));
    ASSERT_TRUE(MakeDirs(root_));
    recorded_path_ = bin_dir_ + "/workload";
    ASSERT_TRUE(CopyFile(FixturePath("workload.stripped"), recorded_path_, true));
    hex_ = ReadelfBuildId(recorded_path_);
    ASSERT_EQ(40u, hex_.size()) << "readelf found no sha1 build ID in " << recorded_path_;
    auto id = BuildId::FromHex(hex_);
    ASSERT_TRUE(id.ok());
    id_ = *id;
    recorded_ = RecordWorkload(recorded_path_);
    ASSERT_EQ(3u, recorded_.size()) << "workload --addrs printed too little";
  }

  SymbolizerOptions Options() const {
    SymbolizerOptions o;
    o.build_id_root = root_;
    o.use_debuginfod = false;
    return o;
  }

  std::unique_ptr<Symbolizer> Make(const SymbolizerOptions& o) {
    auto s = Symbolizer::Create(o);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
    return s.ok() ? std::move(*s) : nullptr;
  }

  Symbolization Lookup(Symbolizer& s, const std::string& fn) {
    const RecordedFunction& f = recorded_.at(fn);
    auto r = s.SymbolizeAddress(id_, recorded_path_, f.start, f.pgoff, f.addr);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
    return r.ok() ? *r : Symbolization{};
  }

  void ExpectNamesAll(Symbolizer& s, SymbolSource source) {
    for (const char* fn : kFunctions) {
      Symbolization r = Lookup(s, fn);
      ASSERT_EQ(SymbolizeStatus::kOk, r.status) << fn << ": " << SymbolizeStatusName(r.status);
      ASSERT_FALSE(r.frames.empty());
      EXPECT_EQ(fn, r.frames.back().function);
      EXPECT_NE(std::string::npos, r.frames.back().file.find("workload.c")) << fn;
      EXPECT_GT(r.frames.back().line, 0) << fn;
      EXPECT_EQ(source, r.source) << SymbolSourceName(r.source);
    }
  }

  TempDir tmp_;
  std::string bin_dir_, root_, recorded_path_, hex_;
  BuildId id_;
  std::map<std::string, RecordedFunction> recorded_;
};

TEST_F(SymbolizerTest, StrippedBinaryAloneNamesNothing) {
  // The control for the tests below: without the debug file the stripped binary has no name
  // for these functions, so any name they find came from the file located by build ID.
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  for (const char* fn : kFunctions) {
    Symbolization r = Lookup(*s, fn);
    EXPECT_EQ(SymbolizeStatus::kNoSymbol, r.status) << fn << ": " << SymbolizeStatusName(r.status);
    EXPECT_TRUE(r.frames.empty());
  }
}

TEST_F(SymbolizerTest, DebugFileInBuildIdDirNamesFunctions) {
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kBuildIdDir);
  SymbolizerCoverage c = s->Coverage();
  EXPECT_EQ(1, c.modules_by_source[SymbolSource::kBuildIdDir]);
  EXPECT_EQ(0, c.path_mismatches);
}

TEST_F(SymbolizerTest, CorruptCandidateIsSkippedForTheNextPlace) {
  // A truncated file under the right name in the .build-id dir: its build ID cannot be read,
  // so it is not used, and the debug dir's good copy is.
  std::string bad = tmp_.path() + "/truncated.debug";
  {
    auto r = testing::RunCommand("head -c 100 " + testing::Quote(FixturePath("workload.debug")) +
                                 " > " + testing::Quote(bad));
    ASSERT_EQ(0, r.exit_code) << r.output;
  }
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, bad, ".debug").empty());
  std::string dir = tmp_.path() + "/extra";
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, FixturePath("workload.debug"), ".debug").empty());
  SymbolizerOptions o = Options();
  o.debug_dirs.push_back(dir);
  auto s = Make(o);
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kDebugDir);
}

TEST(SymbolizerMd5Test, SixteenByteBuildIdsWork) {
  TempDir tmp;
  std::string bin = tmp.path() + "/workload_md5";
  ASSERT_TRUE(CopyFile(FixturePath("workload_md5.stripped"), bin, true));
  std::string hex = ReadelfBuildId(bin);
  ASSERT_EQ(32u, hex.size()) << "md5 build ID expected, got " << hex;
  ASSERT_FALSE(
      InstallInBuildIdDir(tmp.path(), hex, FixturePath("workload_md5.debug"), ".debug").empty());
  auto recorded = RecordWorkload(bin);
  ASSERT_EQ(3u, recorded.size());
  SymbolizerOptions o;
  o.build_id_root = tmp.path();
  o.use_debuginfod = false;
  auto s = Symbolizer::Create(o);
  ASSERT_TRUE(s.ok());
  auto id = BuildId::FromHex(hex);
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(16u, id->size());
  const RecordedFunction& f = recorded.at("spin_beta");
  auto r = (*s)->SymbolizeAddress(*id, bin, f.start, f.pgoff, f.addr);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(SymbolizeStatus::kOk, r->status) << SymbolizeStatusName(r->status);
  EXPECT_EQ("spin_beta", r->frames.back().function);
}

TEST_F(SymbolizerTest, DebugDirNamesFunctions) {
  std::string dir = tmp_.path() + "/extra";
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, FixturePath("workload.debug"), ".debug").empty());
  SymbolizerOptions o = Options();
  o.debug_dirs.push_back(tmp_.path() + "/empty-dir");
  o.debug_dirs.push_back(dir);
  auto s = Make(o);
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kDebugDir);
  EXPECT_EQ(1, s->Coverage().modules_by_source[SymbolSource::kDebugDir]);
}

// perf's build-ID cache (~/.debug): .build-id/xx/yyyy is a directory holding the debug file
// as "debug" (and the executable as "elf").
TEST_F(SymbolizerTest, PerfBuildIdCacheLayoutIsRead) {
  std::string dir = tmp_.path() + "/perf-cache";
  ASSERT_TRUE(MakeDirs(dir + "/.build-id/" + hex_.substr(0, 2) + "/" + hex_.substr(2)));
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, FixturePath("workload.debug"), "/debug").empty());
  SymbolizerOptions o = Options();
  o.debug_dirs.push_back(dir);
  auto s = Make(o);
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kDebugDir);
}

TEST_F(SymbolizerTest, BuildIdDirComesBeforeDebugDir) {
  std::string dir = tmp_.path() + "/extra";
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, FixturePath("workload.debug"), ".debug").empty());
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  SymbolizerOptions o = Options();
  o.debug_dirs.push_back(dir);
  auto s = Make(o);
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kBuildIdDir);
}

TEST_F(SymbolizerTest, UnstrippedRecordedPathIsUsedDirectly) {
  ASSERT_TRUE(CopyFile(FixturePath("workload.full"), recorded_path_, true));
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kPath);
}

TEST_F(SymbolizerTest, InlinedFramesComeInnermostFirst) {
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  // spin_outer's body is inlined_gamma's loop: some address in its first bytes is inside it.
  const RecordedFunction& f = recorded_.at("spin_outer");
  bool found = false;
  for (uint64_t d = 0; d < 64 && !found; d++) {
    auto r = s->SymbolizeOffset(id_, recorded_path_, f.file_offset() + d);
    ASSERT_TRUE(r.ok());
    if (r->status == SymbolizeStatus::kOk && r->frames.size() >= 2) {
      found = true;
      EXPECT_EQ("inlined_gamma", r->frames.front().function);
      EXPECT_EQ("spin_outer", r->frames.back().function);
      EXPECT_GT(r->frames.back().line, 0) << "call site line of the inlined call";
      EXPECT_TRUE(r->has_inline);
    }
  }
  EXPECT_TRUE(found) << "no address in spin_outer resolved to the inlined function";
}

TEST_F(SymbolizerTest, FunctionDetailNamesWhatFullDetailNamesOutermost) {
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  auto full = Make(Options());
  auto function = Make(Options());
  ASSERT_NE(nullptr, full);
  ASSERT_NE(nullptr, function);
  // Every offset around the functions. kFunction answers most from the ranges of functions
  // named before: the offsets in inlined code are asked first, so that a function is first
  // named from inside an inlined call, then the rest in shuffled order.
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& [name, f] : recorded_) {
    lo = std::min(lo, f.file_offset());
    hi = std::max(hi, f.file_offset());
  }
  std::vector<std::pair<uint64_t, Symbolization>> wanted;
  for (uint64_t o = lo > 512 ? lo - 512 : 0; o < hi + 512; o++) {
    auto want = full->SymbolizeOffset(id_, recorded_path_, o);
    ASSERT_TRUE(want.ok()) << o;
    wanted.emplace_back(o, *want);
  }
  std::mt19937_64 rng(7);
  std::shuffle(wanted.begin(), wanted.end(), rng);
  auto inlined_end = std::stable_partition(wanted.begin(), wanted.end(),
                                           [](const auto& w) { return w.second.has_inline; });
  ASSERT_NE(wanted.begin(), inlined_end) << "no offset in inlined code: the test would miss it";
  std::set<std::string> named;
  for (const auto& [o, want] : wanted) {
    auto got = function->SymbolizeOffset(id_, recorded_path_, o, SymbolDetail::kFunction);
    ASSERT_TRUE(got.ok()) << o;
    ASSERT_EQ(want.status, got->status) << "offset 0x" << std::hex << o;
    if (want.status != SymbolizeStatus::kOk)
      continue;
    ASSERT_EQ(1u, got->frames.size());
    const SourceFrame& w = want.frames.back();
    const SourceFrame& g = got->frames.front();
    ASSERT_EQ(w.function, g.function) << "offset 0x" << std::hex << o;
    EXPECT_EQ(w.linkage_name, g.linkage_name);
    // Named from the symbol table, as perf names functions: no DWARF, so no declaration line.
    EXPECT_EQ(0, g.function_line);
    EXPECT_EQ("", g.file);
    EXPECT_EQ(0, g.line);
    named.insert(w.function);
  }
  for (const char* fn : kFunctions)
    EXPECT_EQ(1u, named.count(fn)) << fn;
}

TEST_F(SymbolizerTest, MissingBuildIdIsNotGuessedFromPath) {
  ASSERT_TRUE(CopyFile(FixturePath("workload.full"), recorded_path_, true));
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  auto r =
      s->SymbolizeOffset(std::nullopt, recorded_path_, recorded_.at("spin_alpha").file_offset());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SymbolizeStatus::kNoBuildId, r->status);
  EXPECT_TRUE(r->frames.empty());
}

// The binary was upgraded in place after the recording: the decoy has the same layout and its
// own symbols (every function renamed decoy_*), so a lookup by path would name them wrongly.
class ReplacedBinaryTest : public SymbolizerTest {
 protected:
  void SetUp() override {
    SymbolizerTest::SetUp();
    ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.full"), recorded_path_, true));
    ASSERT_NE(hex_, ReadelfBuildId(recorded_path_));
  }

  void ExpectNoDecoyNames(Symbolizer& s) {
    for (const char* fn : kFunctions) {
      Symbolization r = Lookup(s, fn);
      for (const SourceFrame& fr : r.frames) {
        EXPECT_EQ(std::string::npos, fr.function.find("decoy")) << fn << " -> " << fr.function;
      }
    }
  }
};

TEST_F(ReplacedBinaryTest, TheDecoyWouldGiveWrongNames) {
  // Control: looked up under its own build ID, the decoy does name its functions decoy_*, at
  // the offsets recorded for the original. This is what a path-based lookup would print.
  auto decoy_id = BuildId::FromHex(ReadelfBuildId(recorded_path_));
  ASSERT_TRUE(decoy_id.ok());
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  int decoys = 0;
  for (const char* fn : kFunctions) {
    auto r = s->SymbolizeOffset(*decoy_id, recorded_path_, recorded_.at(fn).file_offset());
    ASSERT_TRUE(r.ok());
    if (r->status == SymbolizeStatus::kOk &&
        r->frames.back().function.find("decoy") != std::string::npos) {
      decoys++;
    }
  }
  EXPECT_EQ(3, decoys);
}

TEST_F(ReplacedBinaryTest, OnlyDebugFileGivesMismatchAndNoSymbols) {
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  for (const char* fn : kFunctions) {
    Symbolization r = Lookup(*s, fn);
    // Offsets cannot be translated with a debug-only file: unsymbolized, never guessed.
    EXPECT_EQ(SymbolizeStatus::kNoExecutable, r.status) << SymbolizeStatusName(r.status);
    EXPECT_TRUE(r.frames.empty());
  }
  ExpectNoDecoyNames(*s);
  SymbolizerCoverage c = s->Coverage();
  EXPECT_EQ(1, c.path_mismatches);
  EXPECT_EQ(1, c.modules_by_source[SymbolSource::kNone]);
}

TEST_F(ReplacedBinaryTest, ExecutableInBuildIdDirStillNamesFunctions) {
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.debug"), ".debug").empty());
  ASSERT_FALSE(InstallInBuildIdDir(root_, hex_, FixturePath("workload.stripped"), "").empty());
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  ExpectNamesAll(*s, SymbolSource::kBuildIdDir);
  ExpectNoDecoyNames(*s);
  EXPECT_EQ(1, s->Coverage().path_mismatches);
}

TEST_F(ReplacedBinaryTest, NothingFoundGivesNotFound) {
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  Symbolization r = Lookup(*s, "spin_alpha");
  EXPECT_EQ(SymbolizeStatus::kNotFound, r.status);
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(1, s->Coverage().path_mismatches);
}

TEST_F(SymbolizerTest, MismatchIsCountedOncePerPathAndId) {
  ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.stripped"), recorded_path_, true));
  auto s = Make(Options());
  ASSERT_NE(nullptr, s);
  for (int i = 0; i < 5; i++)
    Lookup(*s, "spin_alpha");
  EXPECT_EQ(1, s->Coverage().path_mismatches);
}

// A kernel module (.ko: a relocatable file linked with ld -r --build-id, as kbuild links them)
// named by core offsets: .text first at 0, .init.text left out of the core, .text.later at the
// next 16-byte boundary after .text (0x50), as the kernel's layout_sections() places them.
TEST(SymbolizerKernelModuleTest, PlacesSectionsAsTheKernelDoes) {
  TempDir tmp;
  const std::string src = tmp.path() + "/mod.s", obj = tmp.path() + "/mod.o",
                    ko = tmp.path() + "/mod.ko";
  std::ofstream(src) << "\t.section .text,\"ax\",@progbits\n\t.p2align 4\n"
                        "\t.type first_fn,@function\nfirst_fn:\n\t.fill 0x47,1,0x90\n"
                        "\t.size first_fn, .-first_fn\n"
                        "\t.section .init.text,\"ax\",@progbits\n\t.type init_fn,@function\n"
                        "init_fn:\n\t.fill 512,1,0x90\n\t.size init_fn, .-init_fn\n"
                        "\t.section .rodata,\"a\",@progbits\n\t.fill 100,1,0\n"
                        "\t.section .text.later,\"ax\",@progbits\n\t.p2align 4\n"
                        "\t.type later_fn,@function\nlater_fn:\n\t.fill 0x80,1,0x90\n"
                        "\t.size later_fn, .-later_fn\n";
  auto built = testing::RunCommand("as -o " + testing::Quote(obj) + " " + testing::Quote(src) +
                                   " && ld -r --build-id=sha1 -o " + testing::Quote(ko) + " " +
                                   testing::Quote(obj));
  ASSERT_EQ(0, built.exit_code) << built.output;
  std::string hex = ReadelfBuildId(ko);
  ASSERT_EQ(40u, hex.size()) << "ld -r --build-id wrote no build ID";
  ASSERT_FALSE(InstallInBuildIdDir(tmp.path() + "/debug", hex, ko, "").empty());
  SymbolizerOptions o;
  o.build_id_root = "";
  o.debug_dirs.push_back(tmp.path() + "/debug");
  o.use_debuginfod = false;
  auto s = Symbolizer::Create(o);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  auto id = BuildId::FromHex(hex);
  ASSERT_TRUE(id.ok());
  auto name = [&](uint64_t core_offset) -> std::string {
    auto r = (*s)->SymbolizeKernelModule(*id, "[mod]", core_offset);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r->status != SymbolizeStatus::kOk)
      return r.ok() ? SymbolizeStatusName(r->status) : "error";
    return r->frames.back().function;
  };
  EXPECT_EQ("first_fn", name(0));
  EXPECT_EQ("first_fn", name(0x46));
  EXPECT_EQ(SymbolizeStatusName(SymbolizeStatus::kOffsetNotMapped), name(0x48));  // padding
  EXPECT_EQ("later_fn", name(0x50));
  EXPECT_EQ("later_fn", name(0xcf));
  EXPECT_EQ(SymbolizeStatusName(SymbolizeStatus::kOffsetNotMapped), name(0xd0));  // past the code
  // Another file's ID: nothing to name by.
  auto other = BuildId::FromHex(std::string(40, 'a'));
  ASSERT_TRUE(other.ok());
  auto r = (*s)->SymbolizeKernelModule(*other, "[mod]", 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SymbolizeStatus::kNotFound, r->status);
}

}  // namespace
}  // namespace pbid
