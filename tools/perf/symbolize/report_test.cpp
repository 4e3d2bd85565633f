// SPDX-License-Identifier: GPL-2.0
//
// End to end: the real perf (Debian linux-perf) records the stripped fixture workload with
// --buildid-mmap; `report` must name its functions from the debug file found by build ID
// (debug dir, then a real debuginfod), count a replaced binary as a mismatch without naming
// anything wrongly, and export a pprof profile that go tool pprof reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "pbid/events.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "pbid/symbolize/report.h"
#include "test_util.h"

namespace pbid {
namespace {

using namespace pbid::testing;  // NOLINT: test helpers

// A kernel sample at ip, in pid 100, of the one event (id 7) the kernel tests' files have.
Result<RecordBytes> KernelSample(uint64_t ip, uint64_t time, const EventAttr& attr) {
  SampleRecord s;
  s.cpumode = PERF_RECORD_MISC_KERNEL;
  s.ip = ip;
  s.period = 1000000;
  s.sample_id.pid = 100;
  s.sample_id.tid = 100;
  s.sample_id.time = time;
  s.sample_id.id = 7;
  return BuildSample(s, {}, attr);
}

// The command under test, as users run it.
const std::string kReport = Quote(PerfBuildIdBinary()) + " report";
// The workload's argument: about 0.3 s of work here, some 300 samples at -F 999. At a third of
// that, with a kernel build beside it, the smallest function once got none of 98 samples: its
// slices (0.17 ms) were shorter than the sampling period.
const std::string kIterations = "300000000";

// `perf record ARGS` (perf 6.1), run again when perf aborts: under load it now and then fails
// an assertion in its build-ID code (util/build-id.c), smashes its stack and dies of SIGABRT,
// with or without -N. That is perf's fault, not a result of the report under test; any other
// failure, or an abort three times over, is the test's.
CommandResult PerfRecord(const std::string& args) {
  CommandResult r;
  for (int attempt = 0; attempt < 3; attempt++) {
    r = RunCommand("perf record " + args, 120);
    if (r.exit_code != 128 + SIGABRT)
      break;
  }
  return r;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v perf").exit_code != 0) {
      GTEST_SKIP() << "perf (Debian linux-perf) not installed";
    }
    ASSERT_FALSE(tmp_.path().empty());
    ASSERT_TRUE(MakeDirs(tmp_.path() + "/bin"));
    ASSERT_TRUE(MakeDirs(tmp_.path() + "/empty-root"));
    bin_ = tmp_.path() + "/bin/workload";
    ASSERT_TRUE(CopyFile(FixturePath("workload.stripped"), bin_, true));
    hex_ = ReadelfBuildId(bin_);
    ASSERT_EQ(40u, hex_.size());
    data_ = tmp_.path() + "/perf.data";
    CommandResult r = PerfRecord("--buildid-mmap -e cpu-clock -F 999 -o " + Quote(data_) + " -- " +
                                 Quote(bin_) + " " + kIterations);
    if (r.exit_code != 0) {
      GTEST_SKIP() << "perf record cannot run here (perf_event_paranoid, no PMU access?): "
                   << r.output;
    }
    debug_dir_ = tmp_.path() + "/debug";
    ASSERT_FALSE(
        InstallInBuildIdDir(debug_dir_, hex_, FixturePath("workload.debug"), ".debug").empty());
  }

  // `env` goes before the command: "VAR=value " to set variables for it.
  CommandResult Report(const std::string& args, const std::string& env = "") {
    return RunCommand(env + kReport + " -i " + Quote(data_) + " --debug-root " +
                          Quote(tmp_.path() + "/empty-root") + " " + args,
                      120);
  }

