// SPDX-License-Identifier: GPL-2.0
//
// The perf-buildid commands run as a child process on perf.data files written by the library:
// exit codes and crashes are only visible from outside.
#include <elfutils/debuginfod.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"

namespace pbid {
namespace {

using namespace clitest;  // NOLINT: test helpers

// The session drops a mapping of length 0 or one whose end wraps; script must still print the
// record when no mapping has been kept at all.
TEST(CliTest, ScriptSurvivesDroppedFirstMapping) {
  EventAttr a = Attr({1});
  for (uint64_t len : {uint64_t{0}, ~uint64_t{0}}) {
    std::vector<RecordBytes> recs = {
        *BuildMmap2(Mapping(0x400000, len, 1), PERF_RECORD_MISC_USER, &a)};
    std::string path = WriteData("dropped.data", a, recs);
    ToolRun r = RunTool("script -i " + path);
    EXPECT_EQ(0, r.status) << "len " << len << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("PERF_RECORD_MMAP2")) << r.output;
    unlink(path.c_str());
  }
}

// Compressed records a header does not announce: one clear line and exit 3, not an empty list
// and exit 0.
TEST(CliTest, BuildidListRejectsUnannouncedCompressedRecords) {
  EventAttr a = Attr({1});
  std::string path = WriteData("compressed.data", a, {CompressedRecord()});
  ToolRun r = RunTool("buildid-list -i " + path);
  unlink(path.c_str());
  EXPECT_EQ(3, r.status) << r.output;
  EXPECT_NE(std::string::npos,
            r.output.find("compressed record in a file whose header has no HEADER_COMPRESSED"))
      << r.output;
  EXPECT_EQ(1, std::count(r.output.begin(), r.output.end(), '\n')) << r.output;
}

// A report file whose one sample is in a mapping with a build ID nothing local has: with a
// server configured, report asks it.
std::string WriteNoDebugInfoFile(const char* name) {
  EventAttr a = Attr({1});
  return WriteData(
      name, a,
      {*BuildMmap2(Mapping(0x400000, 0x1000, 1), PERF_RECORD_MISC_USER, &a),
       *BuildSample(fixtures::Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, 2), {}, a)});
}

// libdebuginfod brings libcurl and what that links, which cost every run (architecture.md):
// report loads it only when a server is configured.
TEST(CliTest, ReportLoadsLibdebuginfodOnlyForAServer) {
  std::string path = WriteNoDebugInfoFile("no-debuginfod.data");
  testing::TempDir cache;
  ASSERT_FALSE(cache.path().empty());
  const std::string report = "report --stdio -i " + testing::Quote(path);
  // ld.so names each library it loads, dlopen'ed ones too.
  ToolRun without = RunToolIn("env -u DEBUGINFOD_URLS LD_DEBUG=files", report, " >/dev/null");
  ToolRun with = RunToolIn(
      "env DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_TIMEOUT=1 DEBUGINFOD_CACHE_PATH=" +
          testing::Quote(cache.path()) + " LD_DEBUG=files",
      report, " >/dev/null");
  unlink(path.c_str());
  EXPECT_EQ(0, without.status) << without.output;
  EXPECT_NE(std::string::npos, without.output.find("file=libdw.so")) << without.output;
  if (!testing::kLibdwLoadsLibdebuginfod) {
    EXPECT_EQ(std::string::npos, without.output.find("file=" DEBUGINFOD_SONAME)) << without.output;
  }
  EXPECT_EQ(0, with.status) << with.output;
  EXPECT_NE(std::string::npos, with.output.find("file=" DEBUGINFOD_SONAME)) << with.output;
}

