// SPDX-License-Identifier: GPL-2.0
#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace pbid::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/pbid-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) != nullptr)
    path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty() || getenv("PBID_KEEP_TEMP") != nullptr)
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

const char* PerfBuildIdBinary() {
  return PBID_PERF_BUILDID;
}

const char* LibFixturesDir() {
  return PBID_FIXTURES;
}

const char* WorkloadBinary() {
  return PBID_WORKLOAD;
}

std::string TempPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/pbid-" + std::to_string(getpid()) + "-" + name;
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

CommandResult RunCommand(const std::string& command, int timeout_s) {
  CommandResult r;
  std::string cmd =
      "timeout -k 5 " + std::to_string(timeout_s) + " sh -c " + Quote(command) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    r.output.append(buf, n);
  int status = pclose(p);
  if (status != -1 && WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (status != -1 && WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

BuildId IdFromHex(const char* hex) {
  auto id = BuildId::FromHex(hex);
  EXPECT_TRUE(id.ok()) << hex;
  return id.ok() ? *id : BuildId();
}

std::vector<RecordView> Records(const PerfDataReader& reader) {
  std::vector<RecordView> out;
  Status st = reader.ForEachRecord([&](const RecordView& r) {
    out.push_back(r);
    return Ok();
  });
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  // A view from a pass may point into the window's ring, which a later chunk of a large file
  // takes over: read again after the pass, each view is good as long as the reader is (until
  // its next pass) wherever its bytes are.
  for (RecordView& v : out)
    v = reader.RecordAt(v.offset);
  return out;
}

}  // namespace pbid::testing
