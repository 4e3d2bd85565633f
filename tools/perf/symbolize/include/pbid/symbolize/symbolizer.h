// SPDX-License-Identifier: GPL-2.0
//
// Symbolization by build ID. Given what a recording says about a mapping (its build ID and the
// path it had) and a file offset inside it, find the ELF and its debug file *by build ID* and
// name the function, file and line, inlined frames included (libdwfl).
//
// Files are looked up in this order, and every candidate's build ID is checked before use:
//   1. the recorded path, only if the file there still has the recorded build ID (a file with
//      another ID is counted as a mismatch and never used: it would give wrong symbols);
//   2. <build_id_root>/.build-id/xx/yyyy(.debug), /usr/lib/debug by default;
//   3. each debug dir, same layout;
//   4. debuginfod (libdebuginfod; DEBUGINFOD_URLS or an explicit URL), with a negative cache;
//   for "[vdso]", first the vDSO this process has from the running kernel, if its build ID is
//   the recorded one (the vDSO has no file; perf keeps a copy in its build-ID cache).
// An executable with DWARF needs nothing more; otherwise the debug file comes from the first
// place that has it. Turning a file offset into an address needs the executable's program
// headers (a --only-keep-debug file has no valid p_offset), so the executable is searched for
// in the same places when the recorded path does not match.
#ifndef PBID_SYMBOLIZE_SYMBOLIZER_H_
#define PBID_SYMBOLIZE_SYMBOLIZER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"
#include "pbid/result.h"

namespace pbid {

// Where a module's symbols came from. The coverage summary counts modules by this.
enum class SymbolSource : uint8_t {
  kNone = 0,     // nothing usable found
  kPath,         // the recorded path (its build ID matched)
  kBuildIdDir,   // <build_id_root>/.build-id
  kDebugDir,     // a --debug-dir
  kDebuginfod,   // a debuginfod server
  kRunningVdso,  // the vDSO of the kernel this runs on, when its build ID is the recorded one
};
const char* SymbolSourceName(SymbolSource s);  // "path", ".build-id", "debug-dir", ...

struct SymbolizerOptions {
  // The directory holding .build-id/ (the system one is /usr/lib/debug). Empty: skip step 2.
  std::string build_id_root = "/usr/lib/debug";
  // Each holds .build-id/xx/yyyy.debug (or is itself such a .build-id directory).
  std::vector<std::string> debug_dirs;
  bool use_debuginfod = true;
  // Space-separated server URLs. Empty: DEBUGINFOD_URLS from the environment.
  std::string debuginfod_urls;
  // The most time all debuginfod queries of this symbolizer take together; a transfer still
  // going at the deadline is aborted, and what is left is not asked for.
  double debuginfod_budget_seconds = 5;
};

// One source-level frame. For an address inside inlined code there are several, innermost
// first, the last being the real (out-of-line) function.
struct SourceFrame {
  std::string function;      // demangled when possible
  std::string linkage_name;  // mangled name, empty for C
  std::string file;          // empty without line info
  int line = 0;              // 0 without line info
  int function_line = 0;     // DW_AT_decl_line of the function, 0 if unknown
};

enum class SymbolizeStatus : uint8_t {
  kOk,               // frames filled
  kNoBuildId,        // the mapping had no build ID: nothing can be verified, nothing is used
  kNotFound,         // no file with this build ID anywhere (path mismatched or missing)
  kNoExecutable,     // only a debug-only file: offsets cannot be translated without the ELF
  kOffsetNotMapped,  // no PT_LOAD covers the offset
  kNoSymbol,         // the module was found but no symbol covers the address
};
const char* SymbolizeStatusName(SymbolizeStatus s);

struct Symbolization {
  SymbolizeStatus status = SymbolizeStatus::kNotFound;
  std::vector<SourceFrame> frames;  // innermost first; empty unless status == kOk
  uint64_t elf_vaddr = 0;           // the offset as an ELF virtual address, when known
  SymbolSource source = SymbolSource::kNone;
  bool has_lines = false;
  bool has_inline = false;
};

// How much a lookup names.
enum class SymbolDetail : uint8_t {
  kFull,      // every frame, inlined ones included, with files and lines
  kFunction,  // the out-of-line function only: one frame without file or line, named by the
              // ELF symbol that covers the address (as perf names functions), or by DWARF
              // where no symbol does; once DWARF named a function, any address in it is
              // named from its address ranges
};

// Per-run counters for the coverage summary. Counted per module (build ID), not per sample.
struct SymbolizerCoverage {
  // A module counts for its source once a lookup in it named something; kNone: found nowhere
  // or nothing named (e.g. a stripped binary without its debug file).
  std::map<SymbolSource, int> modules_by_source;
  int path_mismatches = 0;  // recorded path holds a file with another build ID
  int path_missing = 0;     // recorded path does not exist or is unreadable
  int debuginfod_queries = 0;
  std::string debuginfod_error;  // last server/network error, empty if none
  // Lookups not made or aborted (budget spent, servers failed), and why.
  int debuginfod_skipped = 0;
  std::string debuginfod_skip_reason;
};

struct LocatedModule;  // symbolize/debug_locator.h

class Symbolizer {
 public:
  static Result<std::unique_ptr<Symbolizer>> Create(const SymbolizerOptions& options);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // build_id may be empty (mapping without an ID): the result is then kNoBuildId. An error is
  // returned only when a file that has the right build ID turns out unreadable or corrupt.
  Result<Symbolization> SymbolizeOffset(const std::optional<BuildId>& build_id,
                                        const std::string& recorded_path, uint64_t file_offset,
                                        SymbolDetail detail = SymbolDetail::kFull);