// With a server to ask and no libdebuginfod that loads, report cannot do what it was told:
// it stops with exit status 1, as when the library cannot begin a client, and names the package.
TEST(CliTest, ReportWithAServerAndNoLibdebuginfodFails) {
  std::string path = WriteNoDebugInfoFile("no-libdebuginfod.data");
  // An empty file of that name first in the search path: ld.so stops at it ("file too short").
  testing::TempDir lib;
  ASSERT_FALSE(lib.path().empty());
  FILE* empty = fopen((lib.path() + "/" DEBUGINFOD_SONAME).c_str(), "w");
  ASSERT_NE(nullptr, empty);
  fclose(empty);
  ToolRun r = RunToolIn(
      "env DEBUGINFOD_URLS=http://127.0.0.1:9 LD_LIBRARY_PATH=" + testing::Quote(lib.path()),
      "report --stdio -i " + testing::Quote(path), " >/dev/null");
  unlink(path.c_str());
  EXPECT_EQ(1, r.status) << r.output;
  EXPECT_NE(std::string::npos, r.output.find(DEBUGINFOD_SONAME ": file too short")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("install libdebuginfod1")) << r.output;
}

// The pprof writer only serializes: protobuf's lite runtime, not the full one with its
// descriptors and reflection, which every run would load (architecture.md).
TEST(CliTest, EveryRunLoadsProtobufLiteOnly) {
  ToolRun c = RunToolIn("LD_DEBUG=files", "--version");
  EXPECT_EQ(0, c.status) << c.output;
  EXPECT_NE(std::string::npos, c.output.find("file=libprotobuf-lite.so")) << c.output;
  EXPECT_EQ(std::string::npos, c.output.find("file=libprotobuf.so")) << c.output;
}

// libarchive and its libraries (libxml2, ICU...) cost every run about 4 ms and 2 MB: only a
// tarball loads it (archive.cpp), and without it archive -o FILE.tar stops before copying
// anything, naming the package.
TEST(CliTest, OnlyATarballLoadsLibarchive) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string data = testing::Quote(dir.path() + "/rec.data");
  ToolRun rec = RunTool("record -o " + data + " -- /bin/true", " >/dev/null");
  ASSERT_EQ(0, rec.status) << rec.output;
  ToolRun list = RunToolIn("LD_DEBUG=files", "buildid-list -i " + data, " >/dev/null");
  EXPECT_EQ(0, list.status) << list.output;
  EXPECT_NE(std::string::npos, list.output.find("file=libdw.so")) << list.output;
  EXPECT_EQ(std::string::npos, list.output.find("file=libarchive.so")) << list.output;

  const std::string tar = dir.path() + "/rec.tar";
  ToolRun archived =
      RunToolIn("LD_DEBUG=files",
                "archive --no-debuginfod -i " + data + " -o " + testing::Quote(tar), " >/dev/null");
  EXPECT_EQ(0, archived.status) << archived.output;
  EXPECT_NE(std::string::npos, archived.output.find("file=libarchive.so.13")) << archived.output;
  EXPECT_EQ(0, access(tar.c_str(), F_OK));

  // An empty file of that name first in the search path: ld.so stops at it.
  testing::TempDir lib;
  ASSERT_FALSE(lib.path().empty());
  FILE* empty = fopen((lib.path() + "/libarchive.so.13").c_str(), "w");
  ASSERT_NE(nullptr, empty);
  fclose(empty);
  const std::string tar2 = dir.path() + "/rec2.tar";
  ToolRun refused = RunToolIn("LD_LIBRARY_PATH=" + testing::Quote(lib.path()),
                              "archive --no-debuginfod -i " + data + " -o " + testing::Quote(tar2),
                              " >/dev/null");
  EXPECT_EQ(1, refused.status) << refused.output;
  EXPECT_NE(std::string::npos, refused.output.find("install libarchive13")) << refused.output;
  EXPECT_NE(0, access(tar2.c_str(), F_OK));
}

