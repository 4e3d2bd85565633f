// SPDX-License-Identifier: GPL-2.0
//
// `perf-buildid report`: turns a perf.data file into a perf-like table (overhead, samples,
// dso, symbol), a build-ID coverage summary and, optionally, a pprof profile. Samples are
// mapped to (mapping, file offset) with the MMAP/MMAP2 records, then symbolized by build ID.
#ifndef PBID_SYMBOLIZE_REPORT_H_
#define PBID_SYMBOLIZE_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pbid/result.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid {

class PerfDataReader;

// The columns of the table, as perf report's --sort keys.
enum class SortKey { kComm, kPid, kDso, kSym };

struct ReportOptions {
  SymbolizerOptions symbolizer;
  std::vector<SortKey> sort_keys = {SortKey::kDso, SortKey::kSym};
  std::string kallsyms_path = "/proc/kallsyms";
  bool want_pprof = false;
};

// Parses "dso,sym"-style lists; an error names the unknown key.
Result<std::vector<SortKey>> ParseSortKeys(const std::string& list);

// How many samples fell in mappings whose build ID came from each source.
struct SampleCoverage {
  uint64_t total = 0;
  uint64_t kernel_record = 0;  // MMAP2 with the build ID from the kernel
  uint64_t synthesized = 0;    // MMAP2 synthesized by the recorder for running processes
  uint64_t file = 0;           // ID only in the build-ID table (read from the file)
  uint64_t bpf = 0;            // ID from the recorder's BPF program (read at sample time)
  uint64_t none = 0;           // mapping without any build ID
  uint64_t kernel = 0;         // kernel-mode samples
  uint64_t unmapped = 0;       // user ip outside every known mapping
  uint64_t lost = 0;           // PERF_RECORD_LOST_SAMPLES total, as perf's Total Lost Samples
  bool kallsyms_used = false;
  std::string kallsyms_note;  // why kernel symbols are (not) shown
};

class Report {
 public:
  // Reads every record; bad records give an error naming the record's offset.
  static Result<std::unique_ptr<Report>> Build(const PerfDataReader& reader,
                                               const ReportOptions& options);
  ~Report();

  void PrintTable(FILE* out) const;
  void PrintCoverage(FILE* out) const;
  Status WritePprof(const std::string& path) const;  // needs options.want_pprof

  const SampleCoverage& coverage() const { return coverage_; }
  const SymbolizerCoverage& symbol_coverage() const { return symbol_coverage_; }

 private:
  Report() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  SampleCoverage coverage_;
  SymbolizerCoverage symbol_coverage_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_REPORT_H_
