// SPDX-License-Identifier: GPL-2.0
//
// perf_to_profile: converts a perf.data file to a pprof profile with the command line of
// google/perf_data_converter's tool of the same name, which `pprof` runs (as
// `perf_to_profile -i IN -o OUT -f`) whenever it is given a perf.data file. Debian does not
// ship that tool; this one puts pbid's report and pprof writer behind its interface. A
// command-line program beside perf-buildid, it shares its option parser and exit statuses.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#include "cli.h"
#include "pbid/perf_data.h"
#include "pbid/symbolize/report.h"
#include "pbid/version.h"

using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf_to_profile - convert a perf.data file to a pprof profile\n"
    "\n"
    "SYNOPSIS\n"
    "    perf_to_profile -i <input perf data> -o <output profile> [-f]\n"
    "    perf_to_profile --help | --version\n"
    "\n"
    "DESCRIPTION\n"
    "    The command line of perf_to_profile from google/perf_data_converter, which pprof\n"
    "    runs to read perf.data files (go tool pprof perf.data), over perf-buildid's report:\n"
    "    samples are symbolized BY BUILD ID exactly as perf-buildid report does (recorded\n"
    "    path only if its build ID matches, /usr/lib/debug/.build-id, debuginfod when\n"
    "    DEBUGINFOD_URLS is set) and written as a gzip-compressed profile.proto. Every\n"
    "    mapping carries its build ID. Locations that could not be symbolized keep their\n"
    "    address, so pprof's own -symbolize step can still name them later from a binary\n"
    "    with the same build ID.\n"
    "\n"
    "    Reads files from perf-buildid record and from Linux perf record (with or without\n"
    "    --buildid-mmap).\n"
    "\n"
    "OPTIONS\n"
    "    -i FILE    the perf.data file to read\n"
    "    -o FILE    the profile to write\n"
    "    -f         overwrite FILE of -o if it exists\n"
    "    --help     this text\n"
    "    --version  the perf-buildid version this command belongs to\n"
    "\n"
    "ENVIRONMENT\n"
    "    DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT: see debuginfod-find(1).\n"
    "\n"
    "EXIT STATUS\n"
    "    0  the profile was written\n"
    "    1  the profile could not be made or written\n"
    "    2  bad command line (the usage is printed), or an existing output without -f\n"
    "    3  the input is missing, cannot be read, is truncated or corrupt\n"
    "    These are perf-buildid's statuses, from the same map. The original tool exits 1 for\n"
    "    a bad command line and aborts on the others; pprof only checks for a failure.\n"
    "\n"
    "SEE ALSO\n"
    "    perf-buildid-report(1), perf-buildid(1), pprof (go tool pprof)\n";

const char kUsage[] =
    "Usage:\n"
    "perf_to_profile -i <input perf data> -o <output profile> [-f]\n"
    "If the -f option is given, overwrite the existing output profile.\n";

// One line, "perf_to_profile: [INPUT: ]ERROR", and the status perf-buildid would give.
int FailWith(const pbid::Error& e, Stage stage, const std::string& input = "") {
  std::string text = input.empty() ? e.ToString() : input + ": " + e.ToString();
  fprintf(stderr, "perf_to_profile: %s\n", text.c_str());
  return ExitCodeFor(e, stage);
}

int UsageFailure() {
  fputs(kUsage, stderr);
  return kExitUsage;
}

// pprof creates OUT itself, keeps it open and reads the profile through that descriptor, so
// the profile must go into OUT's own inode: a new file renamed over it would be invisible to
// pprof. It is built in a private temporary directory first, so that a failure while building
// leaves OUT as it was, then copied.
int WriteInPlace(const pbid::Report& report, const std::string& output) {
  const char* tmpdir = getenv("TMPDIR");
  std::string dir_template =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/perf_to_profile.XXXXXX";
  if (!mkdtemp(dir_template.data())) {
    return FailWith(
        pbid::Error::Sys("", errno, "cannot create a temporary directory in " + dir_template),
        Stage::kOperation);
  }
  const std::string dir = dir_template;
  const std::string tmp = dir + "/profile.pb.gz";
  pbid::Status written = report.WritePprof(tmp);
  if (written.ok()) {
    std::ifstream in(tmp, std::ios::binary);
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    if (!out)
      written = pbid::Error::Sys("", errno, "cannot open " + output);
    else if (!(out << in.rdbuf()) || !out.flush())
      written = pbid::Error::Of(pbid::ErrorKind::kIo, "", "cannot write " + output);
  }
  unlink(tmp.c_str());
  rmdir(dir.c_str());
  return written.ok() ? kExitOk : FailWith(written.error(), Stage::kOperation);
}

int Run(int argc, char** argv) {
  if (argc == 2 && !strcmp(argv[1], "--help")) {
    fputs(kHelp, stdout);
    return fflush(stdout) == 0 ? kExitOk : kExitFailure;
  }
  if (argc == 2 && !strcmp(argv[1], "--version")) {
    printf("perf_to_profile (%s)\n", pbid::VersionString().c_str());
    return kExitOk;
  }
  std::string input, output;
  bool overwrite = false;
  // google's getopt(":fi:o:"): short options only, in any order with operands (ignored).
  ParseResult r = ParseOptions({{nullptr, 'f', ArgKind::kNone, Set(&overwrite)},
                                {nullptr, 'i', ArgKind::kRequired, Store(&input)},
                                {nullptr, 'o', ArgKind::kRequired, Store(&output)}},
                               Operands::kPermute, argc, argv);
  if (r.kind == ParseResult::kMissingValue) {
    fprintf(stderr, "perf_to_profile: -%c needs an argument\n", r.letter);
    return UsageFailure();
  }
  if (r.kind == ParseResult::kUnknown) {
    fprintf(stderr, "perf_to_profile: invalid option -%c\n", r.letter);
    return UsageFailure();
  }
  if (input.empty() || output.empty())
    return UsageFailure();
  struct stat st;
  if (!overwrite && stat(output.c_str(), &st) == 0) {
    return FailWith(
        pbid::Error::Of(pbid::ErrorKind::kInvalidArgument, "",
                        "output file already exists: " + output + " (-f overwrites it)"),
        Stage::kSystem);
  }

  auto reader = pbid::PerfDataReader::Open(input);
  if (!reader.ok())
    return FailWith(reader.error(), Stage::kInput, input);
  pbid::ReportOptions opts;
  opts.want_pprof = true;
  auto report = pbid::Report::Build(**reader, opts);
  if (!report.ok())
    return FailWith(report.error(), Stage::kOperation, input);
  return WriteInPlace(**report, output);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    // Not an Error of the library: out of memory, as in perf-buildid's main().
    return FailWith(pbid::Error::Of(pbid::ErrorKind::kIo, "", e.what()), Stage::kSystem);
  }
}
