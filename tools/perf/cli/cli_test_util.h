// SPDX-License-Identifier: GPL-2.0
//
// Helpers of the command tests: run the real perf-buildid binary, write small perf.data files
// with the library.
#ifndef PBID_CLI_CLI_TEST_UTIL_H_
#define PBID_CLI_CLI_TEST_UTIL_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../tests/record_fixtures.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "util/test_util.h"

namespace pbid::clitest {

struct ToolRun {
  int status = -1;  // exit code, or 128 + signal
  std::string output;
};

// Runs `perf-buildid args` through the shell with stderr captured; `redirect` comes after
// "2>&1" (e.g. " >/dev/full" sends only stdout there). A run longer than timeout_s seconds is
// killed and gives status 124. `env`, if any, goes first: "env -u VAR OTHER=value".
inline ToolRun RunToolIn(const std::string& env, const std::string& args,
                         const std::string& redirect = "", int timeout_s = 120) {
  testing::CommandResult c = testing::RunCommand((env.empty() ? "" : env + " ") +
                                                     testing::Quote(testing::PerfBuildIdBinary()) +
                                                     " " + args + " 2>&1" + redirect,
                                                 timeout_s);
  return ToolRun{c.exit_code, std::move(c.output)};
}
inline ToolRun RunTool(const std::string& args, const std::string& redirect = "",
                       int timeout_s = 120) {
  return RunToolIn("", args, redirect, timeout_s);
}

using testing::TempPath;

inline EventAttr Attr(std::vector<uint64_t> ids) {
  return fixtures::SampleAttr(std::move(ids));
}

// Writes a perf.data file with these events and records.
inline std::string WriteEvents(const char* name, const std::vector<EventAttr>& attrs,
                               const std::vector<RecordBytes>& recs) {
  std::string path = TempPath(name);
  auto w = PerfDataWriter::Create(path, attrs);
  EXPECT_TRUE(w.ok()) << w.error().ToString();
  for (const RecordBytes& r : recs)
    EXPECT_TRUE((*w)->WriteRecord(r).ok());
  Status s = (*w)->Finish(Features());
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return path;
}

// Writes a perf.data file holding `records` for the single event `a`.
inline std::string WriteData(const char* name, const EventAttr& a,
                             const std::vector<RecordBytes>& recs) {
  return WriteEvents(name, {a}, recs);
}

inline Mmap2Record Mapping(uint64_t start, uint64_t len, uint64_t id) {
  return fixtures::Mmap2(10, start, len, "/lib/x.so", id, 0);
}

// A PERF_RECORD_COMPRESSED (perf record -z) with an empty payload, in a file the writer gives
// no HEADER_COMPRESSED: unannounced, it cannot be read.
inline RecordBytes CompressedRecord() {
  RecordBytes z(24, 0);
  uint32_t type = 81;  // PERF_RECORD_COMPRESSED
  uint16_t size = 24;
  memcpy(z.data(), &type, 4);
  memcpy(z.data() + 6, &size, 2);
  return z;
}

inline std::string ReadAll(const std::string& path) {
  return testing::ReadFile(path);
}

inline size_t Lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Overwrites the u64 at `off` of a file (the writer never produces the broken headers).
inline void PatchU64(const std::string& path, off_t off, uint64_t v) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(8, pwrite(fd, &v, 8, off));
  close(fd);
}

}  // namespace pbid::clitest

#endif  // PBID_CLI_CLI_TEST_UTIL_H_