  // The rows of the table in order: "spin_alpha" etc. for the workload's symbols.
  static std::vector<std::string> WorkloadRows(const std::string& out) {
    std::vector<std::string> rows;
    std::istringstream in(out);
    std::string line;
    std::regex row(R"(^\s+[0-9.]+%\s+[0-9]+\s+workload\s+\[\.\] (\S+))");
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, row))
        rows.push_back(m[1]);
    }
    return rows;
  }

  static double UserCoverage(const std::string& out) {
    std::smatch m;
    std::regex re(R"(user samples with a build ID: ([0-9.]+)%)");
    return std::regex_search(out, m, re) ? std::stod(m[1]) : -1;
  }

  void ExpectNamedInOrder(const CommandResult& r) {
    std::vector<std::string> rows = WorkloadRows(r.output);
    ASSERT_GE(rows.size(), 3u) << r.output;
    // n, n/3 and n/9 iterations: alpha, beta, then outer (inlined gamma's loop).
    EXPECT_EQ("spin_alpha", rows[0]) << r.output;
    EXPECT_EQ("spin_beta", rows[1]) << r.output;
    EXPECT_EQ("spin_outer", rows[2]) << r.output;
  }

  TempDir tmp_;
  std::string bin_, hex_, data_, debug_dir_;
};

TEST_F(ReportTest, StrippedBinaryWithoutDebugFileHasNoNames) {
  CommandResult r = Report("--no-debuginfod");
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_EQ(std::string::npos, r.output.find("spin_alpha")) << r.output;
  EXPECT_GT(UserCoverage(r.output), 90.0) << r.output;
}

TEST_F(ReportTest, DebugDirNamesFunctions) {
  CommandResult r =
      Report("--stdio --sort dso,sym --no-debuginfod --debug-dir " + Quote(debug_dir_));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
  EXPECT_NE(std::string::npos, r.output.find("debug-dir 1")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("(mismatch, not used): 0")) << r.output;
  EXPECT_GT(UserCoverage(r.output), 90.0) << r.output;
}

TEST_F(ReportTest, DebuginfodServerNamesFunctions) {
  if (RunCommand("command -v debuginfod").exit_code != 0)
    GTEST_SKIP() << "no debuginfod";
  std::string served = tmp_.path() + "/served";
  ASSERT_TRUE(MakeDirs(served));
  ASSERT_TRUE(CopyFile(FixturePath("workload.debug"), served + "/workload.debug", false));
  DebuginfodServer server;
  ASSERT_EQ("", server.Start(served, tmp_.path(), 1));
  setenv("DEBUGINFOD_CACHE_PATH", (tmp_.path() + "/client-cache").c_str(), 1);
  CommandResult r = Report("--debuginfod " + Quote(server.url()));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
  EXPECT_NE(std::string::npos, r.output.find("debuginfod 1,")) << r.output;

  // The same server from DEBUGINFOD_URLS, as debuginfod clients are usually configured...
  setenv("DEBUGINFOD_CACHE_PATH", (tmp_.path() + "/client-cache-2").c_str(), 1);
  std::string urls = "DEBUGINFOD_URLS=" + Quote(server.url()) + " ";
  CommandResult env = Report("", urls);
  ASSERT_EQ(0, env.exit_code) << env.output;
  ExpectNamedInOrder(env);
  // ...and --no-debuginfod wins over it.
  setenv("DEBUGINFOD_CACHE_PATH", (tmp_.path() + "/client-cache-3").c_str(), 1);
  CommandResult off = Report("--no-debuginfod", urls);
  ASSERT_EQ(0, off.exit_code) << off.output;
  EXPECT_EQ(std::string::npos, off.output.find("spin_alpha")) << off.output;
  EXPECT_NE(std::string::npos, off.output.find("debuginfod queries: 0")) << off.output;
}

TEST_F(ReportTest, ReplacedBinaryIsAMismatchAndNamesNothingWrong) {
  ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.full"), bin_, true));
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_));
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_EQ(std::string::npos, r.output.find("decoy")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("(mismatch, not used): 1")) << r.output;
  // Only the debug file is known: without the executable offsets are not guessed.
  EXPECT_EQ(std::string::npos, r.output.find("spin_alpha")) << r.output;
}

TEST_F(ReportTest, ReplacedBinaryWithExecutableInDebugDirIsStillNamed) {
  ASSERT_FALSE(InstallInBuildIdDir(debug_dir_, hex_, FixturePath("workload.stripped"), "").empty());
  ASSERT_TRUE(CopyFile(FixturePath("workload_decoy.full"), bin_, true));
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
  EXPECT_EQ(std::string::npos, r.output.find("decoy")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("(mismatch, not used): 1")) << r.output;
}

