// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "debug_locator.h"
#include "elf_file.h"
#include "pbid/elf_build_id.h"
#include "symbol_stretches.h"

namespace pbid {

const char* SymbolSourceName(SymbolSource s) {
  switch (s) {
    case SymbolSource::kNone: return "none";
    case SymbolSource::kPath: return "path";
    case SymbolSource::kBuildIdDir: return ".build-id dir";
    case SymbolSource::kDebugDir: return "debug-dir";
    case SymbolSource::kDebuginfod: return "debuginfod";
    case SymbolSource::kRunningVdso: return "running vdso";
  }
  return "none";
}

const char* SymbolizeStatusName(SymbolizeStatus s) {
  switch (s) {
    case SymbolizeStatus::kOk: return "ok";
    case SymbolizeStatus::kNoBuildId: return "no build id";
    case SymbolizeStatus::kNotFound: return "no file with this build id";
    case SymbolizeStatus::kNoExecutable: return "debug file only, executable not found";
    case SymbolizeStatus::kOffsetNotMapped: return "offset outside every PT_LOAD";
    case SymbolizeStatus::kNoSymbol: return "no symbol at address";
  }
  return "?";
}

namespace {

std::string Demangle(const char* name) {
  if (name == nullptr)
    return "";
  if (name[0] != '_' || name[1] != 'Z')
    return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (d == nullptr || status != 0) {
    free(d);
    return name;
  }
  std::string s(d);
  free(d);
  return s;
}

// A demangled name without its return type and parameters, as perf shows C++ functions
// ("ns::f<int>", not "void ns::f<int>(int) const"): what is outside the name at its top level.
std::string WithoutSignature(const std::string& d) {
  int angle = 0, paren = 0;
  size_t name_start = 0, params = std::string::npos;
  for (size_t i = 0; i < d.size(); i++) {
    char c = d[i];
    // "operator<", "operator()" and the like are names, not brackets.
    if (d.compare(i, 8, "operator") == 0) {
      size_t j = i + 8;
      while (j < d.size() && (d[j] == '<' || d[j] == '>' || d[j] == '(' || d[j] == ')' ||
                              d[j] == '=' || d[j] == '-'))
        j++;
      i = j - 1;
      continue;
    }
    if (c == '<') {
      angle++;
    } else if (c == '>') {
      angle--;
    } else if (c == '(') {
      // "(anonymous namespace)" is part of the name.
      if (paren == 0 && angle == 0 && d.compare(i, 21, "(anonymous namespace)") != 0)
        params = i;
      paren++;
    } else if (c == ')') {
      paren--;
    } else if (c == ' ' && angle == 0 && paren == 0 && params == std::string::npos) {
      name_start = i + 1;
    }
  }
  if (params == std::string::npos || angle != 0 || paren != 0)
    return d;
  return d.substr(name_start, params - name_start);
}

// libdwfl asks this for the debug file of a module; the path was chosen (and its build ID
// verified) by DebugLocator, and stored in the module's userdata slot.
int FindDebuginfo(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                  GElf_Word, char** debuginfo_file_name) {
  const auto* path = static_cast<const std::string*>(*userdata);
  if (path == nullptr || path->empty())
    return -1;
  auto fd = OpenRegularFile(*path);
  if (!fd.ok())
    return -1;
  *debuginfo_file_name = strdup(path->c_str());
  return *fd;
}

// Never called: every module is reported with an open descriptor.
int FindElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}

const Dwfl_Callbacks kCallbacks = {
    FindElf,
    FindDebuginfo,
    dwfl_offline_section_address,
    nullptr,
};

std::string DieName(Dwarf_Die* die, std::string* linkage) {
  Dwarf_Attribute attr;
  const char* link = nullptr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != nullptr ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != nullptr) {
    link = dwarf_formstring(&attr);
  }
  if (link != nullptr) {
    if (linkage != nullptr)
      *linkage = link;
    return Demangle(link);
  }
  const char* name = nullptr;
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr)
    name = dwarf_formstring(&attr);
  return name != nullptr ? name : "";
}

