// SPDX-License-Identifier: GPL-2.0
//
// Names for kernel addresses of a recording, trusted only for the kernel that was recorded:
//   1. kallsyms: the running kernel's, when its build ID (or, without one in the file, its
//      release) is the recorded kernel's; else, as perf does, the copy kept for the recorded
//      kernel build ID in a .build-id directory searched (perf's build-ID cache keeps one,
//      xx/yyyy/kallsyms). A copy names no module (it does not say which boot it was taken in).
//      The recording may come from an earlier boot of that
//      kernel, which KASLR put elsewhere: kallsyms' addresses are moved by the distance between
//      the symbol the kernel mapping is named after in kallsyms and in the recording, as perf
//      moves them. Modules load elsewhere from boot to boot: one is named from kallsyms only
//      when the running kernel has it where, and with the build ID, the recording had it;
//   2. otherwise the vmlinux with the recorded kernel's build ID, found by the symbolizer's
//      lookup chain, once the KASLR offset is known: the distance between the kernel mapping's
//      start and the symbol the mapping is named after ("_text" for "[kernel.kallsyms]_text");
//      and a module's address ("[name]" mappings) from its .ko, found by the module's build ID.
// Without either, kernel addresses stay unnamed: a wrong kernel's names would be worse.
#ifndef PBID_SYMBOLIZE_KERNEL_SYMBOLS_H_
#define PBID_SYMBOLIZE_KERNEL_SYMBOLS_H_

#include <cstdint>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/proc_maps.h"
#include "pbid/symbolize/kallsyms.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid {

class PerfDataReader;
struct Mapping;

class KernelSymbols {
 public:
  // symbolizer must outlive this object. kallsyms_path empty: the kept copy for the recorded
  // kernel, else /proc/kallsyms.
  KernelSymbols(const PerfDataReader& reader, Symbolizer& symbolizer, std::string kallsyms_path);

  struct Named {
    std::string module;               // "" for the core kernel, else the module's name
    std::vector<SourceFrame> frames;  // innermost first; empty when nothing named the address
  };

  // Starts reading the kallsyms file the first Lookup is likely to want (the one given, else
  // /proc/kallsyms) on a thread of its own: some 35 ms of the kernel formatting 120,000
  // symbols, which a report that names kernel addresses after its replay spends beside the
  // replay. Lookup takes the table from there. Without a thread, Lookup reads it itself.
  void Prefetch();

  // Names ip. kernel_map is the kernel mapping that holds ip (nullptr when none is known). The
  // source is decided at the first call, when the recorded kernel's mapping is known.
  Named Lookup(const Mapping* kernel_map, uint64_t ip, SymbolDetail detail);

  bool kallsyms_used() const { return kallsyms_.has_value(); }
  // Why kernel symbols are, or are not, shown: for the coverage summary.
  const std::string& note() const { return note_; }

 private:
  static bool IsModule(const Mapping& km);
  static std::string ModuleName(const std::string& path);
  void Decide(const Mapping* kernel_map);
  // The given kallsyms file, else /proc/kallsyms.
  std::string KallsymsPath() const {
    return kallsyms_path_.empty() ? "/proc/kallsyms" : kallsyms_path_;
  }
  // KallsymsPath()'s table: as Prefetch read it, or read now.
  Result<Kallsyms> LoadKallsyms();
  std::optional<int64_t> KaslrShift(const Mapping& km);
  static bool IsHostImage(const Mapping& km);
  // What to add to a recorded address of the kernel image to find it in kallsyms: the running
  // boot's KASLR offset less the recorded boot's, from the image's mapping km.
  int64_t KallsymsDelta(const Mapping& km);
  bool ModuleAsRecorded(const Mapping& km);

  const PerfDataReader& reader_;
  Symbolizer& symbolizer_;
  std::string kallsyms_path_;
  bool decided_ = false;
  std::optional<Kallsyms> kallsyms_;
  std::future<Result<Kallsyms>> prefetched_;  // valid from Prefetch until LoadKallsyms
  bool from_copy_ = false;                 // kallsyms_ is a kept copy, not the running kernel's
  std::optional<int64_t> kallsyms_delta_;  // known once the image's mapping was looked up in
  std::map<std::string, bool> module_as_recorded_;            // by "name@start"
  std::optional<std::vector<KernelModule>> running_modules_;  // /proc/modules, once read
  std::map<BuildId, std::optional<int64_t>> shift_;           // KASLR offset per kernel build ID
  bool vmlinux_noted_ = false;
  std::string note_ = "no kernel samples";
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_KERNEL_SYMBOLS_H_