TEST_F(ReportTest, DefaultModePerfFileUsesTheBuildIdTable) {
  // perf record without --buildid-mmap: MMAP2 records carry dev/ino, the IDs are only in the
  // HEADER_BUILD_ID table perf writes at the end of the run. -N: not into ~/.debug, which
  // other tests' perf may be writing at the same time (perf 6.1 then can abort).
  CommandResult rec = PerfRecord("-N -e cpu-clock -F 999 -o " + Quote(data_) + " -- " +
                                 Quote(bin_) + " " + kIterations);
  ASSERT_EQ(0, rec.exit_code) << rec.output;
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m, std::regex(R"(file fallback \(ID table\)\s+([0-9]+))")))
      << r.output;
  EXPECT_GT(std::stol(m[1]), 0) << r.output;
}

TEST_F(ReportTest, PipeModeFromStdin) {
  // perf's messages (without -q: lost events, the bytes written) go to a file of their own, for
  // a failure to show beside the report's.
  std::string perf_err = tmp_.path() + "/perf-record.err";
  CommandResult r = RunCommand(
      "perf record --buildid-mmap -e cpu-clock -F 999 -o - -- " + Quote(bin_) + " " + kIterations +
          " 2>" + Quote(perf_err) + " | " + kReport + " -i - --no-debuginfod " + "--debug-root " +
          Quote(tmp_.path() + "/empty-root") + " --debug-dir " + Quote(debug_dir_),
      120);
  SCOPED_TRACE("perf record's stderr: " + ReadFile(perf_err));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
}

TEST_F(ReportTest, PprofOutputReadByGoTool) {
  if (RunCommand("command -v go").exit_code != 0)
    GTEST_SKIP() << "go (golang-go) not installed";
  std::string pb = tmp_.path() + "/profile.pb.gz";
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_) +
                           " --format pprof -o " + Quote(pb));
  ASSERT_EQ(0, r.exit_code) << r.output;
  std::string env = "HOME=" + Quote(tmp_.path()) + " GOCACHE=" + Quote(tmp_.path() + "/gocache") +
                    " GOFLAGS= GOPROXY=off PPROF_BINARY_PATH=" + Quote(tmp_.path() + "/none") + " ";
  CommandResult top = RunCommand(
      env + "go tool pprof -symbolize=none -top -sample_index=samples " + Quote(pb), 120);
  ASSERT_EQ(0, top.exit_code) << top.output;
  size_t a = top.output.find("spin_alpha"), b = top.output.find("spin_beta");
  ASSERT_NE(std::string::npos, a) << top.output;
  ASSERT_NE(std::string::npos, b) << top.output;
  EXPECT_LT(a, b) << top.output;
  CommandResult raw = RunCommand(env + "go tool pprof -symbolize=none -raw " + Quote(pb), 120);
  ASSERT_EQ(0, raw.exit_code) << raw.output;
  EXPECT_NE(std::string::npos, raw.output.find(hex_)) << raw.output;
  EXPECT_NE(std::string::npos, raw.output.find("cpu/nanoseconds")) << raw.output;
}

// Files written by perf-buildid record itself. With --no-buildid-attr the recorder reads each
// new mapping's ID from /proc/PID/map_files and writes it after the MMAP2: the coverage must
// say "file fallback", never "kernel record".
class OwnRecorderReportTest : public ReportTest {
 protected:
  void Record(const std::string& flags) {
    CommandResult r =
        RunCommand(std::string(PerfBuildIdBinary()) + " record -q -F 999 " + flags + " -o " +
                       Quote(data_) + " -- " + Quote(bin_) + " " + kIterations,
                   120);
    ASSERT_EQ(0, r.exit_code) << r.output;
  }

  static long Row(const std::string& out, const std::string& name) {
    std::smatch m;
    std::regex re(name + R"(\s+([0-9]+)\s+[0-9.]+%)");
    return std::regex_search(out, m, re) ? std::stol(m[1]) : -1;
  }
};

TEST_F(OwnRecorderReportTest, FallbackPathIsCountedAsFileSource) {
  Record("--no-buildid-attr");
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_));
  ASSERT_EQ(0, r.exit_code) << r.output;
  ExpectNamedInOrder(r);
  EXPECT_EQ(0, Row(r.output, R"(kernel record \(MMAP2\))")) << r.output;
  EXPECT_GT(Row(r.output, R"(file fallback \(ID table\))"), 0) << r.output;
}

