// SPDX-License-Identifier: GPL-2.0
//
// The command-line parser of every command: each one declares its options once, in a table
// (long name, short letter, argument kind, what to do with the value), and the parser runs
// getopt_long over it. getopt_long, not a library: it is the grammar perf's users expect
// (bundled -qg, --name=value and --name value, unique prefixes of long names, "--", POSIX
// stop at the first operand so that record's COMMAND keeps its own options), it is in every
// libc this builds on, and the exact messages of the commands come from what it reports.
#ifndef PBID_CLI_OPTIONS_H_
#define PBID_CLI_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pbid::cli {

enum class ArgKind {
  kNone,      // -q, --quiet
  kRequired,  // -e EVENT, -eEVENT, --event EVENT, --event=EVENT
  kOptional,  // --bpf, --bpf=WHEN (only attached: a word after it is not its value)
};

// Takes the option's value (nullptr for kNone, and for kOptional given without one). Returns
// "" to go on, or why the value is wrong: the parse stops there with that message.
using OptionHandler = std::function<std::string(const char* value)>;

struct Option {
  const char* long_name;  // nullptr: a short option only
  char short_name;        // 0: a long option only
  ArgKind arg;
  OptionHandler take;  // empty: the option ends the parse (--help)
};

// The handlers most options need.
OptionHandler Store(std::string* to);  // keeps the value as given
OptionHandler Set(bool* flag);         // true when the option is given
// A number from min to max, read strictly (ParseUnsigned); the error names the option by
// `name` ("-c").
OptionHandler Unsigned(const char* name, uint64_t min, uint64_t max, uint64_t* to);
// A positive size in bytes, with an optional K, M or G (powers of 1024): archive's --max-size,
// record's --archive-max. The error names the option by `name`.
OptionHandler Size(const char* name, uint64_t* to);

enum class Operands {
  kStopAtFirst,  // POSIX: the first operand and all after it are operands (record's COMMAND)
  kPermute,      // GNU: options and operands in any order (getopt's default)
};

// How a parse ended. On every kind but kDone, the options after the one named were not read.
struct ParseResult {
  enum Kind {
    kDone,          // every option was taken
    kStopped,       // an option without handler, `option`, ended it
    kUnknown,       // getopt did not know `arg`
    kMissingValue,  // `arg` needs a value that is not there
    kBadValue,      // the handler of `option` rejected its value: `message`
  } kind = kDone;
  const Option* option = nullptr;
  // kUnknown, kMissingValue: the command-line word getopt was in ("-x", "-qx", "--inptu"),
  // and the short letter it reports (0 for a long option).
  const char* arg = nullptr;
  char letter = 0;
  std::string message;
  std::vector<const char*> operands;  // what follows the options (kDone only)
};

// Calls the handlers of the options in command-line order (a repeated option once per
// occurrence) and collects the operands. argv[0] is the command's name. getopt's state is
// global: one parse at a time; kPermute reorders argv, as getopt does.
ParseResult ParseOptions(const std::vector<Option>& options, Operands order, int argc, char** argv);

constexpr int kParsed = -1;  // never an exit status

// A perf-buildid command's command line: `options` plus -h/--help, which prints `help`; the
// first operand ends the options. Returns kParsed when the command goes on, with the operands in
// `*operands`, or else the exit status: 0 after --help, kExitUsage after the usage error
// printed for a bad option or value, or for any operand when `operands` is nullptr (the
// command takes none).
int ParseCommandLine(const char* cmd, const char* help, std::vector<Option> options, int argc,
                     char** argv, std::vector<std::string>* operands);

}  // namespace pbid::cli

#endif  // PBID_CLI_OPTIONS_H_
