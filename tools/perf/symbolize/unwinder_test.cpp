// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/unwinder.h"

#include <elfutils/version.h>
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "pbid/perf_data.h"
#include "pbid/session.h"
#include "pbid/symbolize/symbolizer.h"
#include "test_util.h"

namespace pbid {
namespace {

using namespace pbid::testing;  // NOLINT: test helpers

// `perf record ARGS` (perf 6.1), run again when perf aborts: under load it now and then fails
// an assertion in its build-ID code and dies of SIGABRT, which is perf's fault, not the
// unwinder's. Any other failure, or an abort three times over, is the test's.
CommandResult PerfRecord(const std::string& args) {
  CommandResult r;
  for (int attempt = 0; attempt < 3; attempt++) {
    r = RunCommand("perf record " + args, 120);
    if (r.exit_code != 128 + SIGABRT)
      break;
  }
  return r;
}

// The frames the workload's hot samples should show, leaf first, down to main.
const std::vector<std::string> kChain = {"unwind_hot", "unwind_level3", "unwind_level2",
                                         "unwind_level1", "main"};

// What the samples taken in unwind_hot show.
struct HotSamples {
  int hot = 0;
  int reach_main = 0;  // the chain names kChain in order, main included
  int named = 0;       // every frame down to main has a name
  std::map<UnwindStop, int> stops;
};

class UnwinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v perf").exit_code != 0)
      GTEST_SKIP() << "perf (Debian linux-perf) not installed";
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_.path() + "/bin";
    ASSERT_TRUE(MakeDirs(dir_));
    lib_ = dir_ + "/libunwind_hot.so";
    ASSERT_TRUE(CopyFile(FixturePath("unwind/unwind_workload"), dir_ + "/unwind_workload", true));
    ASSERT_TRUE(CopyFile(FixturePath("unwind/libunwind_hot.so"), lib_, true));
    lib_hex_ = ReadelfBuildId(lib_);
    ASSERT_EQ(40u, lib_hex_.size());
  }

  // Records the workload of dir (dir_ by default) for a second; call_graph: "dwarf" or "fp";
  // launcher: a command that runs the workload, e.g. "setarch -R"; mode: the workload's
  // second argument.
  std::string Record(const std::string& call_graph, std::string dir = "",
                     const std::string& launcher = "", const std::string& mode = "") {
    if (dir.empty())
      dir = dir_;
    std::string data = dir + "/" + call_graph + ".data";
    CommandResult r = PerfRecord(
        "--call-graph " + call_graph + " --buildid-mmap -e cpu-clock -F 1000 -N -q -o " +
        Quote(data) + " -- " + launcher + " " + Quote(dir + "/unwind_workload") + " 1000 " + mode);
    EXPECT_EQ(0, r.exit_code) << r.output;
    return data;
  }