  // A mapping without a GNU build ID, by its other identities: see the file comment. An empty
  // ids gives kNoBuildId, a file at the path with other identities kNotFound.
  Result<Symbolization> SymbolizeOffsetByFile(const FileIds& ids, const std::string& recorded_path,
                                              uint64_t file_offset,
                                              SymbolDetail detail = SymbolDetail::kFull);

  // The same for a sampled address in a mapping [start, ...) that maps file offset pgoff.
  Result<Symbolization> SymbolizeAddress(const std::optional<BuildId>& build_id,
                                         const std::string& recorded_path, uint64_t map_start,
                                         uint64_t pgoff, uint64_t ip) {
    return SymbolizeOffset(build_id, recorded_path, ip - map_start + pgoff);
  }

  // An ELF virtual address of the module, e.g. a kernel address in the vmlinux found by the
  // kernel's build ID (after removing the KASLR offset). Needs no executable.
  Result<Symbolization> SymbolizeVaddr(const std::optional<BuildId>& build_id,
                                       const std::string& recorded_path, uint64_t vaddr,
                                       SymbolDetail detail = SymbolDetail::kFull);

  // A kernel module's address, core_offset bytes from the start of its core (the address
  // /proc/modules gives), in the module's relocatable file (.ko) found by its build ID. The
  // kernel lays out a module's core with its code first: the executable sections but .init
  // ones, in file order, each aligned: layout_sections() in kernel/module.c, 5.10 to 6.3 on
  // x86_64 with CONFIG_MODULE_UNLOAD (without it, .exit sections leave the core); other
  // architectures and an offset past the code are kOffsetNotMapped. Names the function from the
  // symbol table (as perf does for modules): no source lines or inline frames.
  Result<Symbolization> SymbolizeKernelModule(const std::optional<BuildId>& build_id,
                                              const std::string& recorded_path,
                                              uint64_t core_offset);

  // The ELF virtual address of a symbol of the module (e.g. "_text"), std::nullopt when the
  // module or the symbol is not found.
  Result<std::optional<uint64_t>> SymbolAddress(const BuildId& id, const std::string& recorded_path,
                                                const std::string& name);

  // The executable of the module with this build ID (an ELF whose program headers describe
  // the file as mapped, e.g. for its unwind tables), found as SymbolizeOffset finds it, counted
  // alike: std::nullopt when there is none anywhere.
  std::optional<std::string> ExecutablePath(const BuildId& id, const std::string& recorded_path);

  // The copy of /proc/kallsyms kept for the kernel with this build ID in a .build-id directory
  // searched (perf's build-ID cache layout, xx/yyyy/kallsyms), or none.
  std::optional<std::string> KallsymsCopy(const BuildId& id) const;

  // True when lookups may ask debuginfod servers: worth a Prefetch.
  bool UsesDebuginfod() const;
  // Asks debuginfod at once, concurrently and within the budget, for what the local places
  // lack for these modules (build ID, recorded path): the lookups that follow find the
  // answers waiting instead of asking one at a time. A lookup not prefetched still asks, within
  // what is left of the budget.
  void Prefetch(const std::vector<std::pair<BuildId, std::string>>& modules);

  // Where the module for this build ID was found (kNone before any lookup or if nowhere).
  SymbolSource SourceOf(const BuildId& id) const;

  SymbolizerCoverage Coverage() const;

 private:
  struct Module;
  explicit Symbolizer(const SymbolizerOptions& options);
  Module& GetModule(const BuildId& id, const std::string& recorded_path);
  void CountLocated(const LocatedModule& loc);
  static void OpenModule(Module& mod, const LocatedModule& loc);
  Module* UsableModule(const std::optional<BuildId>& build_id, const std::string& recorded_path,
                       Symbolization* r);
  Result<Symbolization> Describe(Module& mod, uint64_t vaddr, const std::string& recorded_path,
                                 Symbolization r, SymbolDetail detail);
  Result<Symbolization> DescribeOffset(Module& mod, uint64_t file_offset,
                                       const std::string& recorded_path, Symbolization r,
                                       SymbolDetail detail);

  SymbolizerOptions options_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_SYMBOLIZER_H_
