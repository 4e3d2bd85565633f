// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid report: the command-line front end of pbid::Report.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "pbid/perf_data.h"
#include "pbid/render/flamegraph.h"
#include "pbid/render/report_view.h"
#include "pbid/symbolize/report.h"

namespace {

using pbid::cli::ArgKind;
using pbid::cli::Fail;
using pbid::cli::kParsed;
using pbid::cli::Option;
using pbid::cli::ParseCommandLine;
using pbid::cli::Stage;
using pbid::cli::Store;
using pbid::cli::SymbolizerOptionList;
using pbid::cli::SymbolizerOptionsConflict;
using pbid::cli::UsageError;

const char kHelp[] =
    "NAME\n"
    "    perf-buildid report - symbolize a recording by build ID; table, coverage, pprof\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid report [-i FILE] [--stdio] [-s|--sort KEYS] [--children|--no-children]\n"
    "                        [-g|--call-graph[=SPEC]] [--percent-limit PCT] [--comms LIST]\n"
    "                        [--inline|--no-inline]\n"
    "                        [--debug-dir DIR]... [--debuginfod URL | --no-debuginfod]\n"
    "                        [--debuginfod-budget SECONDS] [--debug-root DIR]\n"
    "                        [--kallsyms FILE]\n"
    "                        [--format table|folded|flamegraph|pprof [-o FILE]]\n"
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
    "         lacks is asked for once per run. The modules with samples are asked for at\n"
    "         once, a few at a time, within --debuginfod-budget; after a server error or\n"
    "         timeout the servers are not asked again, and the coverage summary counts\n"
    "         what was skipped and why.\n"
    "    Kernel samples are named from kallsyms when it is readable and belongs to the\n"
    "    recorded kernel (the running kernel's with the same kernel build ID or release, or\n"
    "    a copy kept under the recorded build ID); else they show as [kernel].\n"
    "\n"
    "    Output: a table like perf report --stdio (overhead, samples, then the sort keys),\n"
    "    with perf's numbers: on a recording with callchains, by default the children view\n"
    "    (each entry's share of the samples whose stack holds it, and its self share) with\n"
    "    the call graph under each entry; then a coverage summary: the share of samples\n"
    "    whose mapping had a build ID, by where the ID came from (kernel MMAP2 record,\n"
    "    synthesized MMAP2, file fallback via the build-ID table, none), and how many\n"
    "    modules were symbolized from each place. A recording with DWARF call graphs\n"
    "    (--call-graph dwarf) has each sample's user stack unwound with the ELF found by\n"
    "    build ID; the summary says where each unwinding stopped.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE     perf.data file to read (default: perf.data); - reads a\n"
    "                         pipe-mode stream from stdin (perf record -o -)\n"
    "    --stdio              text output (the only interface; accepted for perf habits)\n"
    "    -s, --sort KEYS      comma-separated: comm, pid, dso, sym (default: dso,sym)\n"
    "    --children           each entry also gets the period of the samples whose stack\n"
    "                         holds it (the default on files with callchains, as in perf)\n"
    "    --no-children        the period of the samples in the entry itself only\n"
    "    -g, --call-graph[=SPEC]\n"
    "                         perf's call-graph display: a comma-separated list, in any\n"
    "                         order, of a mode (graph: percentages of all samples, the\n"
    "                         default; fractal: of the parent branch; flat; folded; none),\n"
    "                         a threshold in percent (0.5) and after it a print limit,\n"
    "                         and an order (caller: from the entry to what it calls, the\n"
    "                         default with --children; callee: from the entry to its\n"
    "                         callers, the default without); function and percent are\n"
    "                         accepted. -g folded and --call-graph folded work as in perf\n"
    "    --percent-limit PCT  hide entries below PCT percent (children with --children);\n"
    "                         also the call graph's threshold, as in perf\n"
    "    --comms LIST         only the samples of these commands (comma-separated) make\n"
    "                         entries; percentages stay of all samples, as in perf\n"
    "    --inline             show inlined functions as frames of their own in call\n"
    "                         graphs and folded stacks (perf's default; costs a DWARF walk\n"
    "                         per address)\n"
    "    --no-inline          do not (the default)\n" PBID_CLI_SYMBOLIZER_OPTIONS
    "    --kallsyms FILE      kernel symbols (default: /proc/kallsyms for the running kernel;\n"
    "                         for another, the copy kept for the recorded kernel build ID in\n"
    "                         a .build-id directory searched, xx/yyyy/kallsyms as in perf's\n"
    "                         build-ID cache: --debug-dir ~/.debug finds perf's)\n"
    "    --format FMT         table (default), folded, flamegraph or pprof\n"
    "                         folded: one line per stack, command;root;...;leaf COUNT, as\n"
    "                         flamegraph.pl, inferno and speedscope read (standard output,\n"
    "                         or -o FILE)\n"
    "                         flamegraph: one self-contained interactive SVG (hover, click\n"
    "                         to zoom, search), frames coloured by kind (kernel, user,\n"
    "                         unsymbolized, no build ID); needs -o FILE.svg\n"
    "    -o, --output FILE    with --format pprof: write a gzip-compressed profile.proto;\n"
    "                         mappings carry build IDs so that pprof, Pyroscope or Parca can\n"
    "                         symbolize what is left unsymbolized\n"
    "    -h, --help           this text\n"
    "\n"
    "ENVIRONMENT\n"
    "    DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT (per connection),\n"
    "    DEBUGINFOD_MAXTIME (per download): see debuginfod-find(1).\n"
    "\n"
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  the output cannot be written, or debuginfod cannot be set up\n"
    "    2  bad command line\n"
    "    3  the input is missing, cannot be read or is corrupt (the message names the\n"
    "       field and the file offset)\n";

// perf reads a word after -g or --call-graph as its value when it is one ("-g folded",
// "--call-graph caller"); getopt takes an optional value only when attached. The word is
// attached here, so both spellings reach the parser as one.
std::vector<std::string> AttachCallGraphValues(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    if ((a == "-g" || a == "--call-graph") && i + 1 < argc && argv[i + 1][0] != '-' &&
        pbid::render::ParseCallGraph(argv[i + 1], {}).ok()) {
      args.push_back(a == "-g" ? "-g" + std::string(argv[i + 1])
                               : "--call-graph=" + std::string(argv[i + 1]));
      i++;
      continue;
    }
    args.push_back(a);
  }
  return args;
}