  std::unique_ptr<Symbolizer> MakeSymbolizer(const std::vector<std::string>& debug_dirs = {}) {
    SymbolizerOptions o;
    o.build_id_root = "";  // the system's debug files play no part
    o.debug_dirs = debug_dirs;
    o.use_debuginfod = false;
    auto s = Symbolizer::Create(o);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // The name of a frame: its function, or "" when the symbolizer names none.
  static std::string Name(Symbolizer* sym, const Mapping* m, uint64_t addr, bool leaf) {
    if (m == nullptr || !m->build_id)
      return "";
    uint64_t offset = addr - m->start + m->pgoff - (leaf ? 0 : 1);
    auto r = sym->SymbolizeOffset(m->build_id, m->path, offset, SymbolDetail::kFunction);
    if (!r.ok() || r->status != SymbolizeStatus::kOk)
      return "";
    return r->frames.back().function;
  }

  // Walks the samples of data: their user frames from the unwinder (with unwinder), else from
  // the callchain the kernel recorded (frame pointers), named by sym. stack_limit, when not 0,
  // cuts each stack copy to that many bytes. chain: the frames a hot sample should show.
  HotSamples Walk(const std::string& data, Symbolizer* sym, Unwinder* unwinder,
                  uint32_t stack_limit = 0, const std::vector<std::string>& chain = kChain) {
    HotSamples out;
    auto reader = PerfDataReader::Open(data);
    EXPECT_TRUE(reader.ok()) << reader.error().ToString();
    if (!reader.ok())
      return out;
    Session session(**reader);
    Status st = session.Process([&](const SampleContext& c) {
      const int32_t pid = static_cast<int32_t>(c.sample.sample_id.pid);
      if (IsKernelCpumode(c.sample.cpumode))
        return;
      std::vector<uint64_t> ips;
      UnwindStop stop = UnwindStop::kOther;
      if (unwinder != nullptr) {
        StackView stack = c.sample.stack_user(c.record);
        if (stack_limit != 0 && stack.dyn_size > stack_limit)
          stack.dyn_size = stack_limit;
        UnwindResult u = unwinder->Unwind(pid, c.sample.regs_user(c.record, c.attr), stack,
                                          [&](uint64_t a) { return session.Find(pid, a, false); });
        ips = std::move(u.ips);
        stop = u.stop;
      } else {
        for (uint64_t i = 0; i < c.sample.callchain.size(); i++) {
          if (c.sample.callchain[i] < kContextMax)
            ips.push_back(c.sample.callchain[i]);
        }
      }
      if (ips.empty() || Name(sym, session.Find(pid, ips[0], false), ips[0], true) != chain[0])
        return;
      out.hot++;
      out.stops[stop]++;
      std::vector<std::string> names;
      bool all_named = true;
      for (size_t i = 0; i < ips.size() && names.size() < chain.size(); i++) {
        names.push_back(Name(sym, session.Find(pid, ips[i], false), ips[i], i == 0));
        all_named = all_named && !names.back().empty();
      }
      if (names == chain) {
        out.reach_main++;
        out.named += all_named;
      }
    });
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    return out;
  }

  static std::string Describe(const HotSamples& h) {
    std::string s = std::to_string(h.hot) + " hot samples, " + std::to_string(h.reach_main) +
                    " reach main; stops:";
    for (const auto& [stop, n] : h.stops)
      s += std::string(" ") + UnwindStopName(stop) + "=" + std::to_string(n);
    return s;
  }

  TempDir tmp_;
  std::string dir_, lib_, lib_hex_;
};

// -O2 -fomit-frame-pointer code: the unwind tables lead from the hot function, four calls
// deep in the library, back to main, for nearly every sample.
TEST_F(UnwinderTest, DwarfUnwindReachesMain) {
  std::string data = Record("dwarf");
  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);
  auto unwinder = Unwinder::Create(sym.get());
  ASSERT_TRUE(unwinder.ok());
  HotSamples h = Walk(data, sym.get(), unwinder->get());
  SCOPED_TRACE(Describe(h));
  RecordProperty("hot", Describe(h));
  ASSERT_GE(h.hot, 200);
  EXPECT_GE(h.reach_main, h.hot * 95 / 100);
  EXPECT_EQ(h.reach_main, h.named);
  EXPECT_GE(h.stops[UnwindStop::kComplete], h.hot * 95 / 100);
  const UnwindStats& stats = (*unwinder)->stats();
  EXPECT_GE(stats.samples, static_cast<uint64_t>(h.hot));
  uint64_t counted = 0;
  for (uint64_t n : stats.by_stop)
    counted += n;
  EXPECT_EQ(stats.samples, counted);
}

// A caller found from rbx, which the leaf never saved: glibc's lazy-binding trampoline realigns
// its stack so, and libdw's x86_64 defaults lose rbx (see CarryRbx in unwinder.cpp). Every
// sample of the leaf is one such, not the odd one a lazy binding leaves in a profile.
TEST_F(UnwinderTest, CallerFoundFromRbxReachesMain) {
#if !_ELFUTILS_PREREQ(0, 188)
  GTEST_SKIP() << "libdw " << _ELFUTILS_VERSION << " has no dwfl_frame_reg (elfutils 0.188)";
#endif
  std::string data = Record("dwarf", dir_, "", "realign");
  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);
  auto unwinder = Unwinder::Create(sym.get());
  ASSERT_TRUE(unwinder.ok());
  HotSamples h =
      Walk(data, sym.get(), unwinder->get(), 0, {"unwind_hot", "unwind_realign", "main"});
  SCOPED_TRACE(Describe(h));
  ASSERT_GE(h.hot, 200);
  EXPECT_GE(h.reach_main, h.hot * 95 / 100);
  EXPECT_EQ(h.reach_main, h.named);
}

