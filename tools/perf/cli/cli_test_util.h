// SPDX-License-Identifier: GPL-2.0
//
// Helpers of the command tests: run the real perf-buildid binary, write small perf.data files
// with the library.
#ifndef PBID_CLI_CLI_TEST_UTIL_H_
#define PBID_CLI_CLI_TEST_UTIL_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../tests/record_fixtures.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"

namespace pbid::clitest {

struct ToolRun {
  int status = -1;  // exit code, or 128 + signal
  std::string output;
};

// Runs `perf-buildid args` through the shell with stderr captured; `redirect` comes after
// "2>&1" (e.g. " >/dev/full" sends only stdout there). A run longer than timeout_s seconds is
// killed and gives status 124.
inline ToolRun RunTool(const std::string& args, const std::string& redirect = "",
                       int timeout_s = 120) {
  ToolRun r;
  std::string cmd = "timeout -k 5 " + std::to_string(timeout_s) + " " +
                    std::string(PBID_PERF_BUILDID) + " " + args + " 2>&1" + redirect;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    r.output.append(buf, n);
  int st = pclose(p);
  if (WIFEXITED(st))
    r.status = WEXITSTATUS(st);
  else if (WIFSIGNALED(st))
    r.status = 128 + WTERMSIG(st);
  return r;
}

inline std::string TempPath(const char* name) {
  return std::string(::testing::TempDir()) + "/pbid-cli-" + std::to_string(getpid()) + "-" + name;
}

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

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
