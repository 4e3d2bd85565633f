// SPDX-License-Identifier: GPL-2.0
//
// Kernel symbols from /proc/kallsyms. Without privileges the kernel shows every address as 0
// (kptr_restrict): the table is then "not usable" and kernel samples are reported as [kernel]
// instead of being given a wrong name.
#ifndef PBID_SYMBOLIZE_KALLSYMS_H_
#define PBID_SYMBOLIZE_KALLSYMS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pbid/result.h"

namespace pbid {

class Kallsyms {
 public:
  // name and module point into the table's copy of the file: a kernel has over 100,000 text
  // symbols, and a string each would double the table's memory.
  struct Symbol {
    uint64_t addr = 0;
    std::string_view name;
    std::string_view module;  // empty for the core kernel
  };

  // An error when the file cannot be read; an empty (not usable) table when every address is
  // hidden. Malformed lines are an error naming the line number.
  static Result<Kallsyms> Load(const std::string& path = "/proc/kallsyms");

  bool usable() const { return !symbols_.empty(); }
  size_t size() const { return symbols_.size(); }

  // The text symbol at or below addr, valid as long as the table. nullptr below the first
  // symbol or past the last one by more than kMaxSymbolSize (kallsyms has no sizes; this keeps
  // a user-space or bogus address from being named after the last kernel symbol).
  const Symbol* Lookup(uint64_t addr) const;

  static constexpr uint64_t kMaxSymbolSize = 1 << 20;

 private:
  std::shared_ptr<const std::string> text_;  // the file; shared, so that a copy stays valid
  std::vector<Symbol> symbols_;              // sorted by addr
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_KALLSYMS_H_
