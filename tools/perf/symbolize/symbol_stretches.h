// SPDX-License-Identifier: GPL-2.0
//
// Which ELF symbol libdwfl names for an address, asked once per stretch of addresses.
//
// dwfl_module_addrinfo walks the whole symbol table on every call, which made it most of
// report's time. Its answer depends on the address only through comparisons with a symbol's
// value, a symbol's end (value + size) and a section's bounds: between two consecutive such
// points it names the same symbol. So libdwfl is asked once per stretch, for the first address
// that falls in it, and the answer is kept; the offset into the symbol follows from its value.
// That still costs one walk of the table per stretch, which is most of report's time on a
// large stripped binary (cc1's 29000 dynamic symbols). So a stretch is first answered from the
// symbols that cover it, when libdwfl's choice among them is plain: the symbols with a size
// that contain the address, globals before locals, and either one of them or several at the
// same address and size (aliases: libdwfl keeps the first of the strongest binding), or none
// and no sizeless symbol libdwfl could fall back to. Anything else (a sizeless symbol that
// may name the address, a sizeless global exactly at it, overlapping sized symbols,
// a table whose values are not the plain st_value plus the bias, as with function
// descriptors) goes to libdwfl. The test compares both with libdwfl at every address next to
// a boundary of real binaries.
#ifndef PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_
#define PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace pbid {

class SymbolStretches {
 public:
  // mod must outlive this object; names returned point into its string tables.
  // debug_elf: the module's separate debug file, when it has one (its section bounds count,
  // as libdwfl counts them); read through libelf, not through libdw, so that naming by symbol
  // never decompresses the file's DWARF. May be null.
  explicit SymbolStretches(Dwfl_Module* mod, Elf* debug_elf = nullptr);

  // The symbol libdwfl's dwfl_module_addrinfo gives for addr (module address, bias included),
  // or nullptr when it gives none.
  const char* Name(Dwarf_Addr addr);

  size_t dwfl_lookups() const { return lookups_; }
  // The module has no symbol that could name an address.
  bool empty() {
    if (!built_)
      Build();
    return sized_.empty() && sizeless_.empty();
  }

 private:
  // A symbol libdwfl may name, with a size.
  struct Sized {
    Dwarf_Addr value;  // module address, as libdwfl compares it
    GElf_Xword size;
    int index;    // in libdwfl's table: its order decides between equals
    int binding;  // libdwfl's preference: global 3, weak 2, local 1, other 0
    const char* name;
  };
  void Build();
  // libdwfl's answer for addr from the symbols covering it (nullptr: none), or std::nullopt
  // when libdwfl must be asked.
  std::optional<const char*> Covering(Dwarf_Addr addr) const;

  Dwfl_Module* mod_;
  Elf* debug_elf_;
  bool built_ = false;
  bool plain_ = true;         // values are st_value + bias: Covering may answer
  int first_global_ = 0;      // libdwfl searches from here to the end first, the locals after
  std::vector<Sized> sized_;  // by value
  std::vector<Dwarf_Addr> sized_end_max_;     // max value + size of sized_[0..i]
  std::vector<Dwarf_Addr> global_end_max_;    // the same over the globals only
  std::vector<Dwarf_Addr> sizeless_;          // values, sorted
  std::vector<Dwarf_Addr> sizeless_globals_;  // values, sorted
  std::vector<Dwarf_Addr> bounds_;            // sorted, unique
  // Index of the stretch's lower bound (bounds_.size() for below the first) -> name.
  std::unordered_map<size_t, const char*> names_;
  size_t lookups_ = 0;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_SYMBOL_STRETCHES_H_
