// SPDX-License-Identifier: GPL-2.0
//
// Kernel symbols from /proc/kallsyms. Without privileges the kernel shows every address as 0
// (kptr_restrict): the table is then "not usable" and kernel samples are reported as [kernel]
// instead of being given a wrong name.
#ifndef PBID_SYMBOLIZE_KALLSYMS_H_
#define PBID_SYMBOLIZE_KALLSYMS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pbid/result.h"

namespace pbid {

class Kallsyms {
 public:
  // A symbol as Lookup gives it: name and module point into the table, valid as long as it.
  struct Symbol {
    uint64_t addr = 0;
    std::string_view name;
    std::string_view module;  // empty for the core kernel
  };

  // An error when the file cannot be read; an empty (not usable) table when every address is
  // hidden. Malformed lines are an error naming the line number.
  static Result<Kallsyms> Load(const std::string& path = "/proc/kallsyms");

  bool usable() const { return !symbols_.empty(); }
  size_t size() const { return symbols_.size() + padded_; }  // text symbols, __pfx_ ones too
  // The bytes the symbols' and modules' names take.
  size_t name_bytes() const { return names_.size(); }

  // The text symbol at or below addr. None below the first symbol or past any symbol by
  // kMaxSymbolSize or more (kallsyms has no sizes; this keeps an address in a gap, in user
  // space or bogus from being named after the symbol before it).
  std::optional<Symbol> Lookup(uint64_t addr) const;

  static constexpr uint64_t kMaxSymbolSize = 1 << 20;

  // The address of the core kernel's text symbol `name` (the first one of that name), or none.
  // A linear search: it is asked once per report, for the symbol a kernel mapping is named
  // after.
  std::optional<uint64_t> Address(std::string_view name) const;

 private:
  // A kernel has over 120,000 text symbols, and reading them is most of a small report's
  // memory and time: 16 bytes each, their names one after another in names_ (a name that ends
  // the __pfx_ name before it not again). A function's padding, __pfx_NAME right before NAME
  // (nearly half of a padded kernel's symbols), is not an entry of its own once the table is
  // sorted: NAME's entry says that the padding comes before it, pfx_size_ bytes long.
  struct Packed {
    uint64_t addr;
    uint32_t name;           // offset in names_; a padded one's is its __pfx_ name's end
    uint16_t name_len : 15;  // kallsyms names are at most 512 bytes
    uint16_t padded : 1;     // __pfx_NAME is at addr - pfx_size_
    uint16_t module;         // 0: the core kernel; else modules_[module - 1]
  };
  static constexpr std::string_view kPfx = "__pfx_";
  static constexpr uint64_t kMaxPadding = 256;  // x86's CONFIG_FUNCTION_PADDING_BYTES: 16 to 64
  Symbol Named(const Packed& p, bool padding) const;
  void MergePaddings();
  std::string names_;
  std::vector<std::pair<uint32_t, uint32_t>> modules_;  // offset and length in names_
  std::vector<Packed> symbols_;                         // sorted by addr
  size_t padded_ = 0;                                   // entries with a padding before them
  uint64_t pfx_size_ = 0;  // how far __pfx_NAME is below NAME: the kernel's padding
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_KALLSYMS_H_
