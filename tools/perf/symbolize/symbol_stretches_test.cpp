// SPDX-License-Identifier: GPL-2.0
//
// SymbolStretches against libdwfl itself, on real binaries: the fixture workload (symtab and
// DWARF), the C library (dynsym only, as Debian ships it) and this test program (a large C++
// symtab). Every address next to a symbol's start or end or a section's bound, where a missing
// stretch boundary would show, and a spread of others, asked in shuffled order so that each
// stretch is usually filled by another address than the one compared. The answers the index
// gives without asking libdwfl are compared the same way.
#include "symbol_stretches.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace pbid {
namespace {

const Dwfl_Callbacks kOffline = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

class Module {
 public:
  explicit Module(const std::string& path) : dwfl_(dwfl_begin(&kOffline)) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (dwfl_ == nullptr || fd < 0)
      return;
    dwfl_report_begin(dwfl_);
    mod_ = dwfl_report_elf(dwfl_, path.c_str(), path.c_str(), fd, 0, false);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    if (mod_ == nullptr)
      close(fd);
  }
  ~Module() {
    if (dwfl_ != nullptr)
      dwfl_end(dwfl_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Dwfl_Module* get() const { return mod_; }

 private:
  Dwfl* dwfl_;
  Dwfl_Module* mod_ = nullptr;
};

// Addresses around every point where libdwfl's answer may change, and a spread of others.
std::vector<Dwarf_Addr> Probes(Dwfl_Module* mod) {
  std::vector<Dwarf_Addr> points;
  int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr value;
    if (dwfl_module_getsym_info(mod, i, &sym, &value, nullptr, nullptr, nullptr) == nullptr)
      continue;
    points.push_back(value);
    points.push_back(value + sym.st_size);
  }
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  Elf_Scn* scn = nullptr;
  while (elf != nullptr && (scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr) {
      points.push_back(shdr.sh_addr + bias);
      points.push_back(shdr.sh_addr + shdr.sh_size + bias);
    }
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  // Bound the test's time on a large symbol table: libdwfl's own lookup is the slow side.
  const size_t kMaxPoints = 1500;
  std::vector<Dwarf_Addr> probes;
  size_t step = std::max<size_t>(1, points.size() / kMaxPoints);
  for (size_t i = 0; i < points.size(); i += step) {
    for (int d = -2; d <= 2; d++)
      probes.push_back(points[i] + d);
    // and somewhere inside the stretch that follows
    if (i + 1 < points.size())
      probes.push_back(points[i] + (points[i + 1] - points[i]) / 2);
  }
  std::mt19937_64 rng(42);
  std::shuffle(probes.begin(), probes.end(), rng);
  return probes;
}

void ExpectSameAsLibdwfl(const std::string& path) {
  Module m(path);
  ASSERT_NE(nullptr, m.get()) << path << ": " << dwfl_errmsg(-1);
  SymbolStretches stretches(m.get());
  std::vector<Dwarf_Addr> probes = Probes(m.get());
  ASSERT_GT(probes.size(), 100u) << path << " has too few symbols to test with";
  size_t named = 0;
  for (Dwarf_Addr a : probes) {
    GElf_Sym sym;
    GElf_Off off;
    const char* want = dwfl_module_addrinfo(m.get(), a, &off, &sym, nullptr, nullptr, nullptr);
    const char* got = stretches.Name(a);
    ASSERT_STREQ(want == nullptr ? "(none)" : want, got == nullptr ? "(none)" : got)
        << path << " at 0x" << std::hex << a;
    named += want != nullptr;
  }
  EXPECT_GT(named, probes.size() / 4) << path << ": too few addresses named to mean much";
  // The point of the index: far fewer libdwfl lookups than addresses asked. Most stretches
  // are answered from the covering symbols alone (a fifth is a wide margin: the probes crowd
  // the boundaries, where libdwfl is asked most).
  EXPECT_LT(stretches.dwfl_lookups(), probes.size() / 5) << path;
}

TEST(SymbolStretchesTest, SameAsLibdwflOnTheFixtureWorkload) {
  ExpectSameAsLibdwfl(testing::FixturePath("workload.full"));
}

TEST(SymbolStretchesTest, SameAsLibdwflOnTheCLibrary) {
  // The libc this test runs with, found through its own mappings.
  std::string libc;
  FILE* f = fopen("/proc/self/maps", "r");
  ASSERT_NE(nullptr, f);
  char line[4096];
  while (libc.empty() && fgets(line, sizeof(line), f) != nullptr) {
    // libc.so.6 on Debian 12; libc-2.31.so on Debian 11.
    const char* p = strchr(line, '/');
    if (p != nullptr && (strstr(p, "/libc.so") != nullptr || strstr(p, "/libc-2.") != nullptr)) {
      libc = p;
      libc.erase(libc.find_last_not_of('\n') + 1);
    }
  }
  fclose(f);
  ASSERT_FALSE(libc.empty()) << "no libc.so in /proc/self/maps";
  ExpectSameAsLibdwfl(libc);
}

TEST(SymbolStretchesTest, SameAsLibdwflOnALargeCxxSymtab) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  ExpectSameAsLibdwfl(self);
}

}  // namespace
}  // namespace pbid