TEST_F(OwnRecorderReportTest, CallchainsReachMainInPprof) {
  if (RunCommand("command -v go").exit_code != 0)
    GTEST_SKIP() << "go (golang-go) not installed";
  Record("-g");
  std::string pb = tmp_.path() + "/profile.pb.gz";
  CommandResult r = Report("--no-debuginfod --debug-dir " + Quote(debug_dir_) +
                           " --format pprof -o " + Quote(pb));
  ASSERT_EQ(0, r.exit_code) << r.output;
  std::string env = "HOME=" + Quote(tmp_.path()) + " GOCACHE=" + Quote(tmp_.path() + "/gocache") +
                    " GOFLAGS= GOPROXY=off PPROF_BINARY_PATH=" + Quote(tmp_.path() + "/none") + " ";
  CommandResult traces =
      RunCommand(env + "go tool pprof -symbolize=none -traces " + Quote(pb), 120);
  ASSERT_EQ(0, traces.exit_code) << traces.output;
  // A stack whose leaf is spin_alpha continues with its caller, main (frame pointers).
  std::regex stack(R"(spin_alpha\s*\n\s+main\b)");
  EXPECT_TRUE(std::regex_search(traces.output, stack)) << traces.output.substr(0, 4000);
}

// Kernel samples recorded on another kernel: host kallsyms must not be used, and the vmlinux
// with the recorded kernel build ID names them once the KASLR offset is removed. The perf.data
// is built with the pbid writer: a kernel MMAP2 at _text + offset, then kernel-mode samples.
class KernelByBuildIdTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kKaslr = 0x2e00000;

  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    vmlinux_ = FixturePath("fake_vmlinux");
    hex_ = ReadelfBuildId(vmlinux_);
    ASSERT_EQ(40u, hex_.size());
    // Symbol addresses from binutils nm, not from the code under test.
    CommandResult nm = RunCommand("nm " + Quote(vmlinux_));
    ASSERT_EQ(0, nm.exit_code) << nm.output;
    std::istringstream in(nm.output);
    std::string addr, type, name;
    while (in >> addr >> type >> name)
      syms_[name] = std::stoull(addr, nullptr, 16);
    ASSERT_EQ(1u, syms_.count("_text"));
    ASSERT_EQ(1u, syms_.count("kfunc_alpha"));
    ASSERT_EQ(1u, syms_.count("kfunc_beta"));
    data_ = tmp_.path() + "/perf.data";
    WriteData(data_,
              {{syms_["kfunc_alpha"] + kKaslr + 4, 30}, {syms_["kfunc_beta"] + kKaslr + 4, 10}});
  }

  // A recording of the kernel moved by kKaslr: its mapping, then `count` samples at each ip.
  void WriteData(const std::string& path, const std::vector<std::pair<uint64_t, int>>& samples) {
    perf_event_attr a{};
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.size = sizeof(a);
    a.sample_period = 1000000;
    a.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
    a.sample_id_all = 1;
    a.build_id = 1;
    EventAttr attr{a, {7}, "cpu-clock"};
    auto w = PerfDataWriter::Create(path, {attr});
    ASSERT_TRUE(w.ok()) << w.error().ToString();

    Mmap2Record km;
    km.pid = UINT32_MAX;  // -1: kernel
    km.start = syms_["_text"] + kKaslr;
    km.len = 0x1000000;
    km.pgoff = km.start;
    km.has_build_id = true;
    km.build_id = *BuildId::FromHex(hex_);
    km.filename = "[kernel.kallsyms]_text";
    km.sample_id.id = 7;
    km.sample_id.time = 1;
    ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(km, PERF_RECORD_MISC_KERNEL, &attr)).ok());
    uint64_t t = 2;
    for (const auto& [ip, n] : samples) {
      for (int i = 0; i < n; i++)
        ASSERT_TRUE((*w)->WriteRecord(KernelSample(ip, t++, attr)).ok());
    }
    Features f;
    f.osrelease = "0.0.0-not-this-kernel";
    ASSERT_TRUE((*w)->Finish(f).ok());
  }

  CommandResult Report(const std::string& args) {
    return RunCommand(kReport + " -i " + Quote(data_) + " --no-debuginfod --debug-root " +
                          Quote(tmp_.path() + "/none") + " " + args,
                      60);
  }

  TempDir tmp_;
  std::string vmlinux_, hex_, data_;
  std::map<std::string, uint64_t> syms_;
};