// Interrupted while its command ignores SIGTERM, record must write the complete file first and
// then reap the command within a bounded time (SIGKILL), not block in waitpid before writing.
TEST(CliTest, RecordWritesFileBeforeReapingStubbornCommand) {
  std::string path = TempPath("stubborn.data");
  // The command says when it ignores SIGTERM: before that, a loaded machine could still see
  // it die of the SIGTERM that record sends, and blame record for it.
  std::string armed = TempPath("stubborn.armed");
  std::string script = "trap '' TERM; : >" + testing::Quote(armed) +
                       "; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
  pid_t rec = fork();
  ASSERT_GE(rec, 0);
  if (rec == 0) {
    execl(testing::PerfBuildIdBinary(), testing::PerfBuildIdBinary(), "record", "-q", "-o",
          path.c_str(), "--", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto wait_rec = [&](int ms, int* status) {
    for (int t = 0; t < ms; t += 20) {
      if (waitpid(rec, status, WNOHANG) == rec)
        return true;
      usleep(20 * 1000);
    }
    return false;
  };
  // Ready once FILE exists (record publishes it when the command runs, long after its signal
  // handlers are in place) and the command ignores SIGTERM. A fixed sleep lost that race on a
  // loaded machine.
  int status = 0;
  bool ready = false;
  for (int t = 0; t < 30000 && !ready; t += 20) {
    if (waitpid(rec, &status, WNOHANG) == rec) {
      unlink(path.c_str());
      GTEST_SKIP() << "record exited early (status " << status << "): no perf events here?";
    }
    ready = access(path.c_str(), F_OK) == 0 && access(armed.c_str(), F_OK) == 0;
    if (!ready)
      usleep(20 * 1000);
  }
  ASSERT_TRUE(ready) << "record did not start its command within 30 s";
  // The command ignores SIGTERM and lives 10 s; record must finish the file first and only
  // then stop it (SIGKILL 2 s after SIGTERM). So the file is complete while the command is
  // still there, whatever the machine's load.
  std::string cmd_pid =
      ReadAll("/proc/" + std::to_string(rec) + "/task/" + std::to_string(rec) + "/children");
  ASSERT_FALSE(cmd_pid.empty());
  std::string cmd_proc = "/proc/" + cmd_pid.substr(0, cmd_pid.find(' '));
  kill(rec, SIGINT);
  bool complete = false, command_alive = false;
  for (int t = 0; t < 30000 && !complete; t += 20) {
    bool alive = access(cmd_proc.c_str(), F_OK) == 0;
    auto r = PerfDataReader::Open(path);
    complete = r.ok() && (*r)->features().cmdline.has_value();
    command_alive = alive;
    if (!complete)
      usleep(20 * 1000);
  }
  EXPECT_TRUE(complete) << "no complete file 30 s after SIGINT";
  EXPECT_TRUE(command_alive) << "the file was completed only after the command was reaped";
  bool exited = wait_rec(10000, &status);
  if (!exited) {
    kill(rec, SIGKILL);
    waitpid(rec, &status, 0);
  }
  EXPECT_TRUE(exited) << "record did not reap its command within 10 s";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  unlink(path.c_str());
  unlink(armed.c_str());
}

// A mapped file whose build id cannot be read (a truncated ELF) is counted as unreadable in
// the summary, not as a mapping without a build id.
TEST(CliTest, RecordCountsUnreadableMappingsApart) {
  if (system("command -v python3 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 not installed";
  std::string elf = TempPath("truncated.so"), data = TempPath("unreadable.data");
  {
    // The first 200 bytes of an ELF with a build id: its program headers run past the end.
    FILE* in = fopen("/proc/self/exe", "rb");
    ASSERT_NE(nullptr, in);
    char head[200];
    ASSERT_EQ(sizeof(head), fread(head, 1, sizeof(head), in));
    fclose(in);
    FILE* out = fopen(elf.c_str(), "wb");
    ASSERT_NE(nullptr, out);
    ASSERT_EQ(sizeof(head), fwrite(head, 1, sizeof(head), out));
    fclose(out);
  }
  std::string py = "import mmap; f = open('" + elf +
                   "', 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC); "
                   "import time; time.sleep(0.1)";
  ToolRun r = RunTool("record -o " + data + " -- python3 -c \"" + py + "\"");
  unlink(elf.c_str());
  unlink(data.c_str());
  if (r.status == 1 && r.output.find("mappings with a build id") == std::string::npos)
    GTEST_SKIP() << "record cannot run here: " << r.output;
  ASSERT_EQ(0, r.status) << r.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m, std::regex(R"(; [0-9]+ without, ([0-9]+) unreadable)")))
      << r.output;
  EXPECT_GE(std::stoi(m[1]), 1) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("truncated.so")) << r.output;
}

}  // namespace
}  // namespace pbid
