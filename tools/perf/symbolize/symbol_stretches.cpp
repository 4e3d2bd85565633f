// SPDX-License-Identifier: GPL-2.0
#include "symbol_stretches.h"

#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <iterator>

namespace pbid {

namespace {

// Where the sections of elf start and end, in module addresses.
void AddSectionBounds(Elf* elf, Dwarf_Addr bias, std::vector<Dwarf_Addr>* bounds) {
  if (elf == nullptr)
    return;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr)
      continue;
    bounds->push_back(shdr.sh_addr + bias);
    bounds->push_back(shdr.sh_addr + shdr.sh_size + bias);
  }
}

}  // namespace

SymbolStretches::SymbolStretches(Dwfl_Module* mod, Elf* debug_elf)
    : mod_(mod), debug_elf_(debug_elf) {}

void SymbolStretches::Build() {
  built_ = true;
  // A point too many only splits a stretch in two; a point too few would let two answers share
  // one stretch. So every point libdwfl may compare an address with goes in, and the address
  // after each too: whether libdwfl compares with < or <= there (it treats the byte after a
  // section's end as inside it, for one) then does not matter.
  int n = dwfl_module_getsymtab(mod_);
  first_global_ = dwfl_module_getsymtab_first_global(mod_);
  plain_ = n > 0 && first_global_ >= 0;
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr value;
    Dwarf_Addr sym_bias = 0;
    const char* name = dwfl_module_getsym_info(mod_, i, &sym, &value, nullptr, nullptr, &sym_bias);
    if (name == nullptr)
      continue;
    bounds_.push_back(value);
    bounds_.push_back(value + sym.st_size);
    // The symbols libdwfl considers at all.
    int type = GELF_ST_TYPE(sym.st_info);
    if (name[0] == '\0' || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
        type == STT_TLS) {
      continue;
    }
    if (value != sym.st_value + sym_bias)
      plain_ = false;  // e.g. resolved through a function descriptor: libdwfl tries both
    bool global = first_global_ == 0 || i >= first_global_;
    if (sym.st_size == 0) {
      sizeless_.push_back(value);
      if (global)
        sizeless_globals_.push_back(value);
      continue;
    }
    int binding = 0;
    switch (GELF_ST_BIND(sym.st_info)) {
      case STB_GLOBAL: binding = 3; break;
      case STB_WEAK: binding = 2; break;
      case STB_LOCAL: binding = 1; break;
    }
    sized_.push_back({value, sym.st_size, i, binding, name});
  }
  std::sort(sized_.begin(), sized_.end(),
            [](const Sized& a, const Sized& b) { return a.value < b.value; });
  Dwarf_Addr end_max = 0, global_end_max = 0;
  for (const Sized& s : sized_) {
    end_max = std::max(end_max, s.value + s.size);
    sized_end_max_.push_back(end_max);
    if (first_global_ == 0 || s.index >= first_global_)
      global_end_max = std::max(global_end_max, s.value + s.size);
    global_end_max_.push_back(global_end_max);
  }
  std::sort(sizeless_.begin(), sizeless_.end());
  std::sort(sizeless_globals_.begin(), sizeless_globals_.end());
  Dwarf_Addr bias = 0;
  AddSectionBounds(dwfl_module_getelf(mod_, &bias), bias, &bounds_);
  // A separate debug file has the sections at the addresses of the file it was split from.
  if (debug_elf_ != nullptr)
    AddSectionBounds(debug_elf_, bias, &bounds_);
  const size_t points = bounds_.size();
  for (size_t i = 0; i < points; i++)
    bounds_.push_back(bounds_[i] + 1);
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
}

std::optional<const char*> SymbolStretches::Covering(Dwarf_Addr addr) const {
  if (!plain_)
    return std::nullopt;
  // The sized symbols that contain addr, scanning down from the last that starts at or below
  // it for as long as an earlier symbol may still reach it.
  const Sized* best[2] = {nullptr, nullptr};  // [0] globals, [1] locals
  bool mixed[2] = {false, false};
  const size_t below = std::upper_bound(sized_.begin(), sized_.end(), addr,
                                        [](Dwarf_Addr a, const Sized& s) { return a < s.value; }) -
                       sized_.begin();
  size_t k = below;
  while (k > 0 && sized_end_max_[k - 1] > addr) {
    const Sized& s = sized_[--k];
    if (addr - s.value >= s.size)
      continue;
    int pass = first_global_ == 0 || s.index >= first_global_ ? 0 : 1;
    const Sized*& b = best[pass];
    if (b == nullptr) {
      b = &s;
    } else if (b->value != s.value || b->size != s.size) {
      mixed[pass] = true;
    } else if (s.binding > b->binding || (s.binding == b->binding && s.index < b->index)) {
      b = &s;  // of aliases, libdwfl keeps the first of the strongest binding
    }
  }
  if (best[0] != nullptr) {
    if (mixed[0])
      return std::nullopt;
    return best[0]->name;
  }
  if (best[1] == nullptr) {
    // No symbol covers addr, e.g. a static function of a stripped binary. libdwfl then falls
    // back to the nearest sizeless symbol below, but only to one at or above the end of every
    // sized global below addr: when there is none such, it names nothing.
    auto sizeless = std::upper_bound(sizeless_.begin(), sizeless_.end(), addr);
    if (sizeless == sizeless_.begin() ||
        (below > 0 && *std::prev(sizeless) < global_end_max_[below - 1])) {
      return nullptr;
    }
    return std::nullopt;
  }
  // libdwfl searches the locals only when no global was found, and not when a sizeless
  // global sits exactly at addr.
  if (mixed[1] || std::binary_search(sizeless_globals_.begin(), sizeless_globals_.end(), addr))
    return std::nullopt;
  return best[1]->name;
}

const char* SymbolStretches::Name(Dwarf_Addr addr) {
  if (!built_)
    Build();
  size_t stretch = std::upper_bound(bounds_.begin(), bounds_.end(), addr) - bounds_.begin();
  auto it = names_.find(stretch);
  if (it != names_.end())
    return it->second;
  std::optional<const char*> covering = Covering(addr);
  const char* name = nullptr;
  if (covering) {
    name = *covering;
  } else {
    GElf_Sym sym;
    GElf_Off off = 0;
    lookups_++;
    name = dwfl_module_addrinfo(mod_, addr, &off, &sym, nullptr, nullptr, nullptr);
  }
  names_.emplace(stretch, name);
  return name;
}

}  // namespace pbid