TEST_F(KernelByBuildIdTest, WithoutVmlinuxKernelSamplesAreOnlyKernel) {
  // /proc/kallsyms is readable here but belongs to another kernel: it must not be used.
  CommandResult r = Report("");
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("[k] [kernel]")) << r.output;
  EXPECT_EQ(std::string::npos, r.output.find("kfunc_")) << r.output;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(kernel samples\s+40\s)"))) << r.output;
}

TEST_F(KernelByBuildIdTest, VmlinuxFoundByBuildIdNamesKernelSamples) {
  std::string dir = tmp_.path() + "/debug";
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, vmlinux_, ".debug").empty());
  CommandResult r = Report("--debug-dir " + Quote(dir));
  ASSERT_EQ(0, r.exit_code) << r.output;
  size_t a = r.output.find("[k] kfunc_alpha"), b = r.output.find("[k] kfunc_beta");
  ASSERT_NE(std::string::npos, a) << r.output;
  ASSERT_NE(std::string::npos, b) << r.output;
  EXPECT_LT(a, b) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("75.00%")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("vmlinux with the recorded kernel build ID"))
      << r.output;
}

// Named after the replay, a kernel address in inlined code has the inlined frame and its
// function where stacks keep call chains, and the function alone where a stack is the
// sample's own entry, as naming it at once gave; two such addresses make one stack. The
// addresses come from binutils' addr2line, not from the code under test.
TEST_F(KernelByBuildIdTest, InlinedKernelFramesNamedAfterTheReplay) {
  std::string dir = tmp_.path() + "/debug";
  ASSERT_FALSE(InstallInBuildIdDir(dir, hex_, vmlinux_, ".debug").empty());
  CommandResult nm = RunCommand("nm -S " + Quote(vmlinux_));
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(nm.output, m, std::regex(R"(([0-9a-f]+) ([0-9a-f]+) T kfunc_gamma)")))
      << nm.output;
  const uint64_t start = std::stoull(m[1], nullptr, 16), size = std::stoull(m[2], nullptr, 16);
  std::string addrs;
  for (uint64_t a = start; a < start + size; a++) {
    char hex[24];
    snprintf(hex, sizeof(hex), " %" PRIx64, a);
    addrs += hex;
  }
  CommandResult lines = RunCommand("addr2line -a -i -f -e " + Quote(vmlinux_) + addrs);
  ASSERT_EQ(0, lines.exit_code) << lines.output;
  // Blocks of "0xADDR", then function and file lines, innermost first.
  std::vector<uint64_t> inlined;
  std::istringstream in(lines.output);
  std::string line, fn;
  uint64_t at = 0;
  bool first = false;
  while (std::getline(in, line)) {
    if (line.rfind("0x", 0) == 0) {
      at = std::stoull(line, nullptr, 16);
      first = true;
    } else if (first && line.find(':') == std::string::npos) {
      if (line == "kinline_step")
        inlined.push_back(at);
      first = false;
    }
  }
  ASSERT_GE(inlined.size(), 2u) << lines.output;
  std::string data = tmp_.path() + "/inlined.data";
  WriteData(data, {{inlined.front() + kKaslr, 3}, {inlined.back() + kKaslr, 2}});
  auto reader = PerfDataReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  struct Variant {
    bool callchains, keep;
  };
  for (Variant v : {Variant{true, true}, Variant{false, true}, Variant{false, false}}) {
    SCOPED_TRACE(std::string("callchains ") + (v.callchains ? "on" : "off") + ", pid and comm " +
                 (v.keep ? "kept" : "not kept"));
    ReportOptions o;
    o.symbolizer.build_id_root = tmp_.path() + "/none";
    o.symbolizer.debug_dirs = {dir};
    o.symbolizer.use_debuginfod = false;
    o.inline_frames = true;
    o.callchains = v.callchains;
    o.keep_pid = o.keep_comm = v.keep;
    auto rep = Report::Build(**reader, o);
    ASSERT_TRUE(rep.ok()) << rep.error().ToString();
    const Profile& p = (*rep)->profile();
    ASSERT_EQ(1u, p.events()[0].stacks.size());
    const ProfileStack& s = p.events()[0].stacks[0];
    EXPECT_EQ(5u, s.samples);
    EXPECT_EQ("kfunc_gamma", p.Name(p.Frame(s.self).symbol));
    std::vector<std::string> names;
    for (uint32_t i = 0; i < s.depth; i++)
      names.push_back(p.Name(p.Frame(p.StackFrames(s)[i]).symbol));
    const std::vector<std::string> want =
        v.callchains ? std::vector<std::string>{"kinline_step", "kfunc_gamma"}
                     : std::vector<std::string>{"kfunc_gamma"};
    EXPECT_EQ(want, names);
  }
}

