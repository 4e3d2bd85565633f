// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/kallsyms.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>

namespace pbid {

Result<Kallsyms> Kallsyms::Load(const std::string& path) {
  // Not blocking: a FIFO put where a copy was expected must not hang the report.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Error::Sys(path, errno, "open");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0)
    return Error::Sys(path, errno, "stat");
  if (!S_ISREG(st.st_mode))  // /proc/kallsyms is one, of size 0
    return Error(path, "not a regular file");
  // Only the text symbols' names are kept; the modules, a few hundred, once each. The file is
  // read in large pieces (its st_blksize is 1 KiB), parsed where it was read. Room is reserved
  // for a distribution kernel's symbols: only the part used is ever touched, and nothing is
  // copied as the table grows.
  Kallsyms k;
  k.symbols_.reserve(1 << 17);
  k.names_.reserve(4 << 20);
  std::string last_module;
  // Kernels built with function padding (x86 since 6.2) list __pfx_NAME, the padding before
  // NAME, right before NAME: nearly half of the text symbols. NAME is then kept as the end of
  // the __pfx_ name, which saves two fifths of the names' bytes. pfx_name is that end (offset and
  // length in names_), while the next symbol may still be NAME.
  std::pair<uint32_t, uint32_t> pfx_name{0, 0};
  uint64_t lineno = 0;
  bool any_nonzero = false;
  constexpr size_t kBuf = 256 << 10;
  std::unique_ptr<char[]> buf(new char[kBuf]);  // not cleared: only what was read is used
  size_t have = 0;                              // bytes in buf, from its start
  bool eof = false;
  while (!eof || have > 0) {
    if (!eof) {
      ssize_t got = read(fd, buf.get() + have, kBuf - have);
      if (got < 0) {
        if (errno == EINTR)
          continue;
        return Error::Sys(path, errno, "read");
      }
      if (got == 0)
        eof = true;
      have += static_cast<size_t>(got);
    }
    // Every whole line in buf (at the end of the file, the last line without its newline too).
    size_t pos = 0;
    while (pos < have) {
      const char* nl = static_cast<const char*>(memchr(buf.get() + pos, '\n', have - pos));
      if (nl == nullptr && !eof)
        break;
      size_t end = nl != nullptr ? static_cast<size_t>(nl - buf.get()) : have;
      std::string_view line(buf.get() + pos, end - pos);
      pos = nl != nullptr ? end + 1 : have;
      lineno++;
      // "ffffffff81000000 T _text" and, for modules, "... t name\t[module]".
      auto bad = [&] {
        return Error(path + ":" + std::to_string(lineno), "malformed kallsyms line");
      };
      // The digits and the name's end by hand: isxdigit and find_first_of were a call per
      // character of some 100k lines.
      size_t i = 0;
      uint64_t addr = 0;
      for (; i < line.size(); i++) {
        const char c = line[i];
        const char lower = static_cast<char>(c | 0x20);
        uint64_t digit;
        if (c >= '0' && c <= '9')
          digit = static_cast<uint64_t>(c - '0');
        else if (lower >= 'a' && lower <= 'f')
          digit = static_cast<uint64_t>(lower - 'a' + 10);
        else
          break;
        addr = addr << 4 | digit;
      }
      if (i == 0 || i > 16 || i + 3 >= line.size() || line[i] != ' ' || line[i + 2] != ' ')
        return bad();
      char type = line[i + 1];
      size_t name_start = i + 3;
      size_t name_end = name_start;
      while (name_end < line.size() && line[name_end] != ' ' && line[name_end] != '\t')
        name_end++;
      std::string_view module;
      size_t open_at = line.find('[', name_end);
      if (open_at != std::string_view::npos) {
        size_t close_at = line.find(']', open_at);
        if (close_at == std::string_view::npos)
          return bad();
        module = line.substr(open_at + 1, close_at - open_at - 1);
      }
      if (addr != 0)
        any_nonzero = true;
      // Only code: data symbols would name samples that cannot be in data.
      if (type != 't' && type != 'T' && type != 'w' && type != 'W')
        continue;
      if (name_end - name_start > 0x7fff || k.modules_.size() >= UINT16_MAX)
        return bad();
      if (!module.empty() && module != last_module) {
        k.modules_.emplace_back(static_cast<uint32_t>(k.names_.size()),
                                static_cast<uint32_t>(module.size()));
        k.names_.append(module);
        last_module.assign(module);
      }
      const std::string_view name = line.substr(name_start, name_end - name_start);
      const uint16_t module_index = static_cast<uint16_t>(module.empty() ? 0 : k.modules_.size());
      uint32_t name_at = static_cast<uint32_t>(k.names_.size());
      const auto [pfx_at, pfx_len] = pfx_name;
      pfx_name = {0, 0};
      if (pfx_len != 0 && name == std::string_view(k.names_).substr(pfx_at, pfx_len)) {
        name_at = pfx_at;
      } else {
        k.names_.append(name);
        if (name.size() > kPfx.size() && name.compare(0, kPfx.size(), kPfx) == 0) {
          pfx_name = {name_at + static_cast<uint32_t>(kPfx.size()),
                      static_cast<uint32_t>(name.size() - kPfx.size())};
        }
      }
      k.symbols_.push_back({addr, name_at, static_cast<uint16_t>(name.size()), 0, module_index});
    }
    // The partial line to the front of buf; a line longer than buf is not kallsyms.
    if (pos == 0 && have == kBuf) {
      lineno++;
      return Error(path + ":" + std::to_string(lineno), "malformed kallsyms line");
    }
    memmove(buf.get(), buf.get() + pos, have - pos);
    have -= pos;
  }
  if (!any_nonzero)
    return Kallsyms();
  // The kernel lists its symbols mostly in order: sorting is then one pass.
  auto by_addr = [](const Packed& a, const Packed& b) { return a.addr < b.addr; };
  if (!std::is_sorted(k.symbols_.begin(), k.symbols_.end(), by_addr))
    std::stable_sort(k.symbols_.begin(), k.symbols_.end(), by_addr);
  k.MergePaddings();
  return k;
}

// A padding merges into the function right after it in address order, whose name ends its
// __pfx_ name (as NAME's bytes are then the end of __pfx_NAME's): nothing lies between the two,
// and what lies at the padding's address sorts before it, so that a lookup finds what the
// table with both entries found. The kernel pads every function alike: paddings of another
// length stay entries.
void Kallsyms::MergePaddings() {
  const std::string_view all(names_);
  size_t kept = 0;
  for (size_t i = 0; i < symbols_.size(); i++) {
    const Packed p = symbols_[i];
    if (i + 1 < symbols_.size() && p.name_len > kPfx.size() &&
        all.substr(p.name, kPfx.size()) == kPfx) {
      const Packed& f = symbols_[i + 1];
      const uint64_t size = f.addr - p.addr;
      if (pfx_size_ == 0 && size != 0 && size <= kMaxPadding)
        pfx_size_ = size;
      if (size != 0 && size == pfx_size_ && f.module == p.module &&
          f.name_len == p.name_len - kPfx.size() &&
          all.substr(f.name, f.name_len) == all.substr(p.name + kPfx.size(), f.name_len)) {
        symbols_[kept++] = {f.addr, static_cast<uint32_t>(p.name + kPfx.size()), f.name_len, 1,
                            f.module};
        padded_++;
        i++;
        continue;
      }
    }
    symbols_[kept++] = p;
  }
  symbols_.resize(kept);
  // The table reserved room for a large kernel's symbols: what the merged ones freed goes.
  symbols_.shrink_to_fit();
}

Kallsyms::Symbol Kallsyms::Named(const Packed& p, bool padding) const {
  const std::string_view all(names_);
  Symbol s;
  s.addr = padding ? p.addr - pfx_size_ : p.addr;
  s.name = padding ? all.substr(p.name - kPfx.size(), p.name_len + kPfx.size())
                   : all.substr(p.name, p.name_len);
  if (p.module != 0)
    s.module = all.substr(modules_[p.module - 1].first, modules_[p.module - 1].second);
  return s;
}

std::optional<Kallsyms::Symbol> Kallsyms::Lookup(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Packed& s) { return a < s.addr; });
  // In the padding of a function above addr: the highest padding that starts at or below
  // addr, unless a symbol between its start and addr is closer.
  const Packed* pad = nullptr;
  for (auto p = it; p != symbols_.end() && p->addr - addr <= pfx_size_; ++p) {
    if (p->padded)
      pad = &*p;
  }
  if (pad != nullptr && (it == symbols_.begin() || std::prev(it)->addr <= pad->addr - pfx_size_))
    return Named(*pad, true);
  if (it == symbols_.begin())
    return std::nullopt;
  --it;
  // kallsyms has no sizes: an address far past a symbol is in a gap (between the kernel's text
  // and the modules', past the last module), not in it.
  if (addr - it->addr >= kMaxSymbolSize)
    return std::nullopt;
  return Named(*it, false);
}

std::optional<uint64_t> Kallsyms::Address(std::string_view name) const {
  const std::string_view all(names_);
  const bool pfx = name.size() > kPfx.size() && name.substr(0, kPfx.size()) == kPfx;
  for (const Packed& s : symbols_) {
    if (s.module != 0)
      continue;
    if (all.substr(s.name, s.name_len) == name)
      return s.addr;
    if (pfx && s.padded && all.substr(s.name, s.name_len) == name.substr(kPfx.size()))
      return s.addr - pfx_size_;
  }
  return std::nullopt;
}

}  // namespace pbid