// What the unwinder keeps of a process from one sample to the next changes no result: each
// sample unwinds as it does by an unwinder that never saw the process, modules reported
// mid-unwind included.
TEST_F(UnwinderTest, KeptStateUnwindsAsAFreshUnwinder) {
  std::string data = Record("dwarf");
  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);
  auto kept = Unwinder::Create(sym.get());
  ASSERT_TRUE(kept.ok());
  auto reader = PerfDataReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  Session session(**reader);
  int compared = 0, complete = 0;
  Status st = session.Process([&](const SampleContext& c) {
    if (IsKernelCpumode(c.sample.cpumode) || compared >= 300)
      return;
    const int32_t pid = static_cast<int32_t>(c.sample.sample_id.pid);
    auto find = [&](uint64_t a) { return session.Find(pid, a, false); };
    RegsView regs = c.sample.regs_user(c.record, c.attr);
    StackView stack = c.sample.stack_user(c.record);
    UnwindResult a = (*kept)->Unwind(pid, regs, stack, find);
    auto fresh = Unwinder::Create(sym.get());
    ASSERT_TRUE(fresh.ok());
    UnwindResult b = (*fresh)->Unwind(pid, regs, stack, find);
    EXPECT_EQ(b.ips, a.ips) << "sample " << compared;
    EXPECT_EQ(b.stop, a.stop) << "sample " << compared;
    compared++;
    complete += a.stop == UnwindStop::kComplete;
  });
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  // The recording's length is fixed, its samples are not: a loaded machine gives fewer.
  ASSERT_GE(compared, 200) << "too few user samples recorded to compare";
  EXPECT_GE(complete, compared * 29 / 30);
}

// A pid that comes back as another process, with another library where the first had its
// own (address randomization off in both): the kept modules no longer match the mappings, and
// the unwinder starts the process afresh rather than unwind with the first one's tables.
TEST_F(UnwinderTest, ChangedMappingsRebuildTheProcess) {
  std::string first = Record("dwarf", dir_, "setarch -R");
  std::string other = tmp_.path() + "/other";
  ASSERT_TRUE(MakeDirs(other));
  ASSERT_TRUE(CopyFile(FixturePath("unwind/unwind_workload"), other + "/unwind_workload", true));
  ASSERT_TRUE(
      CopyFile(FixturePath("unwind_v2/libunwind_hot.so"), other + "/libunwind_hot.so", true));
  std::string second = Record("dwarf", other, "setarch -R");

  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);
  auto kept = Unwinder::Create(sym.get());
  ASSERT_TRUE(kept.ok());
  int32_t first_pid = -1;
  uint64_t first_lib_start = 0;
  {
    auto reader = PerfDataReader::Open(first);
    ASSERT_TRUE(reader.ok()) << reader.error().ToString();
    Session session(**reader);
    Status st = session.Process([&](const SampleContext& c) {
      if (IsKernelCpumode(c.sample.cpumode))
        return;
      const int32_t pid = static_cast<int32_t>(c.sample.sample_id.pid);
      first_pid = pid;
      if (c.mapping != nullptr && c.mapping->path == lib_)
        first_lib_start = c.mapping->start;
      (void)(*kept)->Unwind(pid, c.sample.regs_user(c.record, c.attr),
                            c.sample.stack_user(c.record),
                            [&](uint64_t a) { return session.Find(pid, a, false); });
    });
    ASSERT_TRUE(st.ok()) << st.error().ToString();
  }
  ASSERT_NE(-1, first_pid);
  ASSERT_NE(0u, first_lib_start);

  auto reader = PerfDataReader::Open(second);
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  Session session(**reader);
  int compared = 0, complete = 0;
  Status st = session.Process([&](const SampleContext& c) {
    if (IsKernelCpumode(c.sample.cpumode))
      return;
    const int32_t pid = static_cast<int32_t>(c.sample.sample_id.pid);
    if (c.mapping != nullptr && c.mapping->path == other + "/libunwind_hot.so") {
      EXPECT_EQ(first_lib_start, c.mapping->start) << "the library moved: nothing to rebuild";
    }
    auto find = [&](uint64_t a) { return session.Find(pid, a, false); };
    RegsView regs = c.sample.regs_user(c.record, c.attr);
    StackView stack = c.sample.stack_user(c.record);
    UnwindResult a = (*kept)->Unwind(first_pid, regs, stack, find);
    auto fresh = Unwinder::Create(sym.get());
    ASSERT_TRUE(fresh.ok());
    UnwindResult b = (*fresh)->Unwind(pid, regs, stack, find);
    EXPECT_EQ(b.ips, a.ips) << "sample " << compared;
    EXPECT_EQ(b.stop, a.stop) << "sample " << compared;
    compared++;
    complete += a.stop == UnwindStop::kComplete;
  });
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_GE(compared, 200);
  EXPECT_GE(complete, compared * 95 / 100);
}