// Recorded in an earlier boot of the running kernel: the same build ID, another KASLR offset.
// kallsyms (a file here, as --kallsyms takes it, laid out as the running boot's) must be moved
// by the difference of the two offsets, as perf moves it; a module loads elsewhere from boot to
// boot, so a module is named from kallsyms only where the running kernel has it as recorded
// (here it has none: kallsyms has a pbid_mod there, the running kernel does not). The file is
// made so that a table used wrongly gives wrong names: kfunc_wrong and wrong_mod_fn sit where
// the recorded addresses fall in the unmoved table, kfunc_gap_wrong where an address past the
// image's mapping falls in the moved one.
class KallsymsOtherBootTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kText = 0xffffffff81000000;         // _text in the running boot
  static constexpr uint64_t kRecordedText = kText + 0x1a00000;  // ... and in the recorded one
  static constexpr uint64_t kModule = 0xffffffffc0200000;       // [pbid_mod] in the recorded boot

  void SetUp() override {
    // The running kernel's build ID from perf, not from the code under test.
    CommandResult id = RunCommand("perf buildid-list -k 2>/dev/null");
    hex_ = id.output.substr(0, id.output.find_first_of(" \n"));
    if (id.exit_code != 0 || hex_.size() != 40)
      GTEST_SKIP() << "the running kernel's build ID is not readable";
    ASSERT_FALSE(tmp_.path().empty());
    kallsyms_ = tmp_.path() + "/kallsyms";
    std::ofstream(kallsyms_) << std::hex << kText << " T _text\n"
                             << kText + 0x100 << " T kfunc_alpha\n"
                             << kText + 0x200 << " T kfunc_beta\n"
                             << kRecordedText + 0x100 << " T kfunc_wrong\n"
                             << kText + 0x1000000 << " T kfunc_gap_wrong\n"
                             << kModule << " t wrong_mod_fn\t[pbid_mod]\n";

    perf_event_attr a{};
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.size = sizeof(a);
    a.sample_period = 1000000;
    a.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
    a.sample_id_all = 1;
    EventAttr attr{a, {7}, "cpu-clock"};
    data_ = tmp_.path() + "/perf.data";
    auto w = PerfDataWriter::Create(data_, {attr});
    ASSERT_TRUE(w.ok()) << w.error().ToString();
    uint64_t t = 1;
    auto map = [&](const char* name, uint64_t start, uint64_t len, uint64_t pgoff) {
      Mmap2Record m;
      m.pid = UINT32_MAX;  // -1: kernel
      m.start = start;
      m.len = len;
      m.pgoff = pgoff;
      m.filename = name;
      m.sample_id.id = 7;
      m.sample_id.time = t++;
      ASSERT_TRUE((*w)->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_KERNEL, &attr)).ok());
    };
    map("[kernel.kallsyms]_text", kRecordedText, 0x1000000, kRecordedText);
    map("[pbid_mod]", kModule, 0x10000, 0);
    // The module's samples first: nothing is known yet about where the image moved. Then an
    // address past the image's mapping (a module no record mapped), which the moved table
    // would give to kfunc_gap_wrong.
    for (const auto& [ip, n] : {std::pair<uint64_t, int>{kModule + 0x10, 5},
                                {kRecordedText + 0x104, 30},
                                {kRecordedText + 0x204, 10},
                                {kRecordedText + 0x1000100, 5}}) {
      for (int i = 0; i < n; i++)
        ASSERT_TRUE((*w)->WriteRecord(KernelSample(ip, t++, attr)).ok());
    }
    Features f;
    BuildIdEntry kernel;
    kernel.misc = PERF_RECORD_MISC_KERNEL;
    kernel.build_id = *BuildId::FromHex(recorded_hex());
    kernel.filename = "[kernel.kallsyms]";
    f.build_ids = std::vector<BuildIdEntry>{kernel};
    ASSERT_TRUE((*w)->Finish(f).ok());
  }

  // The kernel samples named after the moved table, the module's and the one past the
  // image's mapping unnamed; nothing after a table used wrongly.
  static void ExpectNamedAfterTheMovedTable(const CommandResult& r) {
    ASSERT_EQ(0, r.exit_code) << r.output;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(60\.00%.*\[k\] kfunc_alpha)")))
        << r.output;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(20\.00%.*\[k\] kfunc_beta)")))
        << r.output;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(20\.00%.*\[k\] \[kernel\])")))
        << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("wrong")) << r.output;
  }

  // The recorded kernel's build ID: the running kernel's, or another kernel's.
  std::string recorded_hex() const { return other_kernel_ ? std::string(40, 'a') : hex_; }

  TempDir tmp_;
  std::string hex_, kallsyms_, data_;
  bool other_kernel_ = false;
};

