// SPDX-License-Identifier: GPL-2.0
//
// perf_to_profile: converts a perf.data file to a pprof profile with the command line of
// google/perf_data_converter's tool of the same name, which `pprof` runs (as
// `perf_to_profile -i IN -o OUT -f`) whenever it is given a perf.data file. Debian does not
// ship that tool; this one puts pbid's report and pprof writer behind its interface.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#include "pbid/perf_data.h"
#include "pbid/symbolize/report.h"
#include "pbid/version.h"

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
    "    1  anything else: a bad command line (the usage is printed), an unreadable or corrupt\n"
    "       input, an existing output without -f, a failed write. The original tool exits\n"
    "       with the same status for a bad command line and aborts on the others; both are\n"
    "       a failure to pprof, which only checks for one.\n"
    "\n"
    "SEE ALSO\n"
    "    perf-buildid-report(1), perf-buildid(1), pprof (go tool pprof)\n";

const char kUsage[] =
    "Usage:\n"
    "perf_to_profile -i <input perf data> -o <output profile> [-f]\n"
    "If the -f option is given, overwrite the existing output profile.\n";

int Fail(const std::string& message) {
  fprintf(stderr, "perf_to_profile: %s\n", message.c_str());
  return EXIT_FAILURE;
}

// pprof creates OUT itself, keeps it open and reads the profile through that descriptor, so
// the profile must go into OUT's own inode: a new file renamed over it would be invisible to
// pprof. It is built in a private temporary directory first, so that a failure while building
// leaves OUT as it was, then copied.
int WriteInPlace(const pbid::Report& report, const std::string& output) {
  const char* tmpdir = getenv("TMPDIR");
  std::string dir_template =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/perf_to_profile.XXXXXX";
  if (!mkdtemp(dir_template.data()))
    return Fail("cannot create a temporary directory in " + dir_template + ": " + strerror(errno));
  const std::string dir = dir_template;
  const std::string tmp = dir + "/profile.pb.gz";
  pbid::Status written = report.WritePprof(tmp);
  std::string error;
  if (!written.ok()) {
    error = written.error().ToString();
  } else {
    std::ifstream in(tmp, std::ios::binary);
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    if (!out)
      error = "cannot open " + output + ": " + strerror(errno);
    else if (!(out << in.rdbuf()) || !out.flush())
      error = "cannot write " + output;
  }
  unlink(tmp.c_str());
  rmdir(dir.c_str());
  return error.empty() ? EXIT_SUCCESS : Fail(error);
}

int Run(int argc, char** argv) {
  if (argc == 2 && !strcmp(argv[1], "--help")) {
    fputs(kHelp, stdout);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }
  if (argc == 2 && !strcmp(argv[1], "--version")) {
    printf("perf_to_profile (%s)\n", pbid::VersionString().c_str());
    return EXIT_SUCCESS;
  }
  std::string input, output;
  bool overwrite = false;
  opterr = 0;
  int c;
  // The leading ':' tells a missing argument (-i at the end) from an unknown option.
  while ((c = getopt(argc, argv, ":fi:o:")) != -1) {
    switch (c) {
      case 'i': input = optarg; break;
      case 'o': output = optarg; break;
      case 'f': overwrite = true; break;
      case ':':
        fprintf(stderr, "perf_to_profile: -%c needs an argument\n", optopt);
        fputs(kUsage, stderr);
        return EXIT_FAILURE;
      default:
        fprintf(stderr, "perf_to_profile: invalid option -%c\n", optopt);
        fputs(kUsage, stderr);
        return EXIT_FAILURE;
    }
  }
  if (input.empty() || output.empty()) {
    fputs(kUsage, stderr);
    return EXIT_FAILURE;
  }
  struct stat st;
  if (!overwrite && stat(output.c_str(), &st) == 0)
    return Fail("output file already exists: " + output + " (-f overwrites it)");

  auto reader = pbid::PerfDataReader::Open(input);
  if (!reader.ok())
    return Fail(input + ": " + reader.error().ToString());
  pbid::ReportOptions opts;
  opts.want_pprof = true;
  auto report = pbid::Report::Build(**reader, opts);
  if (!report.ok())
    return Fail(input + ": " + report.error().ToString());
  return WriteInPlace(**report, output);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
}
