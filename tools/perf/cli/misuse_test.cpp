// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid under hostile input and misuse: crafted perf.data files, recorded paths that are
// not regular files, outputs that cannot be written and numbers out of range. Each case runs
// the real binary; exit status and messages are only visible from outside.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"

namespace pbid {
namespace {

using namespace clitest;  // NOLINT: test helpers

using fixtures::kBuildIdHex;

SampleRecord Sample(uint64_t ip, uint32_t pid, uint64_t id) {
  return fixtures::Sample(PERF_RECORD_MISC_USER, ip, static_cast<int32_t>(pid), id, 0);
}

// A recorded path is input like any other: a FIFO there must not block report forever (open
// without O_NONBLOCK waits for a writer that never comes).
TEST(MisuseTest, ReportDoesNotBlockOnRecordedFifo) {
  std::string fifo = TempPath("recorded.fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600)) << strerror(errno);
  EventAttr a = Attr({1});
  Mmap2Record m = Mapping(0x400000, 0x1000, 1);
  m.filename = fifo;
  std::string path = WriteData(
      "fifo.data", a,
      {*BuildMmap2(m, PERF_RECORD_MISC_USER, &a), *BuildSample(Sample(0x400100, 10, 1), {}, a)});
  ToolRun r = RunTool("report --no-debuginfod --debug-root '' -i " + path, "", 20);
  // Given as the input itself, a FIFO is refused at once too.
  ToolRun in = RunTool("maps -i " + fifo, "", 20);
  unlink(fifo.c_str());
  unlink(path.c_str());
  EXPECT_EQ(0, r.status) << "124 means report hung on the FIFO: " << r.output;
  EXPECT_EQ(3, in.status) << "124 means maps hung on the FIFO: " << in.output;
  EXPECT_NE(std::string::npos, in.output.find("not a regular file")) << in.output;
}

constexpr char kEarlierRecording[] = "an earlier recording";

// A file where record is told to write, as an earlier recording leaves it.
std::string EarlierRecording(const char* name) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << kEarlierRecording;
  return path;
}

// An existing output file is what an earlier recording left: a command that cannot even start
// must not destroy it (it used to be truncated at open and unlinked on failure).
TEST(MisuseTest, RecordKeepsExistingFileWhenCommandCannotRun) {
  std::string out = EarlierRecording("keep.data");
  ToolRun r = RunTool("record -q -o " + out + " -- /nonexistent/cmd");
  EXPECT_EQ(1, r.status) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("/nonexistent/cmd")) << r.output;
  EXPECT_EQ(kEarlierRecording, ReadAll(out));
  struct stat st;
  EXPECT_NE(0, stat((out + ".old").c_str(), &st)) << "nothing was recorded, nothing to back up";
  unlink(out.c_str());
}

// As perf: a new recording moves the previous file to FILE.old.
TEST(MisuseTest, RecordMovesPreviousFileToOld) {
  std::string out = EarlierRecording("prev.data");
  ToolRun r = RunTool("record -q -o " + out + " -- true");
  ASSERT_EQ(0, r.status) << r.output;
  EXPECT_EQ(kEarlierRecording, ReadAll(out + ".old"));
  auto reader = PerfDataReader::Open(out);
  EXPECT_TRUE(reader.ok()) << reader.error().ToString();
  unlink(out.c_str());
  unlink((out + ".old").c_str());
}

// The recording FILE.old held goes when a third one is made, but only once the recording has
// ended: freeing it while the command starts stalls the first drain. The command sees it still
// held by the recorder (its parent), under its old name and deleted.
TEST(MisuseTest, RecordFreesTheOldestRecordingAfterTheRecording) {
  std::string out = EarlierRecording("third.data");
  std::string older = out + ".old";
  std::ofstream(older, std::ios::binary) << "the recording before that";
  // By its file name: /proc shows the path normalized (TempPath's may hold "//").
  std::string name = older.substr(older.rfind('/') + 1);
  std::string held = "ls -l /proc/$PPID/fd | grep -qF " + testing::Quote("/" + name + " (deleted)");
  ToolRun r = RunTool(
      "record -q -o " + out + " -- sh -c " +
      testing::Quote("for i in $(seq 100); do " + held + " && exit 0; sleep 0.02; done; exit 1"));
  EXPECT_EQ(0, r.status) << "the oldest recording was not held while the command ran\n" << r.output;
  EXPECT_EQ(kEarlierRecording, ReadAll(older));
  EXPECT_TRUE(PerfDataReader::Open(out).ok());
  unlink(out.c_str());
  unlink(older.c_str());
}

// The build-id table names each (file, id) once, however often the file is mapped.
TEST(MisuseTest, RecordTableNamesEachFileOnce) {
  std::string out = TempPath("once.data");
  ToolRun r = RunTool("record -q -o " + out + " -- sh -c '/bin/true; /bin/true; /bin/true'");
  ASSERT_EQ(0, r.status) << r.output;
  auto reader = PerfDataReader::Open(out);
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  ASSERT_TRUE((*reader)->features().build_ids.has_value());
  std::set<std::pair<std::string, std::string>> seen;
  for (const BuildIdEntry& e : *(*reader)->features().build_ids)
    EXPECT_TRUE(seen.emplace(e.filename, e.build_id.ToHex()).second) << e.filename;
  EXPECT_FALSE(seen.empty());
  unlink(out.c_str());
}

// Every number on the command line is parsed strictly, in its range: a usage error (exit 2),
// never a silently different value (negative -F, a pid cast to 32 bits, an overflowing -m).
TEST(MisuseTest, NumbersOutOfRangeAreUsageErrors) {
  std::string out = TempPath("numbers.data");
  const char* const kRecordArgs[] = {"-F -5",
                                     "-F 0",
                                     "-F ''",
                                     "-F 1x",
                                     "-F ' 5'",
                                     "-F 99999999999999999999",
                                     "-c -1",
                                     "-c 0",
                                     "-c 9223372036854775808",
                                     "-p 4294967297",
                                     "-p -1",
                                     "-p ''",
                                     "-m 0",
                                     "-m 3",
                                     "-m -4",
                                     "-m 4611686018427387904"};
  for (const char* args : kRecordArgs) {
    bool pid = strncmp(args, "-p", 2) == 0;
    ToolRun r = RunTool("record -q -o " + out + " " + args + (pid ? "" : " -- true"), "", 10);
    EXPECT_EQ(2, r.status) << "record " << args << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("Try 'perf-buildid record --help'"))
        << "record " << args << ": " << r.output;
  }
  for (const char* args : {"-p ''", "-p 99999999999999999999", "-p 1x", "-p 4294967297"}) {
    ToolRun r = RunTool(std::string("maps -i /nonexistent ") + args);
    EXPECT_EQ(2, r.status) << "maps " << args << ": " << r.output;
  }
  unlink(out.c_str());
}