// The same recording, of another kernel than the running one.
class KallsymsKeptCopyTest : public KallsymsOtherBootTest {
 protected:
  KallsymsKeptCopyTest() { other_kernel_ = true; }
};

TEST_F(KallsymsOtherBootTest, KernelNamesMovedByTheKaslrOffsetsModulesNotNamed) {
  CommandResult r = RunCommand(kReport + " -i " + Quote(data_) + " --no-debuginfod --debug-root " +
                                   Quote(tmp_.path() + "/none") + " --kallsyms " +
                                   Quote(kallsyms_) + " --sort dso,sym",
                               60);
  ExpectNamedAfterTheMovedTable(r);
  EXPECT_NE(std::string::npos, r.output.find("recorded in another boot")) << r.output;
}

// perf's build-ID cache keeps a copy of kallsyms for each kernel it recorded, under the
// kernel's build ID (.build-id/xx/yyyy -> a directory holding kallsyms). For a recording of
// another kernel than the running one, report finds it through --debug-dir, as perf finds
// it: moved as above, and naming no module, whatever the KASLR offsets (a copy does not say
// which boot it was taken in). An unreadable copy is said, not taken for an empty one.
TEST_F(KallsymsKeptCopyTest, UsedForAnotherKernelNamingNoModule) {
  const std::string id = recorded_hex();
  const std::string cache = tmp_.path() + "/cache";
  const std::string dir = cache + "/[kernel.kallsyms]/" + id;
  ASSERT_EQ(
      0, RunCommand("mkdir -p " + Quote(dir) + " " + Quote(cache + "/.build-id/" + id.substr(0, 2)))
             .exit_code);
  ASSERT_EQ(0, symlink(("../../[kernel.kallsyms]/" + id).c_str(),
                       (cache + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2)).c_str()));
  ASSERT_EQ(0, rename(kallsyms_.c_str(), (dir + "/kallsyms").c_str()));
  const std::string cmd = kReport + " -i " + Quote(data_) + " --no-debuginfod --debug-root " +
                          Quote(tmp_.path() + "/none") + " --debug-dir " + Quote(cache) +
                          " --sort dso,sym";
  CommandResult r = RunCommand(cmd, 60);
  ExpectNamedAfterTheMovedTable(r);
  EXPECT_NE(std::string::npos, r.output.find("kallsyms kept for the recorded kernel build ID"))
      << r.output;

  // Taken in the recording's boot (no KASLR difference): the address past the image's
  // mapping, which the copy gives to a module, stays unnamed all the same.
  std::ofstream(dir + "/kallsyms") << std::hex << kRecordedText << " T _text\n"
                                   << kRecordedText + 0x100 << " T kfunc_alpha\n"
                                   << kRecordedText + 0x200 << " T kfunc_beta\n"
                                   << kRecordedText + 0x1000000 << " t copy_mod_fn\t[copy_mod]\n";
  r = RunCommand(cmd, 60);
  ExpectNamedAfterTheMovedTable(r);
  EXPECT_EQ(std::string::npos, r.output.find("copy_mod_fn")) << r.output;

  std::ofstream(dir + "/kallsyms") << "not kallsyms\n";
  r = RunCommand(cmd, 60);
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_EQ(std::string::npos, r.output.find("kfunc_alpha")) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(id.substr(2) + R"(/kallsyms unreadable \(.*malformed kallsyms line)")))
      << r.output;
}