// True when a subprogram is defined inside die (a nested function): its addresses would be
// named after it, not after die.
bool DefinesSubprogram(Dwarf_Die* die) {
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0)
    return false;
  do {
    if (dwarf_tag(&child) == DW_TAG_subprogram || DefinesSubprogram(&child))
      return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// A function's address range (module addresses) and its frame, without file and line.
struct FunctionRange {
  Dwarf_Addr end;
  Dwarf_Off cu;  // the compilation unit's DIE offset: an address must be in the same one
  SourceFrame frame;
};

// Keeps function's ranges for kFunction lookups. A function in which another is defined is
// not kept (the other's addresses would be named after it), nor a range that overlaps one
// kept (invalid DWARF, or folded code: which function names it is up to dwarf_getscopes).
void KeepFunctionRanges(std::map<Dwarf_Addr, FunctionRange>* ranges, Dwarf_Die* cudie,
                        Dwarf_Addr cu_bias, Dwarf_Die* function, const SourceFrame& frame) {
  if (DefinesSubprogram(function))
    return;
  SourceFrame named = frame;
  named.file.clear();
  named.line = 0;
  Dwarf_Addr base, start, end;
  ptrdiff_t next = 0;
  while ((next = dwarf_ranges(function, next, &base, &start, &end)) > 0) {
    start += cu_bias;
    end += cu_bias;
    if (start >= end)
      continue;
    auto after = ranges->lower_bound(start);
    if ((after != ranges->end() && after->first < end) ||
        (after != ranges->begin() && std::prev(after)->second.end > start)) {
      continue;
    }
    ranges->emplace(start, FunctionRange{end, dwarf_dieoffset(cudie), named});
  }
}

int DeclLine(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  Dwarf_Word v;
  if (dwarf_attr_integrate(die, DW_AT_decl_line, &attr) != nullptr &&
      dwarf_formudata(&attr, &v) == 0) {
    return static_cast<int>(v);
  }
  return 0;
}

}  // namespace