// --bpf takes auto, on or off; anything else is a usage error, not a silent default.
TEST(MisuseTest, BpfWhenIsAutoOnOrOff) {
  std::string out = TempPath("bpf-when.data");
  for (const char* when : {"--bpf=sometimes", "--bpf=", "--bpf=ON"}) {
    ToolRun r = RunTool(std::string("record -q -o ") + out + " " + when + " -- true", "", 10);
    EXPECT_EQ(2, r.status) << when << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("expected auto, on or off")) << r.output;
  }
  unlink(out.c_str());
}

// Output redirected to a full device: exit 1 with a message, as perf, not 0 with nothing
// written.
TEST(MisuseTest, WriteErrorOnStdoutFails) {
  EventAttr a = Attr({1});
  std::string path =
      WriteData("full.data", a,
                {*BuildMmap2(Mapping(0x400000, 0x1000, 1), PERF_RECORD_MISC_USER, &a),
                 *BuildSample(Sample(0x400100, 10, 1), {}, a)});
  for (const char* cmd : {"maps", "script", "dump", "buildid-list", "report --no-debuginfod"}) {
    ToolRun r = RunTool(std::string(cmd) + " -i " + path, " >/dev/full");
    EXPECT_EQ(1, r.status) << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("No space left on device"))
        << cmd << ": " << r.output;
    EXPECT_EQ(1u, Lines(r.output)) << cmd << ": " << r.output;
  }
  unlink(path.c_str());
}

