// SPDX-License-Identifier: GPL-2.0
//
// report with its symbolizer: samples resolved through mappings to files named in the input
// (opened only when regular, never blocking), kernel symbols, the table and the coverage.
// debuginfod stays off: no network from a fuzzer.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pbid/perf_data.h"
#include "pbid/render/flamegraph.h"
#include "pbid/render/report_view.h"
#include "pbid/symbolize/report.h"

namespace {

// A few kernel symbols instead of /proc/kallsyms, whose 100,000 lines would be read for every
// input.
const std::string& Kallsyms() {
  static const char kSyms[] =
      "ffffffff81000000 T _text\n"
      "ffffffff81000100 T kfunc_alpha\n"
      "ffffffff81000200 t kfunc_beta\n"
      "ffffffff81001000 T _etext\n"
      "ffffffffc0000000 t mod_func\t[mod]\n";
  static pbid::fuzz::InputFile file;
  static const std::string path =
      file.Write(reinterpret_cast<const uint8_t*>(kSyms), sizeof(kSyms) - 1);
  return path;
}

}  // namespace

// The path craft-fifo.data records: a FIFO there must neither block nor be read.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mkfifo("/tmp/pbid-fuzz.fifo", 0600);  // EEXIST is fine
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = pbid::PerfDataReader::FromBytes(std::vector<uint8_t>(data, data + size));
  if (!r.ok())
    return 0;
  pbid::ReportOptions opts;
  opts.symbolizer.use_debuginfod = false;
  opts.symbolizer.build_id_root = "";
  opts.kallsyms_path = Kallsyms();
  auto report = pbid::Report::Build(**r, opts);
  if (!report.ok()) {
    (void)report.error().ToString();
    return 0;
  }
  static FILE* null_out = fopen("/dev/null", "we");
  // Every view: the children view with its call graph (the default), the flat table, folded
  // stacks and the flame graph.
  pbid::render::ViewOptions view;
  view.sort_keys = {pbid::render::SortKey::kComm, pbid::render::SortKey::kPid,
                    pbid::render::SortKey::kDso, pbid::render::SortKey::kSym};
  pbid::render::WriteReport((*report)->profile(), (*report)->coverage(), view, null_out);
  view.children = false;
  view.call_graph.mode = pbid::render::GraphMode::kFolded;
  pbid::render::WriteReport((*report)->profile(), (*report)->coverage(), view, null_out);
  pbid::render::WriteCoverage((*report)->coverage(), (*report)->symbol_coverage(), null_out);
  pbid::render::WriteFolded((*report)->profile(), null_out);
  (void)pbid::render::FlameGraphSvg(pbid::render::FlameStacks((*report)->profile()), {});
  return 0;
}