struct Symbolizer::Module {
  SymbolizeStatus unusable = SymbolizeStatus::kOk;  // kOk when the module can be queried
  SymbolSource source = SymbolSource::kNone;
  std::vector<LoadSegment> segments;
  std::string debug_path;  // read by FindDebuginfo through the module userdata
  std::string exec_path;   // the verified executable, when offsets_usable
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  // False when only a debug-only file was found: ELF addresses can be symbolized (e.g. a
  // vmlinux), file offsets cannot be translated.
  bool offsets_usable = false;
  bool any_ok = false;  // at least one lookup named something: counted in the coverage
  std::unique_ptr<SymbolStretches> symbols;  // made on the first lookup
  // The separate debug file (debug_path) through libelf only: its section headers, without
  // the DWARF libdw would decompress. Opened on the first call.
  Elf* DebugElf() {
    if (!debug_elf_tried) {
      debug_elf_tried = true;
      if (!debug_path.empty()) {
        debug_fd = open(debug_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (debug_fd >= 0)
          debug_elf = elf_begin(debug_fd, ELF_C_READ_MMAP, nullptr);
      }
    }
    return debug_elf;
  }
  bool debug_elf_tried = false;
  int debug_fd = -1;
  Elf* debug_elf = nullptr;
  // SymbolDetail::kFunction answers: the address ranges of functions DWARF named, by start.
  std::map<Dwarf_Addr, FunctionRange> function_ranges;

  ~Module() {
    if (dwfl != nullptr)
      dwfl_end(dwfl);
    if (debug_elf != nullptr)
      elf_end(debug_elf);
    if (debug_fd >= 0)
      close(debug_fd);
  }
};

struct Symbolizer::Impl {
  std::unique_ptr<DebugLocator> locator;
  std::unordered_map<BuildId, std::unique_ptr<Module>> modules;
  std::set<std::pair<std::string, BuildId>> seen_paths;
  // Files without a GNU build ID, by recorded path and their other identities.
  std::map<std::string, std::unique_ptr<Module>> file_modules;
  int path_mismatches = 0;
  int path_missing = 0;
};

Symbolizer::Symbolizer(const SymbolizerOptions& options)
    : options_(options), impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

Result<std::unique_ptr<Symbolizer>> Symbolizer::Create(const SymbolizerOptions& options) {
  std::unique_ptr<Symbolizer> s(new Symbolizer(options));
  auto loc = DebugLocator::Create(options);
  if (!loc.ok())
    return loc.error();
  s->impl_->locator = std::move(*loc);
  return s;
}

Symbolizer::Module& Symbolizer::GetModule(const BuildId& id, const std::string& recorded_path) {
  auto key = std::make_pair(recorded_path, id);
  bool new_path = impl_->seen_paths.insert(key).second;
  auto it = impl_->modules.find(id);
  if (it != impl_->modules.end() && !new_path)
    return *it->second;

  // A known module seen under a new path still needs that path checked, for the counters.
  LocatedModule loc = impl_->locator->Locate(id, recorded_path);
  CountLocated(loc);
  if (it != impl_->modules.end())
    return *it->second;

  auto m = std::make_unique<Module>();
  Module& mod = *m;
  impl_->modules.emplace(id, std::move(m));
  OpenModule(mod, loc);
  return mod;
}

void Symbolizer::CountLocated(const LocatedModule& loc) {
  if (loc.path_mismatch)
    impl_->path_mismatches++;
  if (loc.path_missing)
    impl_->path_missing++;
}

void Symbolizer::OpenModule(Module& mod, const LocatedModule& loc) {
  // Pick the file libdwfl reports as the main ELF and the segments that translate offsets.
  const LocatedFile* main = nullptr;
  if (loc.exec) {
    main = &*loc.exec;
    mod.segments = loc.exec->segments;
    mod.offsets_usable = true;
    mod.exec_path = main->path;
  } else if (loc.debug) {
    main = &*loc.debug;
    // e.g. an unstripped file stored under .build-id/xx/yyyy.debug, or a vmlinux
    if (SegmentsDescribeFile(loc.debug->segments)) {
      mod.segments = loc.debug->segments;
      mod.offsets_usable = true;
      mod.exec_path = main->path;
    }
  } else {
    mod.unusable = SymbolizeStatus::kNotFound;
    return;
  }

  if (loc.debug && loc.debug->has_dwarf) {
    mod.source = loc.debug->source;
    mod.debug_path = loc.debug->path;
  } else {
    mod.source = main->source;  // symbol table only
  }

  auto elf = ElfFile::Open(main->path);
  if (!elf.ok()) {
    mod.unusable = SymbolizeStatus::kNotFound;
    mod.source = SymbolSource::kNone;
    return;
  }
  mod.dwfl = dwfl_begin(&kCallbacks);
  if (mod.dwfl == nullptr) {
    mod.unusable = SymbolizeStatus::kNotFound;
    mod.source = SymbolSource::kNone;
    return;
  }
  dwfl_report_begin(mod.dwfl);
  int fd = elf->ReleaseFd();
  mod.mod = dwfl_report_elf(mod.dwfl, main->path.c_str(), main->path.c_str(), fd, 0, false);
  dwfl_report_end(mod.dwfl, nullptr, nullptr);
  if (mod.mod == nullptr) {
    close(fd);  // not consumed on failure
    mod.unusable = SymbolizeStatus::kNotFound;
    mod.source = SymbolSource::kNone;
    return;
  }
  void** userdata = nullptr;
  dwfl_module_info(mod.mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata != nullptr)
    *userdata = &mod.debug_path;
  // DWARF is read when a lookup needs it, not here: a debug file's DWARF is often compressed,
  // and a report that names functions by their symbols never needs it.
}

// The module for a build ID, or nullptr with r->status saying why there is none to use.
Symbolizer::Module* Symbolizer::UsableModule(const std::optional<BuildId>& build_id,
                                             const std::string& recorded_path, Symbolization* r) {
  if (!build_id || build_id->empty()) {
    r->status = SymbolizeStatus::kNoBuildId;
    return nullptr;
  }
  Module& mod = GetModule(*build_id, recorded_path);
  r->source = mod.source;
  if (mod.unusable != SymbolizeStatus::kOk) {
    r->status = mod.unusable;
    return nullptr;
  }
  return &mod;
}

// A file offset of the module as the address it is loaded at, then named.
Result<Symbolization> Symbolizer::DescribeOffset(Module& mod, uint64_t file_offset,
                                                 const std::string& recorded_path, Symbolization r,
                                                 SymbolDetail detail) {
  if (!mod.offsets_usable) {
    r.status = SymbolizeStatus::kNoExecutable;
    return r;
  }
  auto vaddr = FileOffsetToVaddr(mod.segments, file_offset);
  if (!vaddr) {
    r.status = SymbolizeStatus::kOffsetNotMapped;
    return r;
  }
  return Describe(mod, *vaddr, recorded_path, r, detail);
}

Result<Symbolization> Symbolizer::SymbolizeOffset(const std::optional<BuildId>& build_id,
                                                  const std::string& recorded_path,
                                                  uint64_t file_offset, SymbolDetail detail) {
  Symbolization r;
  Module* found = UsableModule(build_id, recorded_path, &r);
  if (found == nullptr)
    return r;
  Module& mod = *found;
  return DescribeOffset(mod, file_offset, recorded_path, r, detail);
}

Result<Symbolization> Symbolizer::SymbolizeOffsetByFile(const FileIds& ids,
                                                        const std::string& recorded_path,
                                                        uint64_t file_offset, SymbolDetail detail) {
  Symbolization r;
  if (ids.empty()) {
    r.status = SymbolizeStatus::kNoBuildId;
    return r;
  }
  std::string key = recorded_path;
  key.push_back('\0');
  key += ids.go_build_id.value_or("");
  key.push_back('\0');
  key += ids.file_hash ? ids.file_hash->ToHex() : "";
  auto [it, added] = impl_->file_modules.try_emplace(key);
  if (added) {
    LocatedModule loc = impl_->locator->LocateByFileIds(ids, recorded_path);
    CountLocated(loc);
    it->second = std::make_unique<Module>();
    OpenModule(*it->second, loc);
  }
  Module& mod = *it->second;
  r.source = mod.source;
  if (mod.unusable != SymbolizeStatus::kOk) {
    r.status = mod.unusable;
    return r;
  }
  return DescribeOffset(mod, file_offset, recorded_path, r, detail);
}

Result<Symbolization> Symbolizer::SymbolizeVaddr(const std::optional<BuildId>& build_id,
                                                 const std::string& recorded_path, uint64_t vaddr,
                                                 SymbolDetail detail) {
  Symbolization r;
  Module* mod = UsableModule(build_id, recorded_path, &r);
  if (mod == nullptr)
    return r;
  return Describe(*mod, vaddr, recorded_path, r, detail);
}

namespace {

// The section of a relocatable file (its index) and the offset in it of the byte core_offset
// bytes into the code of the module's core as the kernel lays it out (see
// SymbolizeKernelModule); nullopt outside that code or when elf is not relocatable.
std::optional<std::pair<size_t, uint64_t>> ModuleCoreSection(Elf* elf, uint64_t core_offset) {
  GElf_Ehdr eh;
  size_t shstrndx;
  // Other architectures add sections at load (arm64's PLTs) or lay out otherwise: no name is
  // better than a wrong one.
  if (gelf_getehdr(elf, &eh) == nullptr || eh.e_type != ET_REL || eh.e_machine != EM_X86_64 ||
      elf_getshdrstrndx(elf, &shstrndx) != 0)
    return std::nullopt;
  uint64_t size = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr)
      return std::nullopt;
    if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
      continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name == nullptr)
      return std::nullopt;  // the kernel places it, where we cannot tell
    if (strncmp(name, ".init", 5) == 0)
      continue;  // freed after the module's init: never in its core
    uint64_t align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
    uint64_t off = (size + align - 1) / align * align;
    if (core_offset >= off && core_offset - off < sh.sh_size)
      return std::pair{elf_ndxscn(scn), core_offset - off};
    size = off + sh.sh_size;
  }
  return std::nullopt;
}

