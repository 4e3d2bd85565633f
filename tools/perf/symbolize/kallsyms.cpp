// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/kallsyms.h"

#include <algorithm>
#include <cctype>
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
  auto text = std::make_shared<std::string>();
  char buf[1 << 16];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), f.get())) > 0)
    text->append(buf, got);
  if (ferror(f.get()))
    return Error::Sys(path, errno, "read");
  Kallsyms k;
  k.text_ = text;
  const std::string_view all(*text);
  uint64_t lineno = 0;
  bool any_nonzero = false;
  for (size_t pos = 0; pos < all.size();) {
    size_t eol = all.find('\n', pos);
    if (eol == std::string_view::npos)
      eol = all.size();
    std::string_view line = all.substr(pos, eol - pos);
    pos = eol + 1;
    lineno++;
    // "ffffffff81000000 T _text" and, for modules, "... t name\t[module]".
    auto bad = [&] {
      return Error(path + ":" + std::to_string(lineno), "malformed kallsyms line");
    };
    size_t i = 0;
    uint64_t addr = 0;
    int digits = 0;
    for (; i < line.size() && isxdigit(static_cast<unsigned char>(line[i])); i++, digits++) {
      char c = line[i];
      addr = addr << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (digits == 0 || digits > 16 || i + 3 >= line.size() + 1 || i >= line.size() ||
        line[i] != ' ' || i + 2 >= line.size() || line[i + 2] != ' ')
      return bad();
    char type = line[i + 1];
    size_t name_start = i + 3;
    size_t name_end = line.find_first_of(" \t", name_start);
    if (name_end == std::string_view::npos)
      name_end = line.size();
    if (name_end == name_start)
      return bad();
    std::string_view module;
    size_t open = line.find('[', name_end);
    if (open != std::string_view::npos) {
      size_t close = line.find(']', open);
      if (close == std::string_view::npos)
        return bad();
      module = line.substr(open + 1, close - open - 1);
    }
    if (addr != 0)
      any_nonzero = true;
    // Only code: data symbols would name samples that cannot be in data.
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
      continue;
    k.symbols_.push_back({addr, line.substr(name_start, name_end - name_start), module});
  }
  if (!any_nonzero) {
    k.symbols_.clear();
    return k;
  }
  // The kernel lists its symbols mostly in order: sorting is then one pass.
  auto by_addr = [](const Symbol& a, const Symbol& b) { return a.addr < b.addr; };
  if (!std::is_sorted(k.symbols_.begin(), k.symbols_.end(), by_addr))
    std::stable_sort(k.symbols_.begin(), k.symbols_.end(), by_addr);
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
