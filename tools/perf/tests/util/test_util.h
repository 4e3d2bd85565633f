// SPDX-License-Identifier: GPL-2.0
//
// Helpers every test of perf-buildid shares (library pbid_testutil): temporary files and
// directories, running real programs through the shell, reading files whole.
#ifndef PBID_TESTS_UTIL_TEST_UTIL_H_
#define PBID_TESTS_UTIL_TEST_UTIL_H_

#include <elfutils/version.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"

namespace pbid::testing {

// A fresh directory under $TMPDIR, removed with its contents at the end of its scope (kept
// when PBID_KEEP_TEMP is set). path() is empty if it could not be created.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Paths in this build: perf-buildid, the ELF fixtures of the library's tests, and the BPF
// tests' workload. Only this header's test_util.cpp is compiled with them (and the symbolizer
// tests' own test_util.cpp with theirs), so that a clone at another path recompiles those
// files alone: ccache keys a file on its -D values, which hold the path.
const char* PerfBuildIdBinary();
const char* LibFixturesDir();
const char* WorkloadBinary();

// A file name in gtest's temporary directory, unique to this process: "<tmp>/pbid-PID-name".
std::string TempPath(const std::string& name);

struct CommandResult {
  int exit_code = -1;  // the exit status, 128 + signal if killed, -1 if it could not run
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, killing it after timeout_s seconds (coreutils `timeout`: a run
// that takes longer exits 124).
CommandResult RunCommand(const std::string& command, int timeout_s = 60);

// Shell-quotes one argument.
std::string Quote(const std::string& s);

// The whole file ("" if it cannot be read).
std::string ReadFile(const std::string& path);
std::vector<uint8_t> ReadBytes(const std::string& path);

// Whether libdw loads libdebuginfod at every start by itself, as elfutils before 0.187 does
// (Debian 11's 0.183): no program linked with libdw can then keep it unloaded.
constexpr bool kLibdwLoadsLibdebuginfod = !_ELFUTILS_PREREQ(0, 187);

// A build id written as hex, for a test's constants; bad hex fails the test.
BuildId IdFromHex(const char* hex);

// The data section's records in file order; a header that does not fit fails the test. The
// views stay good until the reader's next pass.
std::vector<RecordView> Records(const PerfDataReader& reader);

}  // namespace pbid::testing

#endif  // PBID_TESTS_UTIL_TEST_UTIL_H_