// Writes through `write` to `path`, or to standard output for "" and "-". A write that fails
// (full disk) is an error naming the file, not a short file.
template <typename F>
pbid::Status WriteTo(const std::string& path, F write) {
  if (path.empty() || path == "-") {
    write(stdout);
    return pbid::Ok();
  }
  FILE* out = fopen(path.c_str(), "we");
  if (out == nullptr)
    return pbid::Error::Sys(path, errno, "cannot create");
  write(out);
  bool failed = ferror(out) != 0;
  int err = errno;
  if (fclose(out) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (failed)
    return pbid::Error::Sys(path, err, "cannot write");
  return pbid::Ok();
}

}  // namespace

int pbid_cmd_report(int argc, char** argv) {
  std::string input = "perf.data", format = "table", output;
  pbid::ReportOptions opts;
  pbid::render::ViewOptions view;
  bool debuginfod_url_given = false, inline_given = false;
  auto take_sort = [&](const char* v) {
    auto keys = pbid::render::ParseSortKeys(v);
    if (!keys.ok())
      return keys.error().ToString();
    view.sort_keys = *keys;
    return std::string();
  };
  auto take_call_graph = [&](const char* v) {
    if (v == nullptr) {
      view.call_graph.mode = pbid::render::GraphMode::kGraph;
      return std::string();
    }
    auto cg = pbid::render::ParseCallGraph(v, view.call_graph);
    if (!cg.ok())
      return cg.error().ToString();
    view.call_graph = *cg;
    return std::string();
  };
  auto take_percent_limit = [&](const char* v) {
    char* end = nullptr;
    double pct = strtod(v, &end);
    if (end == v || *end != '\0' || pct < 0 || pct > 100)
      return std::string("--percent-limit: '") + v + "' is not a percentage from 0 to 100";
    // As perf: the limit is also the call graph's threshold.
    view.percent_limit = pct;
    view.call_graph.threshold = pct;
    return std::string();
  };
  auto take_comms = [&](const char* v) {
    std::string list = v;
    for (size_t pos = 0; pos <= list.size();) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos)
        comma = list.size();
      if (comma > pos)
        view.comms.push_back(list.substr(pos, comma - pos));
      pos = comma + 1;
    }
    return std::string();
  };
  auto take_children = [&](bool on) {
    return [&view, on](const char*) {
      view.children = on;
      return std::string();
    };
  };
  auto take_inline = [&](bool on) {
    return [&opts, &inline_given, on](const char*) {
      opts.inline_frames = on;
      inline_given = true;
      return std::string();
    };
  };
  std::vector<std::string> args = AttachCallGraphValues(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args)
    arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  std::vector<Option> options = {
      {"input", 'i', ArgKind::kRequired, Store(&input)},
      // Accepted for perf habits: text is the only interface.
      {"stdio", 0, ArgKind::kNone, [](const char*) { return std::string(); }},
      {"sort", 's', ArgKind::kRequired, take_sort},
      {"children", 0, ArgKind::kNone, take_children(true)},
      {"no-children", 0, ArgKind::kNone, take_children(false)},
      {"call-graph", 'g', ArgKind::kOptional, take_call_graph},
      {"percent-limit", 0, ArgKind::kRequired, take_percent_limit},
      {"comms", 0, ArgKind::kRequired, take_comms},
      {"inline", 0, ArgKind::kNone, take_inline(true)},
      {"no-inline", 0, ArgKind::kNone, take_inline(false)},
      {"kallsyms", 0, ArgKind::kRequired, Store(&opts.kallsyms_path)},
      {"format", 0, ArgKind::kRequired, Store(&format)},
      {"output", 'o', ArgKind::kRequired, Store(&output)},
  };
  for (Option& o : SymbolizerOptionList(&opts.symbolizer, &debuginfod_url_given))
    options.push_back(std::move(o));
  int code = ParseCommandLine("report", kHelp, std::move(options), static_cast<int>(args.size()),
                              arg_ptrs.data(), nullptr);
  if (code == kParsed)
    code = SymbolizerOptionsConflict("report", opts.symbolizer, debuginfod_url_given);
  if (code != kParsed)
    return code;
  (void)inline_given;
  if (format != "table" && format != "pprof" && format != "folded" && format != "flamegraph") {
    return UsageError("report",
                      "--format must be table, folded, flamegraph or pprof, not '" + format + "'");
  }
  if ((format == "pprof" || format == "flamegraph") && output.empty())
    return UsageError("report", "--format " + format + " needs -o FILE");
  if (format == "table" && !output.empty())
    return UsageError("report", "-o is only used with --format pprof, folded or flamegraph");
  opts.want_pprof = format == "pprof";
  // The flat table reads no callchain, as perf with -g none does not.
  opts.callchains = format != "table" || view.call_graph.mode != pbid::render::GraphMode::kNone ||
                    view.children.value_or(false);

  // What the views show decides what the profile keeps apart.
  auto sorted_by = [&](pbid::render::SortKey k) {
    return std::find(view.sort_keys.begin(), view.sort_keys.end(), k) != view.sort_keys.end();
  };
  opts.keep_pid = sorted_by(pbid::render::SortKey::kPid);
  opts.keep_comm = format != "table" || opts.keep_pid || !view.comms.empty() ||
                   sorted_by(pbid::render::SortKey::kComm);

  auto reader = pbid::cli::OpenInput(input);
  if (!reader.ok())
    return Fail("report", reader.error(), Stage::kInput, input);
  // A symbolizer that cannot be set up (debuginfod) is a failure, not a corrupt input.
  auto report = pbid::Report::Build(**reader, opts);
  if (!report.ok())
    return Fail("report", report.error(), Stage::kOperation, input);
  const pbid::Report& rep = **report;
  if (format == "folded" || format == "flamegraph") {
    pbid::Status st = WriteTo(output, [&](FILE* out) {
      if (format == "folded") {
        pbid::render::WriteFolded(rep.profile(), out);
        return;
      }
      std::string svg =
          pbid::render::FlameGraphSvg(pbid::render::FlameStacks(rep.profile()),
                                      pbid::render::FlameOptionsFor(rep.profile(), input));
      fwrite(svg.data(), 1, svg.size(), out);
    });
    if (!st.ok())
      return Fail("report", st.error(), Stage::kOperation);
    if (!output.empty() && output != "-")
      fprintf(stderr, "perf-buildid report: wrote %s %s\n", format.c_str(), output.c_str());
    return pbid::cli::FinishOutput("report");
  }
  pbid::render::WriteReport(rep.profile(), rep.coverage(), view, stdout);
  pbid::render::WriteCoverage(rep.coverage(), rep.symbol_coverage(), stdout);
  if (opts.want_pprof) {
    pbid::Status st = rep.WritePprof(output);
    if (!st.ok())
      return Fail("report", st.error(), Stage::kOperation);
    fprintf(stderr, "perf-buildid report: wrote pprof profile %s\n", output.c_str());
  }
  return pbid::cli::FinishOutput("report");
}
