// SPDX-License-Identifier: GPL-2.0
//
// Which ELF symbol libdwfl names for an address, asked once per stretch of addresses.
//
// dwfl_module_addrinfo walks the whole symbol table on every call, which made it most of
// report's time. Its answer depends on the address only through comparisons with a symbol's
// value, a symbol's end (value + size) and a section's bounds: between two consecutive such
// points it names the same symbol. So libdwfl is asked once per stretch, for the first address
// that falls in it, and the answer is kept; the offset into the symbol follows from its value.
// The index never answers on its own and so cannot disagree with libdwfl (the test compares
// every address of real binaries).
#ifndef PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_
#define PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pbid {

class SymbolStretches {
 public:
  // mod must outlive this object; names returned point into its string tables.
  explicit SymbolStretches(Dwfl_Module* mod);

  // The symbol libdwfl's dwfl_module_addrinfo gives for addr (module address, bias included),
  // or nullptr when it gives none.
  const char* Name(Dwarf_Addr addr);

  size_t dwfl_lookups() const { return lookups_; }

 private:
  void Build();

  Dwfl_Module* mod_;
  bool built_ = false;
  std::vector<Dwarf_Addr> bounds_;  // sorted, unique
  // Index of the stretch's lower bound (bounds_.size() for below the first) -> name.
  std::unordered_map<size_t, const char*> names_;
  size_t lookups_ = 0;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_
