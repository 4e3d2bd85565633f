// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cli.h"

namespace pbid::cli {

int ExitCodeFor(const Error& e, Stage stage) {
  if (e.kind == ErrorKind::kInvalidArgument)
    return kExitUsage;  // what the command line asked for cannot be done
  switch (stage) {
    case Stage::kInput: return kExitBadInput;
    case Stage::kOperation: return e.kind == ErrorKind::kIo ? kExitFailure : kExitBadInput;
    case Stage::kSystem: return kExitFailure;
  }
  return kExitFailure;
}

namespace {

// "perf-buildid <cmd>: <message>" on stderr, one line.
void PrintError(const char* cmd, const std::string& message) {
  fprintf(stderr, "perf-buildid %s: %s\n", cmd, message.c_str());
}

}  // namespace

int Fail(const char* cmd, const Error& e, Stage stage, const std::string& input) {
  // "-i -" is stdin, which the reader's errors already name.
  PrintError(cmd, input.empty() ? e.ToString() : e.ToStringIn(input == "-" ? "stdin" : input));
  return ExitCodeFor(e, stage);
}

Result<std::unique_ptr<PerfDataReader>> OpenInput(const std::string& path) {
  if (path == "-")
    return PerfDataReader::FromStream(STDIN_FILENO, "stdin");
  return PerfDataReader::Open(path);
}

int OpenFromCommandLine(const char* cmd, const char* help, std::vector<Option> options, int argc,
                        char** argv, std::string* input, std::unique_ptr<PerfDataReader>* reader) {
  *input = "perf.data";
  options.insert(options.begin(), {"input", 'i', ArgKind::kRequired, Store(input)});
  int code = ParseCommandLine(cmd, help, std::move(options), argc, argv, nullptr);
  if (code != kParsed)
    return code;
  auto opened = OpenInput(*input);
  if (!opened.ok())
    return Fail(cmd, opened.error(), Stage::kInput, *input);
  *reader = std::move(*opened);
  return kParsed;
}

int PrintHelp(const char* text) {
  fputs(text, stdout);
  return kExitOk;
}

int UsageError(const char* cmd, const std::string& message) {
  PrintError(cmd, message);
  fprintf(stderr, "Try 'perf-buildid %s --help'.\n", cmd);
  return kExitUsage;
}

int BadOption(const char* cmd, const char* arg) {
  return UsageError(cmd, std::string("unknown option or missing value: '") + arg + "'");
}

int ExtraArgument(const char* cmd, const char* arg) {
  return UsageError(cmd, std::string("unexpected argument '") + arg + "'");
}

std::string FormatTime(uint64_t ns) {
  char buf[40];
  snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, static_cast<uint64_t>(ns / 1000000000ULL),
           static_cast<uint64_t>((ns % 1000000000ULL) / 1000));
  return buf;
}

bool ParseUnsigned(const char* s, uint64_t min, uint64_t max, uint64_t* out) {
  if (s == nullptr || *s == 0)
    return false;
  uint64_t v = 0;
  for (const char* p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return false;
    unsigned d = static_cast<unsigned>(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  if (v < min || v > max)
    return false;
  *out = v;
  return true;
}

bool ParseInt(const char* s, int64_t min, int64_t max, int64_t* out) {
  if (s == nullptr)
    return false;
  bool neg = *s == '-';
  uint64_t mag;
  // The magnitude of INT64_MIN is INT64_MAX + 1.
  if (!ParseUnsigned(neg ? s + 1 : s, 0, static_cast<uint64_t>(INT64_MAX) + (neg ? 1 : 0), &mag))
    return false;
  int64_t v = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  if (v < min || v > max)
    return false;
  *out = v;
  return true;
}

bool ParseSeconds(const char* s, double min, double max, double* out) {
  if (s == nullptr || *s == 0)
    return false;
  // Digits, at most one '.', and a digit somewhere: "2", "0.5", "1.". No sign, exponent,
  // blanks, "inf" or "nan", which strtod would take.
  bool digit = false, dot = false;
  for (const char* p = s; *p; p++) {
    if (*p >= '0' && *p <= '9') {
      digit = true;
    } else if (*p == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!digit)
    return false;
  double v = strtod(s, nullptr);
  if (!(v >= min && v <= max))
    return false;
  *out = v;
  return true;
}

std::string BadNumber(const char* option, const char* value, int64_t min, uint64_t max) {
  return std::string("bad ") + option + " value '" + value + "': expected a number from " +
         std::to_string(min) + " to " + std::to_string(max);
}

int FinishOutput(const char* cmd) {
  if (fflush(stdout) == 0 && !ferror(stdout))
    return kExitOk;
  Error e = errno ? Error::Sys("standard output", errno, "write error")
                  : Error::Of(ErrorKind::kIo, "standard output", "write error");
  return Fail(cmd, e, Stage::kOperation);
}

std::vector<Option> SymbolizerOptionList(SymbolizerOptions* opts, bool* url_given) {
  return {
      {"debug-dir", 0, ArgKind::kRequired,
       [opts](const char* v) {
         opts->debug_dirs.push_back(v);
         return std::string();
       }},
      {"debug-root", 0, ArgKind::kRequired, Store(&opts->build_id_root)},
      {"debuginfod", 0, ArgKind::kRequired,
       [opts, url_given](const char* v) {
         opts->debuginfod_urls = v;
         *url_given = true;
         return std::string();
       }},
      {"no-debuginfod", 0, ArgKind::kNone,
       [opts](const char*) {
         opts->use_debuginfod = false;
         return std::string();
       }},
      {"debuginfod-budget", 0, ArgKind::kRequired,
       [opts](const char* v) {
         if (!ParseSeconds(v, 0.001, 86400, &opts->debuginfod_budget_seconds))
           return std::string("bad --debuginfod-budget value '") + v +
                  "': expected seconds from 0.001 to 86400";
         return std::string();
       }},
  };
}

int SymbolizerOptionsConflict(const char* cmd, const SymbolizerOptions& opts, bool url_given) {
  if (url_given && !opts.use_debuginfod)
    return UsageError(cmd, "--debuginfod and --no-debuginfod exclude each other");
  return kParsed;
}

}  // namespace pbid::cli