// The exit status follows the error's kind and what the command was doing (ExitCodeFor): a
// failed read() of the input is an I/O error, yet the input cannot be read, so 3 (not the 1
// of a failed write to stdout above), and "-i -" is named once, as stdin.
TEST(MisuseTest, UnreadableInputIsBadInput) {
  testing::TempDir dir;  // stdin a directory: open(2) works, read(2) fails with EISDIR
  for (const char* cmd : {"maps", "script", "dump", "buildid-list", "report --no-debuginfod"}) {
    ToolRun r = RunTool(std::string(cmd) + " -i - < " + testing::Quote(dir.path()));
    EXPECT_EQ(3, r.status) << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find(": stdin: read failed: Is a directory"))
        << cmd << ": " << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("-: stdin")) << cmd << ": " << r.output;
    EXPECT_EQ(1u, Lines(r.output)) << cmd << ": " << r.output;
  }
}

// What perf writes but perf-buildid does not read (PERFFILE version 1) is an unsupported input,
// and compressed records a header does not announce a corrupt one: 3 from every command.
TEST(MisuseTest, UnsupportedInputIsBadInput) {
  EventAttr a = Attr({1});
  std::string compressed = WriteData("unsupported-z.data", a, {CompressedRecord()});
  std::string v1 =
      WriteData("unsupported-v1.data", a, {*BuildSample(Sample(0x400100, 10, 1), {}, a)});
  uint64_t magic_v1;
  memcpy(&magic_v1, "PERFFILE", 8);
  PatchU64(v1, 0, magic_v1);
  struct Case {
    std::string path, want;
  } cases[] = {{compressed, "compressed record in a file whose header has no HEADER_COMPRESSED"},
               {v1, "perf.data version 1 (PERFFILE) is not supported"}};
  for (const Case& c : cases) {
    for (const char* cmd : {"maps", "script", "dump", "buildid-list", "report --no-debuginfod"}) {
      ToolRun r = RunTool(std::string(cmd) + " -i " + c.path);
      EXPECT_EQ(3, r.status) << cmd << ": " << r.output;
      EXPECT_NE(std::string::npos, r.output.find(c.want)) << cmd << ": " << r.output;
      EXPECT_EQ(1u, Lines(r.output)) << cmd << ": " << r.output;
    }
    unlink(c.path.c_str());
  }
}

// record reads no input file: whatever fails, a system call (I/O) or an event this machine
// does not have (unsupported), the recording failed, exit 1, never the 3 of a bad input.
TEST(MisuseTest, RecordFailuresAreFailures) {
  std::string out = TempPath("failures.data");
  unlink(out.c_str());
  ToolRun r = RunTool("record -q -o " + out + " -p 2147483646");
  EXPECT_EQ(1, r.status) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("no such process")) << r.output;
  r = RunTool("record -q -o /nonexistent/dir/failures.data -- true");
  EXPECT_EQ(1, r.status) << r.output;
  // A machine with a hardware PMU records cycles; one without (most VMs) refuses the event
  // as unsupported, and that is the case this line is for.
  r = RunTool("record -q -o " + out + " -e cycles -- true");
  if (r.status != 0) {
    EXPECT_EQ(1, r.status) << r.output;
  } else {
    std::cerr << "cycles can be recorded here: no unsupported event to fail on\n";
  }
  unlink(out.c_str());
  unlink((out + ".old").c_str());
}

// An error names the input file once (report used to say "/x: /x: cannot open").
TEST(MisuseTest, ErrorsNameThePathOnce) {
  const std::string missing = "/nonexistent/pbid-missing.data";
  for (const char* cmd : {"maps", "script", "dump", "buildid-list", "report"}) {
    ToolRun r = RunTool(std::string(cmd) + " -i " + missing);
    EXPECT_EQ(3, r.status) << cmd << ": " << r.output;
    size_t first = r.output.find(missing);
    EXPECT_NE(std::string::npos, first) << cmd << ": " << r.output;
    EXPECT_EQ(std::string::npos, r.output.find(missing, first + 1)) << cmd << ": " << r.output;
    EXPECT_EQ(1u, Lines(r.output)) << cmd << ": " << r.output;
  }
}

