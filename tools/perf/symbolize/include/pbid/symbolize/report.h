// SPDX-License-Identifier: GPL-2.0
//
// `perf-buildid report`'s library: turns a perf.data file into a Profile (every sample's
// stack, symbolized), a build-ID coverage summary and, optionally, a pprof profile. Samples are
// mapped to (mapping, file offset) with the MMAP/MMAP2 records, then symbolized by build ID.
#ifndef PBID_SYMBOLIZE_REPORT_H_
#define PBID_SYMBOLIZE_REPORT_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pbid/result.h"
#include "pbid/symbolize/profile.h"
#include "pbid/symbolize/symbolizer.h"
#include "pbid/symbolize/unwinder.h"

namespace pbid {

class PerfDataReader;

struct ReportOptions {
  SymbolizerOptions symbolizer;
  // Empty: the copy kept for the recorded kernel in a .build-id directory searched, else
  // /proc/kallsyms (KernelSymbols).
  std::string kallsyms_path;
  bool want_pprof = false;
  // Read every callchain frame. Off, only the sample's own address is named, as perf does
  // with -g none: the flat table needs no more.
  bool callchains = true;
  // Inlined code as frames of its own, innermost first (perf report --inline).
  bool inline_frames = false;
  // Keep stacks apart by process and by command. A view that shows neither (a table sorted
  // by dso and sym) aggregates more and keeps less without them: pid 0 and an empty command.
  bool keep_pid = true;
  bool keep_comm = true;
};

// How many samples fell in mappings whose build ID came from each source.
struct SampleCoverage {
  uint64_t total = 0;
  uint64_t kernel_record = 0;   // MMAP2 with the build ID from the kernel
  uint64_t synthesized = 0;     // MMAP2 synthesized by the recorder for running processes
  uint64_t file = 0;            // ID only in the build-ID table (read from the file)
  uint64_t bpf = 0;             // ID from the recorder's BPF program (read at sample time)
  uint64_t go_build_id = 0;     // no GNU build ID, identified by its Go build ID
  uint64_t file_hash_only = 0;  // no GNU or Go build ID, identified by its file hash only
  uint64_t none = 0;            // mapping without any build ID or other identity
  uint64_t kernel = 0;          // kernel-mode samples
  uint64_t unmapped = 0;        // user ip outside every known mapping
  uint64_t lost = 0;            // PERF_RECORD_LOST_SAMPLES total, as perf's Total Lost Samples
  // DWARF call graphs: samples whose user stack was unwound, and where each unwinding stopped
  // (indexed by UnwindStop: complete, no CFI, no ELF for the build ID, stack copy too short,
  // other).
  uint64_t unwound = 0;
  std::array<uint64_t, kUnwindStops> unwind_stops{};
  bool kallsyms_used = false;
  std::string kallsyms_note;  // why kernel symbols are (not) shown
};

class Report {
 public:
  // Reads every record; bad records give an error naming the record's offset.
  static Result<std::unique_ptr<Report>> Build(const PerfDataReader& reader,
                                               const ReportOptions& options);
  ~Report();

  // The samples, symbolized and aggregated by stack: what every view is drawn from.
  const Profile& profile() const;
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
