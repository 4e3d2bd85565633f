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

namespace {

// "-i -": a pipe-mode stream (perf record -o -) or a whole file on stdin, read into memory.
Result<std::unique_ptr<PerfDataReader>> OpenStdin() {
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  while (true) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error::Sys("stdin", errno, "read failed");
    if (n == 0)
      break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  return PerfDataReader::FromBytes(std::move(bytes));
}

}  // namespace

std::unique_ptr<PerfDataReader> OpenInput(const char* cmd, const std::string& path) {
  auto r = path == "-" ? OpenStdin() : PerfDataReader::Open(path);
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
