// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/kallsyms.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

namespace pbid {

Result<Kallsyms> Kallsyms::Load(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(fopen(path.c_str(), "re"), fclose);
  if (!f)
    return Error::Sys(path, errno, "open");
  Kallsyms k;
  char line[1024];
  uint64_t lineno = 0;
  bool any_nonzero = false;
  while (fgets(line, sizeof(line), f.get()) != nullptr) {
    lineno++;
    uint64_t addr;
    char type;
    char name[512];
    char module[256] = "";
    int n = sscanf(line, "%" SCNx64 " %c %511s [%255[^]]]", &addr, &type, name, module);
    if (n < 3)
      return Error(path + ":" + std::to_string(lineno), "malformed kallsyms line");
    if (addr != 0)
      any_nonzero = true;
    // Only code: data symbols would name samples that cannot be in data.
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
      continue;
    k.symbols_.push_back({addr, name, module});
  }
  if (ferror(f.get()))
    return Error::Sys(path, errno, "read");
  if (!any_nonzero) {
    k.symbols_.clear();
    return k;
  }
  std::stable_sort(k.symbols_.begin(), k.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.addr < b.addr; });
  return k;
}

const Kallsyms::Symbol* Kallsyms::Lookup(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.addr; });
  if (it == symbols_.begin())
    return nullptr;
  --it;
  if (std::next(it) == symbols_.end() && addr - it->addr >= kMaxSymbolSize)
    return nullptr;
  return &*it;
}

}  // namespace pbid