// The same code followed by frame pointers: the kernel's callchains of the hot samples break
// before main.
TEST_F(UnwinderTest, FramePointerChainsBreak) {
  std::string data = Record("fp");
  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);
  HotSamples h = Walk(data, sym.get(), nullptr);
  SCOPED_TRACE(Describe(h));
  RecordProperty("hot", Describe(h));
  ASSERT_GE(h.hot, 200);
  EXPECT_LE(h.reach_main, h.hot * 10 / 100);
}

// The library on disk replaced by a rebuild (another build ID) after the recording: the
// unwinder takes the original from a debug dir, by build ID, and never the file at the
// recorded path; without that dir it stops at the library, knowing why.
TEST_F(UnwinderTest, ReplacedLibraryIsFoundByBuildId) {
  std::string data = Record("dwarf");
  std::string debug = tmp_.path() + "/debug";
  ASSERT_FALSE(InstallInBuildIdDir(debug, lib_hex_, lib_, "").empty());
  ASSERT_TRUE(CopyFile(FixturePath("unwind_v2/libunwind_hot.so"), lib_, true));
  ASSERT_NE(lib_hex_, ReadelfBuildId(lib_));

  auto sym = MakeSymbolizer({debug});
  ASSERT_NE(nullptr, sym);
  auto unwinder = Unwinder::Create(sym.get());
  ASSERT_TRUE(unwinder.ok());
  HotSamples h = Walk(data, sym.get(), unwinder->get());
  SCOPED_TRACE(Describe(h));
  RecordProperty("hot", Describe(h));
  ASSERT_GE(h.hot, 200);
  EXPECT_GE(h.reach_main, h.hot * 95 / 100);
  EXPECT_EQ(h.reach_main, h.named);
  EXPECT_GE(sym->Coverage().path_mismatches, 1);
  EXPECT_EQ(SymbolSource::kDebugDir, sym->SourceOf(IdFromHex(lib_hex_.c_str())));

  // Without the debug dir the hot function is not named: the unwinder's own record of why
  // it stopped is what tells.
  auto bare = MakeSymbolizer();
  auto bare_unwinder = Unwinder::Create(bare.get());
  ASSERT_TRUE(bare_unwinder.ok());
  (void)Walk(data, sym.get(), bare_unwinder->get());
  const UnwindStats& stats = (*bare_unwinder)->stats();
  RecordProperty("bare_no_elf", std::to_string(stats.Count(UnwindStop::kNoElf)) + " of " +
                                    std::to_string(stats.samples));
  EXPECT_GE(stats.Count(UnwindStop::kNoElf), static_cast<uint64_t>(h.hot) * 95 / 100);
  EXPECT_GE(bare->Coverage().path_mismatches, 1);
}

// The library without unwind tables (same build ID), and stack copies cut short: each stop
// is counted under its own reason, and no frame is made up past it.
TEST_F(UnwinderTest, StopsAreCountedByReason) {
  std::string data = Record("dwarf");
  auto sym = MakeSymbolizer();
  ASSERT_NE(nullptr, sym);

  // Eight bytes hold the hot function's return address, not its caller's.
  auto short_unwinder = Unwinder::Create(sym.get());
  ASSERT_TRUE(short_unwinder.ok());
  HotSamples cut = Walk(data, sym.get(), short_unwinder->get(), 8);
  SCOPED_TRACE("cut stacks: " + Describe(cut));
  RecordProperty("cut", Describe(cut));
  ASSERT_GE(cut.hot, 200);
  EXPECT_EQ(0, cut.reach_main);
  EXPECT_GE(cut.stops[UnwindStop::kStackTooShort], cut.hot * 90 / 100);

  ASSERT_TRUE(CopyFile(FixturePath("unwind_nocfi/libunwind_hot.so"), lib_, true));
  ASSERT_EQ(lib_hex_, ReadelfBuildId(lib_));
  auto nocfi_sym = MakeSymbolizer();
  auto unwinder = Unwinder::Create(nocfi_sym.get());
  ASSERT_TRUE(unwinder.ok());
  HotSamples h = Walk(data, nocfi_sym.get(), unwinder->get());
  SCOPED_TRACE("no CFI: " + Describe(h));
  RecordProperty("nocfi", Describe(h));
  ASSERT_GE(h.hot, 200);
  EXPECT_EQ(0, h.reach_main);
  EXPECT_GE(h.stops[UnwindStop::kNoCfi], h.hot * 95 / 100);
}

TEST(UnwinderCreateTest, NeedsASymbolizer) {
  auto u = Unwinder::Create(nullptr);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(ErrorKind::kInvalidArgument, u.error().kind);
}

}  // namespace
}  // namespace pbid
