// SPDX-License-Identifier: GPL-2.0
#include "symbol_stretches.h"

#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>

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

SymbolStretches::SymbolStretches(Dwfl_Module* mod) : mod_(mod) {}

void SymbolStretches::Build() {
  built_ = true;
  // A point too many only splits a stretch in two; a point too few would let two answers share
  // one stretch. So every point libdwfl may compare an address with goes in, and the address
  // after each too: whether libdwfl compares with < or <= there (it treats the byte after a
  // section's end as inside it, for one) then does not matter.
  int n = dwfl_module_getsymtab(mod_);
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr value;
    if (dwfl_module_getsym_info(mod_, i, &sym, &value, nullptr, nullptr, nullptr) == nullptr)
      continue;
    bounds_.push_back(value);
    bounds_.push_back(value + sym.st_size);
  }
  Dwarf_Addr bias = 0;
  AddSectionBounds(dwfl_module_getelf(mod_, &bias), bias, &bounds_);
  Dwarf_Addr debug_bias = 0;
  if (Dwarf* dw = dwfl_module_getdwarf(mod_, &debug_bias))
    AddSectionBounds(dwarf_getelf(dw), debug_bias, &bounds_);
  const size_t points = bounds_.size();
  for (size_t i = 0; i < points; i++)
    bounds_.push_back(bounds_[i] + 1);
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
}

const char* SymbolStretches::Name(Dwarf_Addr addr) {
  if (!built_)
    Build();
  size_t stretch = std::upper_bound(bounds_.begin(), bounds_.end(), addr) - bounds_.begin();
  auto it = names_.find(stretch);
  if (it != names_.end())
    return it->second;
  GElf_Sym sym;
  GElf_Off off = 0;
  lookups_++;
  const char* name = dwfl_module_addrinfo(mod_, addr, &off, &sym, nullptr, nullptr, nullptr);
  names_.emplace(stretch, name);
  return name;
}

}  // namespace pbid
