// SPDX-License-Identifier: GPL-2.0
//
// Shared by the perf-buildid commands: exit codes, error printing, help.
#ifndef PBID_CLI_CLI_H_
#define PBID_CLI_CLI_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "pbid/perf_data.h"
#include "pbid/result.h"

namespace pbid::cli {

// Documented in Documentation/perf-buildid.md and in `perf-buildid --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,   // the operation failed (system call, kernel, writing output)
  kExitUsage = 2,     // bad command line
  kExitBadInput = 3,  // input file missing, truncated or corrupt
};

// Where an error happened: any failure to read the input is exit status 3, whatever its kind.
enum class Stage { kInput, kOperation };
// The one map from an error to the exit status of a command.
int ExitCodeFor(const Error& e, Stage stage);

// "perf-buildid <cmd>: <message>" on stderr, one line.
void PrintError(const char* cmd, const std::string& message);
void PrintError(const char* cmd, const Error& e);

// Opens and validates a perf.data file; on failure prints one line and returns nullptr.
std::unique_ptr<PerfDataReader> OpenInput(const char* cmd, const std::string& path);

// Prints help text to stdout (for --help) and returns kExitOk.
int PrintHelp(const char* text);
// Prints "usage" hint to stderr and returns kExitUsage.
int UsageError(const char* cmd, const std::string& message);
// The usage error for what getopt (with opterr = 0) rejected: an unknown option or one
// missing its value.
int BadOption(const char* cmd, const char* arg);

std::string FormatTime(uint64_t ns);  // "608.725679"

// Decimal numbers from the command line, strictly: digits only (and one leading '-' for
// ParseInt), no blanks, no overflow, within [min, max]. False for anything else.
bool ParseUnsigned(const char* s, uint64_t min, uint64_t max, uint64_t* out);
bool ParseInt(const char* s, int64_t min, int64_t max, int64_t* out);
// "bad -F value '-5': expected a number from 1 to 4294967295"
std::string BadNumber(const char* option, const char* value, int64_t min, uint64_t max);

// The last step of a command that writes to stdout: a failed write (full disk, closed pipe)
// is an error, as in perf, not a success with output missing.
int FinishOutput(const char* cmd);

}  // namespace pbid::cli

int pbid_cmd_record(int argc, char** argv);
int pbid_cmd_buildid_list(int argc, char** argv);
int pbid_cmd_maps(int argc, char** argv);
int pbid_cmd_script(int argc, char** argv);
int pbid_cmd_dump(int argc, char** argv);
int pbid_cmd_report(int argc, char** argv);

#endif  // PBID_CLI_CLI_H_
