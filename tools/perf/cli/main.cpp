// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid: record and read perf.data files with build ids in every mapping.
#include <cstdio>
#include <cstring>
#include <exception>

#include "cli.h"
#include "pbid/version.h"

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid - profile with ELF build ids in every mapping\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid <command> [<options>] [--help]\n"
    "    perf-buildid --help | --version\n"
    "\n"
    "DESCRIPTION\n"
    "    perf-buildid records CPU profiles into perf.data files that Linux perf reads, with the\n"
    "    build id of each mapped file in its PERF_RECORD_MMAP2 record (Linux 5.12+, or the\n"
    "    5.10 backport). On kernels without attr.build_id it reads each id from\n"
    "    /proc/PID/map_files as the mapping is reported. Every id carries its source: the\n"
    "    kernel record, synthesized for an already running process, read from the file, or\n"
    "    none.\n"
    "\n"
    "COMMANDS\n"
    "    record         run a command (or attach to processes) and write perf.data\n"
    "    buildid-list   list the build ids of a perf.data file, like perf buildid-list\n"
    "    maps           list every mapping with its build id and the id's source\n"
    "    script         print the records, like perf script --show-mmap-events\n"
    "    dump           print every record with its offset and raw bytes, like perf report -D\n"
    "    report         symbolize samples by build id; table, coverage, pprof\n"
    "    symbolize      name BUILDID+0xOFFSET lines by build id, as addr2line does\n"
    "    archive        store the files a recording needs by build id, for debuginfod -F\n"
    "\n"
    "    Run 'perf-buildid <command> --help' for the options of a command.\n"
    "\n"
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  the operation failed (system call, kernel, writing the output)\n"
    "    2  bad command line\n"
    "    3  the input file is missing, cannot be read, is truncated or corrupt, or holds\n"
    "       what perf-buildid does not read (perf.data version 1)\n"
    "\n"
    "SEE ALSO\n"
    "    perf-record(1), perf-buildid-list(1), perf-script(1), Documentation/perf-buildid.md\n";

struct Command {
  const char* name;
  int (*fn)(int, char**);
};

const Command kCommands[] = {
    {"record", pbid_cmd_record},       {"buildid-list", pbid_cmd_buildid_list},
    {"maps", pbid_cmd_maps},           {"script", pbid_cmd_script},
    {"dump", pbid_cmd_dump},           {"report", pbid_cmd_report},
    {"symbolize", pbid_cmd_symbolize}, {"archive", pbid_cmd_archive},
};

int Dispatch(int argc, char** argv) {
  if (argc < 2) {
    fputs(kHelp, stderr);
    return pbid::cli::kExitUsage;
  }
  const char* cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    if (argc > 2 && strcmp(cmd, "help") == 0) {
      for (const Command& c : kCommands) {
        if (!strcmp(argv[2], c.name)) {
          char help[] = "--help";
          char* args[] = {argv[2], help, nullptr};
          return c.fn(2, args);
        }
      }
    }
    return pbid::cli::PrintHelp(kHelp);
  }
  if (!strcmp(cmd, "--version")) {
    puts(pbid::VersionString().c_str());
    return 0;
  }
  for (const Command& c : kCommands) {
    if (!strcmp(cmd, c.name))
      return c.fn(argc - 1, argv + 1);
  }
  fprintf(stderr, "perf-buildid: '%s' is not a command. See 'perf-buildid --help'.\n", cmd);
  return pbid::cli::kExitUsage;
}

}  // namespace

// The library returns errors, but the standard library can still throw (bad_alloc): one line
// and a failure status rather than std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return Dispatch(argc, argv);
  } catch (const std::exception& e) {
    // Not an Error of the library: the standard library ran out of memory (bad_alloc) or
    // refused a size. Nothing says the input was at fault: the command failed.
    pbid::Error err = pbid::Error::Of(pbid::ErrorKind::kIo, "", e.what());
    fprintf(stderr, "perf-buildid: %s\n", err.ToString().c_str());
    return pbid::cli::ExitCodeFor(err, pbid::cli::Stage::kSystem);
  }
}