// The function of a relocatable file that covers offset `off` of section `shndx`: its symbols'
// values are offsets in their sections, which libdwfl's address lookups do not tell apart.
const char* RelocatableFunction(Elf* elf, size_t shndx, uint64_t off) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr)
      return nullptr;
    for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
        break;
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx == shndx && off >= sym.st_value &&
          off - sym.st_value < sym.st_size)
        return elf_strptr(elf, sh.sh_link, sym.st_name);
    }
  }
  return nullptr;
}

}  // namespace

Result<Symbolization> Symbolizer::SymbolizeKernelModule(const std::optional<BuildId>& build_id,
                                                        const std::string& recorded_path,
                                                        uint64_t core_offset) {
  Symbolization r;
  Module* mod = UsableModule(build_id, recorded_path, &r);
  if (mod == nullptr)
    return r;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod->mod, &bias);
  if (elf == nullptr)
    return Error(recorded_path, "libdwfl: " + std::string(dwfl_errmsg(-1)));
  auto where = ModuleCoreSection(elf, core_offset);
  if (!where) {
    r.status = SymbolizeStatus::kOffsetNotMapped;
    return r;
  }
  const char* name = RelocatableFunction(elf, where->first, where->second);
  if (name == nullptr) {
    r.status = SymbolizeStatus::kNoSymbol;
    return r;
  }
  r.frames.push_back(SourceFrame{name, "", "", 0, 0});
  r.status = SymbolizeStatus::kOk;
  mod->any_ok = true;
  return r;
}