// An unknown option is one error line and one hint, not getopt's line on top of ours.
TEST(MisuseTest, UnknownOptionIsTwoLines) {
  for (const char* cmd : {"record", "maps", "script", "dump", "buildid-list", "report"}) {
    ToolRun r = RunTool(std::string(cmd) + " --bogus-option");
    EXPECT_EQ(2, r.status) << cmd << ": " << r.output;
    EXPECT_EQ(2u, Lines(r.output)) << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("--bogus-option")) << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("--help")) << cmd << ": " << r.output;
  }
}

// A sample whose id no event owns cannot be decoded by any event's layout. It used to be
// dropped silently with exit 0; perf fails with "failed to process type". Now every such record
// is counted and the command fails, naming the count, the first id and its offset.
TEST(MisuseTest, RecordsOfNoKnownEventFail) {
  EventAttr a = Attr({1}), b = Attr({2});
  std::string path = WriteEvents(
      "unknown-id.data", {a, b},
      {*BuildMmap2(Mapping(0x400000, 0x1000, 1), PERF_RECORD_MISC_USER, &a),
       *BuildSample(Sample(0x400100, 10, 1), {}, a), *BuildSample(Sample(0x400100, 10, 7), {}, a),
       *BuildSample(Sample(0x400100, 10, 7), {}, a)});
  for (const char* cmd : {"maps", "script", "buildid-list -H", "report --no-debuginfod"}) {
    ToolRun r = RunTool(std::string(cmd) + " -i " + path);
    EXPECT_EQ(3, r.status) << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("2 records carry an event id"))
        << cmd << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find("id 7")) << cmd << ": " << r.output;
  }
  unlink(path.c_str());
}

// Files perf refuses: events that disagree on sample_id_all (the sample_id block of every
// non-sample record becomes ambiguous), a data section over the header, and a header saying
// 0 bytes of data, which is what a recorder killed before its first checkpoint leaves.
TEST(MisuseTest, FilesPerfRefusesAreRejected) {
  EventAttr a = Attr({1}), b = Attr({2});
  b.attr.sample_id_all = 0;
  std::vector<RecordBytes> recs = {*BuildSample(Sample(0x400100, 10, 1), {}, a)};
  std::string mismatch = WriteEvents("id-all.data", {a, b}, recs);
  std::string at_zero = WriteData("data-at-zero.data", a, recs);
  PatchU64(at_zero, 40, 0);  // header.data.offset
  std::string empty = WriteData("data-size-zero.data", a, recs);
  PatchU64(empty, 48, 0);  // header.data.size
  struct Case {
    std::string path, want;
  } cases[] = {{mismatch, "sample_id_all"},
               {at_zero, "overlaps the file header"},
               {empty, "was the recording terminated properly"}};
  for (const Case& c : cases) {
    ToolRun r = RunTool("maps -i " + c.path);
    EXPECT_EQ(3, r.status) << c.want << ": " << r.output;
    EXPECT_NE(std::string::npos, r.output.find(c.want)) << r.output;
    EXPECT_EQ(1u, Lines(r.output)) << r.output;
    unlink(c.path.c_str());
  }
}

// Records the tool writes itself (type 64 and up) carry no sample_id block: dump used to
// decode their last bytes as one and printed garbage timestamps.
TEST(MisuseTest, DumpPrintsNoTimeForUserRecords) {
  EventAttr a = Attr({1});
  // A name that fills the record's tail, where a sample_id block would be.
  std::string name = "/" + std::string(126, 'a');
  std::string path = WriteData(
      "user-records.data", a,
      {*BuildHeaderBuildId(-1, PERF_RECORD_MISC_USER, *BuildId::FromHex(kBuildIdHex), name),
       BuildEmptyRecord(kRecordFinishedRound)});
  ToolRun r = RunTool("dump --no-hex -i " + path);
  unlink(path.c_str());
  ASSERT_EQ(0, r.status) << r.output;
  std::istringstream in(r.output);
  std::string line;
  int user = 0;
  while (std::getline(in, line)) {
    if (line.find(": PERF_RECORD_HEADER_BUILD_ID") == std::string::npos &&
        line.find(": PERF_RECORD_FINISHED_ROUND") == std::string::npos)
      continue;
    user++;
    EXPECT_EQ(0u, line.rfind("0 0x", 0)) << line;
  }
  EXPECT_EQ(2, user) << r.output;
}

