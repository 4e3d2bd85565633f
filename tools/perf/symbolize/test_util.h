// SPDX-License-Identifier: GPL-2.0
//
// Test helpers of the symbolizer tests: fixtures, build-ID directories, a real debuginfod,
// and the fixture workload's own view of its addresses. Facts the tests compare against come from
// independent tools (readelf, the workload's /proc/self/maps), not from the code under test.
#ifndef PBID_SYMBOLIZE_TEST_UTIL_H_
#define PBID_SYMBOLIZE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/test_util.h"  // TempDir, RunCommand, Quote

namespace pbid::testing {

// The build ID as printed by binutils readelf -n, "" if none.
std::string ReadelfBuildId(const std::string& path);

std::string FixturePath(const std::string& name);  // e.g. "workload.stripped"

// What a profiler would record for a function of the workload: the runtime address and the
// mapping containing it, as the running process reports them (/proc/self/maps).
struct RecordedFunction {
  uint64_t addr = 0, start = 0, end = 0, pgoff = 0;
  uint64_t file_offset() const { return addr - start + pgoff; }
};
// Runs `<binary> --addrs`; keys are spin_alpha, spin_beta, spin_outer.
std::map<std::string, RecordedFunction> RecordWorkload(const std::string& binary);

bool CopyFile(const std::string& from, const std::string& to, bool executable);
bool MakeDirs(const std::string& path);
// Installs file as <dir>/.build-id/xx/yyyy<suffix> for build ID hex.
std::string InstallInBuildIdDir(const std::string& root, const std::string& hex,
                                const std::string& file, const char* suffix);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeTcpPort();

// A real elfutils debuginfod serving one directory (-F) on a free loopback port, for the
// duration of a test. Start() waits, bounded, until the scan has indexed `expect_files`.
class DebuginfodServer {
 public:
  DebuginfodServer() = default;
  ~DebuginfodServer() { Stop(); }
  DebuginfodServer(const DebuginfodServer&) = delete;
  DebuginfodServer& operator=(const DebuginfodServer&) = delete;

  // Returns "" on success, else why the server could not be started.
  std::string Start(const std::string& scan_dir, const std::string& work_dir, int expect_files,
                    int timeout_s = 60);
  void Stop();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const;

 private:
  int pid_ = -1;
  int port_ = -1;
  std::string log_path_;
};

// A server that accepts every connection on a loopback port and never answers: what a
// debuginfod server stuck behind a dead proxy looks like to its clients. A python3 listener,
// bound to port 0, that logs one line per connection.
class SilentServer {
 public:
  SilentServer() = default;
  ~SilentServer() { Stop(); }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  std::string Start(const std::string& work_dir);  // "" on success, else why not
  void Stop();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const;  // connections accepted so far

 private:
  int pid_ = -1;
  int port_ = -1;
  std::string log_path_;
};

// GET http://127.0.0.1:port/path over a plain socket (no HTTP library needed for /metrics).
std::string HttpGet(int port, const std::string& path, int timeout_s = 5);

}  // namespace pbid::testing

#endif  // PBID_SYMBOLIZE_TEST_UTIL_H_