Result<std::optional<uint64_t>> Symbolizer::SymbolAddress(const BuildId& id,
                                                          const std::string& recorded_path,
                                                          const std::string& name) {
  Module& mod = GetModule(id, recorded_path);
  if (mod.unusable != SymbolizeStatus::kOk)
    return std::optional<uint64_t>();
  int n = dwfl_module_getsymtab(mod.mod);
  if (n < 0)
    return Error(recorded_path, "libdwfl symbol table: " + std::string(dwfl_errmsg(-1)));
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr addr;
    Dwarf_Addr bias = 0;
    const char* sname = dwfl_module_getsym_info(mod.mod, i, &sym, &addr, nullptr, nullptr, &bias);
    if (sname != nullptr && name == sname)
      return std::optional<uint64_t>(addr - bias);
  }
  return std::optional<uint64_t>();
}

Result<Symbolization> Symbolizer::Describe(Module& mod, uint64_t vaddr,
                                           const std::string& recorded_path, Symbolization r,
                                           SymbolDetail detail) {
  r.elf_vaddr = vaddr;
  Dwarf_Addr bias = 0;
  if (dwfl_module_getelf(mod.mod, &bias) == nullptr) {
    return Error(recorded_path, "libdwfl: " + std::string(dwfl_errmsg(-1)));
  }
  const Dwarf_Addr addr = vaddr + bias;
  const bool function_only = detail == SymbolDetail::kFunction;
  if (function_only) {
    // dwarf_getscopes walks the compilation unit up to the address: most of the time of a
    // lookup. Inside a function already named, the function is known.
    auto it = mod.function_ranges.upper_bound(addr);
    Dwarf_Addr cu_bias = 0;
    if (it != mod.function_ranges.begin() && addr < std::prev(it)->second.end) {
      const FunctionRange& f = std::prev(it)->second;
      Dwarf_Die* cudie = dwfl_module_addrdie(mod.mod, addr, &cu_bias);
      if (cudie != nullptr && dwarf_dieoffset(cudie) == f.cu) {
        r.frames.push_back(f.frame);
        r.status = SymbolizeStatus::kOk;
        mod.any_ok = true;
        return r;
      }
    }
  }

  // The ELF symbol names the function when DWARF does not. It is asked for only then: each
  // new stretch of addresses costs libdwfl a walk of the whole symbol table.
  auto elf_symbol = [&]() -> const char* {
    if (!mod.symbols)
      mod.symbols = std::make_unique<SymbolStretches>(mod.mod, mod.DebugElf());
    return mod.symbols->Name(addr);
  };

  // A function's name, as perf names it, is its ELF symbol: the symbol table answers without
  // the DWARF walk (and without decompressing a debug file's DWARF, most of a report's memory
  // on a large library). DWARF names what the symbol table does not cover.
  if (function_only) {
    if (const char* sym_name = elf_symbol()) {
      SourceFrame fr;
      fr.function = WithoutSignature(Demangle(sym_name));
      if (fr.function != sym_name)
        fr.linkage_name = sym_name;
      r.frames.push_back(std::move(fr));
      r.status = SymbolizeStatus::kOk;
      mod.any_ok = true;
      return r;
    }
    // An address no symbol covers in a module that has symbols is code perf does not name
    // either (padding, PLT stubs, hand-written assembly): DWARF, read only for it, would
    // cost more than all the named addresses.
    if (!mod.symbols->empty()) {
      r.status = SymbolizeStatus::kNoSymbol;
      return r;
    }
  }

  Dwarf_Addr cu_bias = 0;
  Dwarf_Die* cudie = dwfl_module_addrdie(mod.mod, addr, &cu_bias);
  if (cudie != nullptr) {
    Dwarf_Die* scopes = nullptr;
    int n = dwarf_getscopes(cudie, addr - cu_bias, &scopes);
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
      files = nullptr;

    std::string file;
    int line = 0;
    if (Dwfl_Line* l = dwfl_module_getsrc(mod.mod, addr)) {
      const char* f = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr);
      if (f != nullptr)
        file = f;
    }
    // dwarf_getscopes continues past an inlined instance into the abstract definition's
    // scopes; the caller chain is in the concrete tree, reached with dwarf_getscopes_die.
    int i = 0;
    std::optional<Dwarf_Die> function;  // the out-of-line function, when reached
    while (scopes != nullptr && i < n) {
      int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) {
        i++;
        continue;
      }
      if (tag == DW_TAG_subprogram)
        function = scopes[i];
      SourceFrame fr;
      fr.function = DieName(&scopes[i], &fr.linkage_name);
      fr.file = file;
      fr.line = line;
      fr.function_line = DeclLine(&scopes[i]);
      r.frames.push_back(std::move(fr));
      // Bounded: a cycle in corrupt DWARF must not loop forever.
      if (tag == DW_TAG_subprogram || r.frames.size() >= 64)
        break;
      // The caller's position is the call site recorded on the inlined instance.
      Dwarf_Attribute attr;
      Dwarf_Word v;
      file.clear();
      line = 0;
      if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr) != nullptr &&
          dwarf_formudata(&attr, &v) == 0) {
        line = static_cast<int>(v);
      }
      if (files != nullptr && dwarf_attr(&scopes[i], DW_AT_call_file, &attr) != nullptr &&
          dwarf_formudata(&attr, &v) == 0 && v < nfiles) {
        const char* f = dwarf_filesrc(files, v, nullptr, nullptr);
        if (f != nullptr)
          file = f;
      }
      Dwarf_Die inlined = scopes[i];
      free(scopes);
      scopes = nullptr;
      n = dwarf_getscopes_die(&inlined, &scopes);
      i = 1;  // [0] is the inlined instance itself
    }
    free(scopes);
    if (!r.frames.empty()) {
      r.has_lines = true;
      r.has_inline = r.frames.size() > 1;
      // An out-of-line function without a DWARF name (rare) keeps its ELF symbol name.
      if (r.frames.back().function.empty()) {
        if (const char* sym_name = elf_symbol())
          r.frames.back().function = Demangle(sym_name);
      } else if (function_only && function) {
        KeepFunctionRanges(&mod.function_ranges, cudie, cu_bias, &*function, r.frames.back());
      }
    }
  }
  if (r.frames.empty()) {
    const char* sym_name = elf_symbol();
    if (sym_name == nullptr) {
      r.status = SymbolizeStatus::kNoSymbol;
      return r;
    }
    SourceFrame fr;
    fr.function = Demangle(sym_name);
    if (fr.function != sym_name)
      fr.linkage_name = sym_name;
    r.frames.push_back(std::move(fr));
  }
  if (function_only) {
    SourceFrame fr = std::move(r.frames.back());
    fr.file.clear();
    fr.line = 0;
    r.frames.assign(1, std::move(fr));
    r.has_lines = false;
    r.has_inline = false;
  }
  r.status = SymbolizeStatus::kOk;
  mod.any_ok = true;
  return r;
}

