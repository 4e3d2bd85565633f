// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "cli.h"

namespace pbid::cli {

void PrintError(const char* cmd, const std::string& message) {
  fprintf(stderr, "perf-buildid %s: %s\n", cmd, message.c_str());
}

void PrintError(const char* cmd, const Error& e) {
  PrintError(cmd, e.ToString());
}

std::unique_ptr<PerfDataReader> OpenInput(const char* cmd, const std::string& path) {
  // "-i -": a pipe-mode stream (perf record -o -) or a whole file on stdin, read into memory.
  auto r =
      path == "-" ? PerfDataReader::FromStream(STDIN_FILENO, "stdin") : PerfDataReader::Open(path);
  if (!r.ok()) {
    Error e = r.error();
    // Errors from inside the file name the field; say which file too.
    if (e.field != path)
      e.field = path + ": " + e.field;
    PrintError(cmd, e);
    return nullptr;
  }
  return std::move(*r);
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

std::string FormatTime(uint64_t ns) {
  char buf[40];
  snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, static_cast<uint64_t>(ns / 1000000000ULL),
           static_cast<uint64_t>((ns % 1000000000ULL) / 1000));
  return buf;
}

}  // namespace pbid::cli
