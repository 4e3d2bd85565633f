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
  // Only the text symbols' names are kept, in one buffer; the modules, a few hundred, once
  // each. Offsets while the buffer grows, views once it is complete.
  struct Pending {
    uint64_t addr;
    uint32_t name, name_len, module;
  };
  auto text = std::make_shared<std::string>();
  std::vector<Pending> pending;
  std::vector<std::pair<uint32_t, uint32_t>> modules;  // offset and length in text
  std::string last_module;
  uint32_t last_module_index = 0;
  Kallsyms k;
  uint64_t lineno = 0;
  bool any_nonzero = false;
  struct LineBuffer {  // getline's, freed on every return
    char* p = nullptr;
    size_t cap = 0;
    ~LineBuffer() { free(p); }
  } lb;
  ssize_t got;
  while ((got = getline(&lb.p, &lb.cap, f.get())) > 0) {
    lineno++;
    std::string_view line(lb.p, static_cast<size_t>(got));
    if (!line.empty() && line.back() == '\n')
      line.remove_suffix(1);
    // "ffffffff81000000 T _text" and, for modules, "... t name\t[module]".
    auto bad = [&] {
      return Error(path + ":" + std::to_string(lineno), "malformed kallsyms line");
    };
    size_t i = 0;
    uint64_t addr = 0;
    for (; i < line.size() && isxdigit(static_cast<unsigned char>(line[i])); i++) {
      char c = line[i];
      addr = addr << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (i == 0 || i > 16 || i + 3 >= line.size() || line[i] != ' ' || line[i + 2] != ' ')
      return bad();
    char type = line[i + 1];
    size_t name_start = i + 3;
    size_t name_end = line.find_first_of(" \t", name_start);
    if (name_end == std::string_view::npos)
      name_end = line.size();
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
    uint32_t module_index = 0;  // 0: the core kernel
    if (!module.empty()) {
      if (module != last_module) {
        last_module.assign(module);
        modules.emplace_back(static_cast<uint32_t>(text->size()),
                             static_cast<uint32_t>(module.size()));
        text->append(module);
        last_module_index = static_cast<uint32_t>(modules.size());
      }
      module_index = last_module_index;
    }
    pending.push_back({addr, static_cast<uint32_t>(text->size()),
                       static_cast<uint32_t>(name_end - name_start), module_index});
    text->append(line.substr(name_start, name_end - name_start));
  }
  if (ferror(f.get()))
    return Error::Sys(path, errno, "read");
  if (!any_nonzero)
    return k;
  text->shrink_to_fit();
  k.text_ = text;
  const std::string_view all(*text);
  k.symbols_.reserve(pending.size());
  for (const Pending& p : pending) {
    std::string_view module;
    if (p.module != 0)
      module = all.substr(modules[p.module - 1].first, modules[p.module - 1].second);
    k.symbols_.push_back({p.addr, all.substr(p.name, p.name_len), module});
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