std::optional<std::string> Symbolizer::ExecutablePath(const BuildId& id,
                                                      const std::string& recorded_path) {
  Module& mod = GetModule(id, recorded_path);
  if (mod.exec_path.empty())
    return std::nullopt;
  return mod.exec_path;
}

std::optional<std::string> Symbolizer::KallsymsCopy(const BuildId& id) const {
  return impl_->locator->KallsymsCopy(id);
}

bool Symbolizer::UsesDebuginfod() const {
  const DebuginfodClient* d = impl_->locator->debuginfod();
  return d != nullptr && d->Enabled();
}

void Symbolizer::Prefetch(const std::vector<std::pair<BuildId, std::string>>& modules) {
  impl_->locator->Prefetch(modules);
}

SymbolSource Symbolizer::SourceOf(const BuildId& id) const {
  auto it = impl_->modules.find(id);
  return it == impl_->modules.end() ? SymbolSource::kNone : it->second->source;
}

SymbolizerCoverage Symbolizer::Coverage() const {
  SymbolizerCoverage c;
  // A module counts for the place its symbols came from once it named something.
  for (const auto& [id, mod] : impl_->modules)
    c.modules_by_source[mod->any_ok ? mod->source : SymbolSource::kNone]++;
  for (const auto& [key, mod] : impl_->file_modules)
    c.modules_by_source[mod->any_ok ? mod->source : SymbolSource::kNone]++;
  c.path_mismatches = impl_->path_mismatches;
  c.path_missing = impl_->path_missing;
  if (const DebuginfodClient* d = impl_->locator->debuginfod()) {
    c.debuginfod_queries = d->queries();
    c.debuginfod_error = d->last_error();
    c.debuginfod_skipped = d->skipped();
    c.debuginfod_skip_reason = d->skip_reason();
  }
  return c;
}

}  // namespace pbid
