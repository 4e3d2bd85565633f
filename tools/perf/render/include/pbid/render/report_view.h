// SPDX-License-Identifier: GPL-2.0
//
// `perf report --stdio`'s views of a Profile, with perf's semantics: the flat table (self), the
// children view (each entry's share of the samples whose stack contains it), and the call graph
// under each entry in perf's output modes (graph, fractal, flat, folded), caller or callee
// order, with perf's percent threshold. The numbers are perf's; the layout follows perf's so
// that what a perf user reads, and parses, reads the same here.
#ifndef PBID_RENDER_REPORT_VIEW_H_
#define PBID_RENDER_REPORT_VIEW_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pbid/render/flamegraph.h"
#include "pbid/result.h"
#include "pbid/symbolize/profile.h"
#include "pbid/symbolize/report.h"

namespace pbid::render {

// The columns of the table, as perf report's --sort keys.
enum class SortKey { kComm, kPid, kDso, kSym };

// Parses "dso,sym"-style lists; an error names the unknown key.
Result<std::vector<SortKey>> ParseSortKeys(const std::string& list);

enum class GraphMode { kGraph, kFractal, kFlat, kFolded, kNone };
enum class GraphOrder { kCaller, kCallee };

struct CallGraphOptions {
  GraphMode mode = GraphMode::kGraph;
  double threshold = 0.5;    // percent: branches below it are not shown
  unsigned print_limit = 0;  // graph entries per hist entry, 0 unlimited
  // perf's default: caller with the children view, callee without it.
  std::optional<GraphOrder> order;
};

// perf's -g/--call-graph argument: "graph,0.5,caller", in any order, the print limit after the
// threshold; "function" and "percent" are accepted (the only key and value shown here). An
// error names the part that is not understood.
Result<CallGraphOptions> ParseCallGraph(const std::string& spec, CallGraphOptions base);

struct ViewOptions {
  std::vector<SortKey> sort_keys = {SortKey::kDso, SortKey::kSym};
  // The children view; perf's default when the file has callchains.
  std::optional<bool> children;
  CallGraphOptions call_graph;
  double percent_limit = 0;  // entries below it are not shown (and it is the graph threshold)
  // perf's --comms: only these commands' samples make entries; percentages stay of all samples.
  std::vector<std::string> comms;
};

// The whole `report --stdio` text for every event of the profile.
void WriteReport(const Profile& profile, const SampleCoverage& coverage, const ViewOptions& options,
                 FILE* out);

// The build-ID coverage summary that follows the table.
void WriteCoverage(const SampleCoverage& coverage, const SymbolizerCoverage& symbols, FILE* out);

// Folded stacks, one line per distinct stack of the first event with samples: the command, then
// the frames from the root to the leaf, separated by ';', then a space and the sample count,
// as flamegraph.pl, inferno and speedscope read them.
void WriteFolded(const Profile& profile, FILE* out);

// The same stacks for a flame graph: the command as the outermost frame, the samples as weight.
std::vector<FlameStack> FlameStacks(const Profile& profile);
// Its title and subtitle: the event and the file.
FlameGraphOptions FlameOptionsFor(const Profile& profile, const std::string& input);

}  // namespace pbid::render

#endif  // PBID_RENDER_REPORT_VIEW_H_
