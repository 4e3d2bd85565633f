// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid report: the command-line front end of pbid::Report.
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "pbid/perf_data.h"
#include "pbid/symbolize/report.h"

namespace {

using pbid::cli::ArgKind;
using pbid::cli::Fail;
using pbid::cli::kParsed;
using pbid::cli::ParseCommandLine;
using pbid::cli::Stage;
using pbid::cli::Store;
using pbid::cli::UsageError;

const char kHelp[] =
    "NAME\n"
    "    perf-buildid report - symbolize a recording by build ID; table, coverage, pprof\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid report [-i FILE] [--stdio] [-s|--sort KEYS] [--debug-dir DIR]...\n"
    "                        [--debuginfod URL | --no-debuginfod] [--kallsyms FILE]\n"
    "                        [--debug-root DIR] [--format table|pprof -o FILE.pb.gz]\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads a perf.data file (perf-buildid record, or perf record --buildid-mmap), maps\n"
    "    every sample to its mapping and file offset with the MMAP2 records, and names it\n"
    "    from the ELF and debug file found BY BUILD ID, in this order:\n"
    "      1. the recorded path, only if the file there still has the recorded build ID\n"
    "         (otherwise it is counted as a mismatch and never used: wrong symbols are\n"
    "         worse than none);\n"
    "      2. DEBUG-ROOT/.build-id/xx/yyyy.debug (and xx/yyyy, the executable);\n"
    "      3. each --debug-dir, same layout;\n"
    "      4. debuginfod servers (DEBUGINFOD_URLS, or --debuginfod URL); an ID a server\n"
    "         lacks is asked for once per run.\n"
    "    Kernel samples are named from kallsyms when it is readable and belongs to the\n"
    "    recorded kernel (same kernel build ID, or same release); else they show as [kernel].\n"
    "\n"
    "    Output: a table like perf report --stdio (overhead, samples, then the sort keys),\n"
    "    then a coverage summary: the share of samples whose mapping had a build ID, by\n"
    "    where the ID came from (kernel MMAP2 record, synthesized MMAP2, file fallback via\n"
    "    the build-ID table, none), and how many modules were symbolized from each place.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE     perf.data file to read (default: perf.data); - reads a\n"
    "                         pipe-mode stream from stdin (perf record -o -)\n"
    "    --stdio              text output (the only interface; accepted for perf habits)\n"
    "    -s, --sort KEYS      comma-separated: comm, pid, dso, sym (default: dso,sym)\n"
    "    --debug-dir DIR      also search DIR/.build-id (or DIR itself if it is a .build-id\n"
    "                         directory); may be repeated, searched in order\n"
    "    --debug-root DIR     system debug root holding .build-id (default: /usr/lib/debug;\n"
    "                         an empty string disables it)\n"
    "    --debuginfod URL     query these debuginfod servers (space-separated list),\n"
    "                         overriding DEBUGINFOD_URLS\n"
    "    --no-debuginfod      never query debuginfod\n"
    "    --kallsyms FILE      kernel symbols (default: /proc/kallsyms)\n"
    "    --format FMT         table (default) or pprof\n"
    "    -o, --output FILE    with --format pprof: write a gzip-compressed profile.proto;\n"
    "                         mappings carry build IDs so that pprof, Pyroscope or Parca can\n"
    "                         symbolize what is left unsymbolized\n"
    "    -h, --help           this text\n"
    "\n"
    "ENVIRONMENT\n"
    "    DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT: see debuginfod-find(1).\n"
    "\n"
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  the output cannot be written, or debuginfod cannot be set up\n"
    "    2  bad command line\n"
    "    3  the input is missing, cannot be read or is corrupt (the message names the\n"
    "       field and the file offset)\n";

}  // namespace

int pbid_cmd_report(int argc, char** argv) {
  std::string input = "perf.data", format = "table", output;
  pbid::ReportOptions opts;
  bool debuginfod_url_given = false;
  auto take_sort = [&](const char* v) {
    auto keys = pbid::ParseSortKeys(v);
    if (!keys.ok())
      return keys.error().ToString();
    opts.sort_keys = *keys;
    return std::string();
  };
  auto take_debug_dir = [&](const char* v) {
    opts.symbolizer.debug_dirs.push_back(v);
    return std::string();
  };
  auto take_debuginfod = [&](const char* v) {
    opts.symbolizer.debuginfod_urls = v;
    debuginfod_url_given = true;
    return std::string();
  };
  auto take_no_debuginfod = [&](const char*) {
    opts.symbolizer.use_debuginfod = false;
    return std::string();
  };
  int code = ParseCommandLine(
      "report", kHelp,
      {
          {"input", 'i', ArgKind::kRequired, Store(&input)},
          // Accepted for perf habits: text is the only interface.
          {"stdio", 0, ArgKind::kNone, [](const char*) { return std::string(); }},
          {"sort", 's', ArgKind::kRequired, take_sort},
          {"debug-dir", 0, ArgKind::kRequired, take_debug_dir},
          {"debug-root", 0, ArgKind::kRequired, Store(&opts.symbolizer.build_id_root)},
          {"debuginfod", 0, ArgKind::kRequired, take_debuginfod},
          {"no-debuginfod", 0, ArgKind::kNone, take_no_debuginfod},
          {"kallsyms", 0, ArgKind::kRequired, Store(&opts.kallsyms_path)},
          {"format", 0, ArgKind::kRequired, Store(&format)},
          {"output", 'o', ArgKind::kRequired, Store(&output)},
      },
      argc, argv, nullptr);
  if (code != kParsed)
    return code;
  if (debuginfod_url_given && !opts.symbolizer.use_debuginfod)
    return UsageError("report", "--debuginfod and --no-debuginfod exclude each other");
  if (format != "table" && format != "pprof")
    return UsageError("report", "--format must be table or pprof, not '" + format + "'");
  if (format == "pprof" && output.empty())
    return UsageError("report", "--format pprof needs -o FILE.pb.gz");
  if (format == "table" && !output.empty())
    return UsageError("report", "-o is only used with --format pprof");
  opts.want_pprof = format == "pprof";

  auto reader = pbid::cli::OpenInput(input);
  if (!reader.ok())
    return Fail("report", reader.error(), Stage::kInput, input);
  // A symbolizer that cannot be set up (debuginfod) is a failure, not a corrupt input.
  auto report = pbid::Report::Build(**reader, opts);
  if (!report.ok())
    return Fail("report", report.error(), Stage::kOperation, input);
  (*report)->PrintTable(stdout);
  (*report)->PrintCoverage(stdout);
  if (opts.want_pprof) {
    pbid::Status st = (*report)->WritePprof(output);
    if (!st.ok())
      return Fail("report", st.error(), Stage::kOperation);
    fprintf(stderr, "perf-buildid report: wrote pprof profile %s\n", output.c_str());
  }
  return pbid::cli::FinishOutput("report");
}