// The running kernel's kallsyms comes first, as in perf: a copy kept under its build ID is not
// read (here, one that would name every sample wrongly).
TEST_F(KallsymsOtherBootTest, RunningKernelsBeforeAKeptCopy) {
  const std::string dir =
      tmp_.path() + "/cache/.build-id/" + hex_.substr(0, 2) + "/" + hex_.substr(2);
  ASSERT_EQ(0, RunCommand("mkdir -p " + Quote(dir)).exit_code);
  std::ofstream(dir + "/kallsyms") << std::hex << kRecordedText << " T _text\n"
                                   << kRecordedText + 0x100 << " T kept_wrong\n";
  CommandResult r = RunCommand(kReport + " -i " + Quote(data_) + " --no-debuginfod --debug-root " +
                                   Quote(tmp_.path() + "/none") + " --debug-dir " +
                                   Quote(tmp_.path() + "/cache") + " --sort dso,sym",
                               60);
  ASSERT_EQ(0, r.exit_code) << r.output;
  EXPECT_EQ(std::string::npos, r.output.find("kept_wrong")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("kallsyms of the running kernel")) << r.output;
}

// A perf.data file with one cpu-clock event and no samples. One record: a data section of
// size 0 is what a killed recorder leaves, and is refused.
void WriteWithoutSamples(const std::string& path) {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  a.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  a.ids = {1};
  auto w = PerfDataWriter::Create(path, {a});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_TRUE((*w)->WriteRecord(BuildEmptyRecord(kRecordFinishedRound)).ok());
  ASSERT_TRUE((*w)->Finish(Features()).ok());
}

TEST(ReportErrorsTest, BadInputAndUsage) {
  TempDir tmp;
  const std::string& tool = kReport;
  // The exit codes of every perf-buildid command (cli/cli.h): 1 failure, 2 usage, 3 input.
  CommandResult r = RunCommand(tool + " -i " + Quote(tmp.path() + "/missing.data"));
  EXPECT_EQ(3, r.exit_code) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("missing.data")) << r.output;

  std::string junk = tmp.path() + "/junk.data";
  std::ofstream(junk) << "PERFILE2 this is not a perf.data file";
  r = RunCommand(tool + " -i " + Quote(junk));
  EXPECT_EQ(3, r.exit_code) << r.output;
  EXPECT_EQ(1, std::count(r.output.begin(), r.output.end(), '\n'))
      << "one-line error: " << r.output;

  EXPECT_EQ(2, RunCommand(tool + " --sort dso,bogus").exit_code);
  EXPECT_EQ(2, RunCommand(tool + " --format pprof").exit_code);
  EXPECT_EQ(2, RunCommand(tool + " --debuginfod http://x --no-debuginfod").exit_code);
  EXPECT_EQ(2, RunCommand(tool + " --no-such-option").exit_code);

  std::string empty = tmp.path() + "/empty.data";
  ASSERT_NO_FATAL_FAILURE(WriteWithoutSamples(empty));
  r = RunCommand(tool + " --no-debuginfod --debug-root '' -i " + Quote(empty) +
                 " --format pprof -o " + Quote(tmp.path() + "/no/such/dir/out.pb.gz"));
  EXPECT_EQ(1, r.exit_code) << "unwritable output: " << r.output;
  r = RunCommand(tool + " --help");
  EXPECT_EQ(0, r.exit_code);
  EXPECT_NE(std::string::npos, r.output.find("EXIT STATUS")) << r.output;
}

// Record opens an event by name and report names it back by (type, config): each must
// find the one entry it came from, or a recording would be reported as another event.
TEST(KnownEventsTest, NameAndTypeConfigFindTheSameEvent) {
  for (const KnownEvent& e : kKnownEvents) {
    EXPECT_EQ(&e, FindEvent(e.name)) << e.name;
    EXPECT_EQ(&e, FindEvent(e.type, e.config)) << e.name;
  }
  EXPECT_EQ(nullptr, FindEvent("cpu"));
}

}  // namespace
}  // namespace pbid
