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
#include <vector>

#include "options.h"
#include "pbid/perf_data.h"
#include "pbid/result.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid::cli {

// Documented in Documentation/perf-buildid.md and in `perf-buildid --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,   // the operation failed (system call, kernel, writing output)
  kExitUsage = 2,     // bad command line
  kExitBadInput = 3,  // input file missing, truncated or corrupt
};

// What a command was doing when an error came. With the error's kind it gives the exit
// status, in one place (ExitCodeFor):
//
//   kind               kInput  kOperation  kSystem
//   corrupt input         3        3          1
//   unsupported           3        3          1
//   I/O                   3        1          1
//   invalid argument      2        2          2
enum class Stage {
  kInput,      // opening, reading or decoding the input file: any failure there is the input's
  kOperation,  // the work of a command on its decoded input (symbolizing) and its output: the
               // input's faults still show, a failed system call is the operation's
  kSystem,     // work with no input file to blame: record (the kernel, its command, the file
               // it writes), memory
};
int ExitCodeFor(const Error& e, Stage stage);

// Prints the error on one line, naming `input` (the -i argument) once when given, and
// returns ExitCodeFor(e, stage): every error exit of a command goes through here.
int Fail(const char* cmd, const Error& e, Stage stage, const std::string& input = "");

// Opens and validates a perf.data file; "-" reads stdin (a pipe-mode stream or a whole file).
// Its errors are Stage::kInput.
Result<std::unique_ptr<PerfDataReader>> OpenInput(const std::string& path);

// The command line of a command that reads one perf.data file and prints what it finds
// (buildid-list, maps, script, dump): -i FILE (default perf.data), `options`, -h/--help and no
// operands, then FILE opened. Returns kParsed with *input and *reader set, or else the exit
// status (ParseCommandLine's, or the Stage::kInput failure to open FILE, printed).
int OpenFromCommandLine(const char* cmd, const char* help, std::vector<Option> options, int argc,
                        char** argv, std::string* input, std::unique_ptr<PerfDataReader>* reader);

// The EXIT STATUS section of the --help of the commands that read a perf.data file and print
// what they find (buildid-list, maps, script, dump): what ExitCodeFor gives them.
#define PBID_CLI_READER_EXIT_STATUS                                                     \
  "EXIT STATUS\n"                                                                       \
  "    0 success, 1 the output cannot be written, 2 bad command line, 3 the input is\n" \
  "    missing, unreadable, truncated, corrupt or of a kind not supported.\n"

// The --help lines of the options that find files by build ID (report, symbolize): one text for
// the options both commands take through the same symbolizer.
#define PBID_CLI_SYMBOLIZER_OPTIONS                                                          \
  "    --debug-dir DIR      also search DIR/.build-id (or DIR itself if it is a .build-id\n" \
  "                         directory); may be repeated, searched in order\n"                \
  "    --debug-root DIR     system debug root holding .build-id (default: /usr/lib/debug;\n" \
  "                         an empty string disables it)\n"                                  \
  "    --debuginfod URL     query these debuginfod servers (space-separated list),\n"        \
  "                         overriding DEBUGINFOD_URLS\n"                                    \
  "    --no-debuginfod      never query debuginfod\n"                                        \
  "    --debuginfod-budget SECONDS\n"                                                        \
  "                         the most time all debuginfod queries of the run take\n"          \
  "                         together (default: 5); a transfer still going then is\n"         \
  "                         aborted, and what is left is not asked for\n"

// The options of PBID_CLI_SYMBOLIZER_OPTIONS, filling *opts; *url_given is set by --debuginfod
// so that the caller can reject it beside --no-debuginfod (SymbolizerOptionsConflict).
std::vector<Option> SymbolizerOptionList(SymbolizerOptions* opts, bool* url_given);
// The usage error for --debuginfod with --no-debuginfod, or kParsed when there is none.
int SymbolizerOptionsConflict(const char* cmd, const SymbolizerOptions& opts, bool url_given);

// Prints help text to stdout (for --help) and returns kExitOk.
int PrintHelp(const char* text);
// Prints "usage" hint to stderr and returns kExitUsage.
int UsageError(const char* cmd, const std::string& message);
// The usage error for what the option parser rejected: an unknown option or one missing its
// value.
int BadOption(const char* cmd, const char* arg);
// The usage error for an argument after the options of a command that takes none.
int ExtraArgument(const char* cmd, const char* arg);

std::string FormatTime(uint64_t ns);  // "608.725679"

// Decimal numbers from the command line, strictly: digits only (and one leading '-' for
// ParseInt), no blanks, no overflow, within [min, max]. False for anything else.
bool ParseUnsigned(const char* s, uint64_t min, uint64_t max, uint64_t* out);
bool ParseInt(const char* s, int64_t min, int64_t max, int64_t* out);
// Seconds as a decimal number ("2", "0.5"), strictly as above, within [min, max].
bool ParseSeconds(const char* s, double min, double max, double* out);
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
int pbid_cmd_symbolize(int argc, char** argv);
int pbid_cmd_archive(int argc, char** argv);

#endif  // PBID_CLI_CLI_H_