// "Total Lost Samples" is perf's count of PERF_RECORD_LOST_SAMPLES; events lost in the ring
// buffer (PERF_RECORD_LOST) are another count.
TEST(MisuseTest, ReportLostSamplesExcludeLostEvents) {
  EventAttr a = Attr({1});
  LostRecord l;
  l.id = 1;
  l.lost = 1455;
  l.sample_id.id = 1;
  std::string path =
      WriteData("lost.data", a, {BuildLost(l, &a), *BuildSample(Sample(0x400100, 10, 1), {}, a)});
  ToolRun r = RunTool("report --no-debuginfod --debug-root '' -i " + path);
  unlink(path.c_str());
  ASSERT_EQ(0, r.status) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("# Total Lost Samples: 0\n")) << r.output;
}

// record -o - streams pipe-mode perf.data to stdout, as perf record -o - does, instead of
// creating a file named "-".
TEST(MisuseTest, RecordToStdoutStreamsPipeMode) {
  std::string dir = TempPath("stdout-dir");
  ASSERT_EQ(0, system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()));
  std::string stream = dir + "/stream.data";
  ToolRun r = RunTool("record -q -o - -- true > " + stream + "; cd " + dir + " && ls");
  EXPECT_EQ(0, r.status) << r.output;
  EXPECT_EQ("stream.data\n", r.output) << "record created a file named '-'?";
  auto reader = PerfDataReader::Open(stream);
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  EXPECT_TRUE((*reader)->pipe_mode());
  EXPECT_GE(testing::Records(**reader).size(), 2u);
  ToolRun maps = RunTool("maps -i - < " + stream);
  EXPECT_EQ(0, maps.status) << maps.output;
  ASSERT_EQ(0, system(("rm -rf " + dir).c_str()));
}

// record returns the workload's exit status, as perf does, so that scripts see a failing
// command.
TEST(MisuseTest, RecordReturnsTheCommandsStatus) {
  std::string out = TempPath("status.data");
  ToolRun r = RunTool("record -q -o " + out + " -- sh -c 'exit 7'");
  EXPECT_EQ(7, r.status) << r.output;
  auto reader = PerfDataReader::Open(out);
  EXPECT_TRUE(reader.ok()) << "the recording is still written";
  r = RunTool("record -q -o " + out + " -- true");
  EXPECT_EQ(0, r.status) << r.output;
  unlink(out.c_str());
  unlink((out + ".old").c_str());
}

// `-i -` checks the stream as it arrives: zeros (or a valid pipe header followed by garbage)
// are rejected at once, while the writer is still writing, instead of after reading
// everything into memory (3 GB of zeros ended in std::bad_alloc).
TEST(MisuseTest, StdinIsValidatedWhileStreaming) {
  std::vector<uint8_t> pipe_header = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2',
                                      16,  0,   0,   0,   0,   0,   0,   0};
  struct Case {
    std::vector<uint8_t> prefix;
    const char* want;
  } cases[] = {{{}, "not a perf.data file"}, {pipe_header, "smaller than its header"}};
  for (const Case& c : cases) {
    int in[2], out[2];
    ASSERT_EQ(0, pipe(in));
    ASSERT_EQ(0, pipe(out));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(out[1], STDERR_FILENO);
      close(in[1]);
      close(out[0]);
      execl(testing::PerfBuildIdBinary(), testing::PerfBuildIdBinary(), "maps", "-i", "-",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    signal(SIGPIPE, SIG_IGN);
    // Never closed before the check: a reader that waits for the end never answers.
    std::vector<uint8_t> chunk(c.prefix);
    chunk.resize(1 << 16, 0);
    ssize_t w = write(in[1], chunk.data(), chunk.size());
    EXPECT_GT(w, 0);
    int status = 0;
    bool exited = false;
    for (int t = 0; t < 5000 && !exited; t += 20) {
      exited = waitpid(pid, &status, WNOHANG) == pid;
      if (!exited)
        usleep(20 * 1000);
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    close(in[1]);
    std::string output;
    char buf[4096];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0)
      output.append(buf, static_cast<size_t>(n));
    close(out[0]);
    EXPECT_TRUE(exited) << "maps -i - still reading 5 s after " << c.want;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status << ": " << output;
    EXPECT_NE(std::string::npos, output.find(c.want)) << output;
  }
}

}  // namespace
}  // namespace pbid
