// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/kallsyms.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "test_util.h"

namespace pbid {
namespace {

using testing::TempDir;

std::string Write(const TempDir& tmp, const std::string& text) {
  std::string p = tmp.path() + "/kallsyms";
  std::ofstream(p) << text;
  return p;
}

TEST(KallsymsTest, LooksUpTextSymbolsOnly) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp,
                                "ffffffff81000000 T _stext\n"
                                "ffffffff81000100 t helper\n"
                                "ffffffff81000180 D some_data\n"
                                "ffffffff81000200 T do_work\n"
                                "ffffffffc0000000 t mod_fn\t[mymod]\n"));
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  ASSERT_TRUE(k->usable());
  EXPECT_EQ(4u, k->size());
  EXPECT_EQ("helper", k->Lookup(0xffffffff81000150)->name);  // data symbol skipped
  EXPECT_EQ("helper", k->Lookup(0xffffffff810001ff)->name);
  EXPECT_EQ("do_work", k->Lookup(0xffffffff81000200)->name);
  EXPECT_EQ("mymod", k->Lookup(0xffffffffc0000010)->module);
  EXPECT_FALSE(k->Lookup(0xffffffff80ffffff));  // below the first symbol
  EXPECT_FALSE(k->Lookup(0xffffffffc0000000 + Kallsyms::kMaxSymbolSize));
}

// A padded kernel lists __pfx_NAME (its padding) right before NAME, for nearly half of its
// functions: NAME is kept as the end of the __pfx_ name. Each still names what it names, in
// the core kernel and in a module, and a name that only looks like the end of one is kept.
TEST(KallsymsTest, APaddedFunctionsNameIsKeptOnce) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp,
                                "ffffffff81000000 T _stext\n"
                                "ffffffff810000f0 t __pfx_do_work\n"
                                "ffffffff81000100 T do_work\n"
                                "ffffffff810001f0 T __pfx_other\n"
                                "ffffffff81000200 T another\n"
                                "ffffffff81000300 t __pfx_\n"
                                "ffffffff81000310 t x\n"
                                "ffffffffc00000f0 t __pfx_mod_fn\t[mymod]\n"
                                "ffffffffc0000100 t mod_fn\t[mymod]\n"));
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  EXPECT_EQ(9u, k->size());
  EXPECT_EQ("__pfx_do_work", k->Lookup(0xffffffff810000f8)->name);
  EXPECT_EQ("do_work", k->Lookup(0xffffffff81000104)->name);
  EXPECT_EQ("__pfx_other", k->Lookup(0xffffffff810001f4)->name);
  EXPECT_EQ("another", k->Lookup(0xffffffff81000204)->name);
  EXPECT_EQ("__pfx_", k->Lookup(0xffffffff81000304)->name);
  EXPECT_EQ("x", k->Lookup(0xffffffff81000314)->name);
  EXPECT_EQ("__pfx_mod_fn", k->Lookup(0xffffffffc00000f4)->name);
  EXPECT_EQ("mod_fn", k->Lookup(0xffffffffc0000104)->name);
  EXPECT_EQ("mymod", k->Lookup(0xffffffffc0000104)->module);
  EXPECT_EQ(0xffffffff81000100u, k->Address("do_work").value_or(0));
  // Every name once but do_work's and mod_fn's, and the module's.
  const size_t once =
      std::string("_stext__pfx_do_work__pfx_otheranother__pfx_xmymod__pfx_mod_fn").size();
  EXPECT_EQ(once, k->name_bytes());
}

// A padding is no entry of its own, but names what it named: below its function, unless a
// symbol lies inside it (listed out of order), or an alias of the function was listed before
// its padding. One of another length stays an entry. Its __pfx_ name has an address.
TEST(KallsymsTest, APaddingNamesWhatItNamedWithoutAnEntry) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp,
                                "ffffffff81000000 T _stext\n"
                                "ffffffff810000f0 t __pfx_a\n"
                                "ffffffff81000100 t a\n"
                                "ffffffff810001f8 t inside\n"
                                "ffffffff810001f0 t __pfx_b\n"
                                "ffffffff81000200 t b\n"
                                "ffffffff81000300 t alias_of_c\n"
                                "ffffffff810002f0 t __pfx_c\n"
                                "ffffffff81000300 t c\n"
                                "ffffffff810003e0 t __pfx_longer\n"
                                "ffffffff81000400 t longer\n"));
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  EXPECT_EQ(11u, k->size());
  EXPECT_EQ("_stext", k->Lookup(0xffffffff810000ef)->name);
  EXPECT_EQ("__pfx_a", k->Lookup(0xffffffff810000f0)->name);
  EXPECT_EQ(0xffffffff810000f0u, k->Lookup(0xffffffff810000ff)->addr);
  EXPECT_EQ("a", k->Lookup(0xffffffff81000100)->name);
  EXPECT_EQ("__pfx_b", k->Lookup(0xffffffff810001f0)->name);
  EXPECT_EQ("__pfx_b", k->Lookup(0xffffffff810001f7)->name);
  EXPECT_EQ("inside", k->Lookup(0xffffffff810001f8)->name);
  EXPECT_EQ("inside", k->Lookup(0xffffffff810001ff)->name);
  EXPECT_EQ("__pfx_c", k->Lookup(0xffffffff810002f4)->name);
  EXPECT_EQ("c", k->Lookup(0xffffffff81000300)->name);
  EXPECT_EQ("__pfx_longer", k->Lookup(0xffffffff810003e0)->name);
  EXPECT_EQ("longer", k->Lookup(0xffffffff81000400)->name);
  EXPECT_EQ(0xffffffff810001f0u, k->Address("__pfx_b").value_or(0));
  EXPECT_EQ(0xffffffff81000200u, k->Address("b").value_or(0));
  EXPECT_EQ(0xffffffff810003e0u, k->Address("__pfx_longer").value_or(0));
}

// What lies at a padding's own address answers for it when listed after it, as in a table
// with both entries; a padding at its function's own address (size 0) is no padding; a
// module's paddings merge as the core kernel's.
TEST(KallsymsTest, APaddingMergesOnlyWhereTheLookupIsTheSame) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp,
                                "ffffffff81000000 T _stext\n"
                                "ffffffff81000100 t __pfx_z\n"
                                "ffffffff81000100 t z\n"
                                "ffffffff810001f0 t __pfx_a\n"
                                "ffffffff81000200 t a\n"
                                "ffffffff810001f0 t s\n"
                                "ffffffff810002f0 t t\n"
                                "ffffffff810002f0 t __pfx_b\n"
                                "ffffffff81000300 t b\n"
                                "ffffffffc00000f0 t __pfx_m\t[mymod]\n"
                                "ffffffffc0000100 t m\t[mymod]\n"));
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  EXPECT_EQ(11u, k->size());
  EXPECT_EQ("_stext", k->Lookup(0xffffffff810000f0)->name);
  EXPECT_EQ("z", k->Lookup(0xffffffff81000100)->name);
  EXPECT_EQ(0xffffffff81000100u, k->Address("__pfx_z").value_or(0));
  EXPECT_EQ("s", k->Lookup(0xffffffff810001f0)->name);
  EXPECT_EQ("s", k->Lookup(0xffffffff810001ff)->name);
  EXPECT_EQ("a", k->Lookup(0xffffffff81000200)->name);
  EXPECT_EQ("__pfx_b", k->Lookup(0xffffffff810002f0)->name);
  EXPECT_EQ("__pfx_b", k->Lookup(0xffffffff810002ff)->name);
  EXPECT_EQ("b", k->Lookup(0xffffffff81000300)->name);
  EXPECT_EQ("__pfx_m", k->Lookup(0xffffffffc00000f8)->name);
  EXPECT_EQ("mymod", k->Lookup(0xffffffffc00000f8)->module);
  EXPECT_EQ("m", k->Lookup(0xffffffffc0000100)->name);
}

TEST(KallsymsTest, AddressOfACoreKernelTextSymbol) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp,
                                "ffffffff81000000 T _text\n"
                                "ffffffff81000180 D data_sym\n"
                                "ffffffff81000200 T do_work\n"
                                "ffffffffc0000000 t do_work\t[mymod]\n"
                                "ffffffffc0000100 t _text_mod\t[mymod]\n"));
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  EXPECT_EQ(0xffffffff81000000u, k->Address("_text"));
  EXPECT_EQ(0xffffffff81000200u, k->Address("do_work"));  // the core kernel's, not the module's
  EXPECT_FALSE(k->Address("data_sym"));                   // not text
  EXPECT_FALSE(k->Address("_text_mod"));                  // a module's only
  EXPECT_FALSE(k->Address("_tex"));
}

TEST(KallsymsTest, HiddenAddressesAreNotUsable) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp, "0000000000000000 T _stext\n0000000000000000 T do_work\n"));
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(k->usable());
  EXPECT_FALSE(k->Lookup(0x10));
}

TEST(KallsymsTest, MalformedLineIsAnErrorNamingTheLine) {
  TempDir tmp;
  auto k = Kallsyms::Load(Write(tmp, "ffffffff81000000 T _stext\nnot-a-line\n"));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(std::string::npos, k.error().ToString().find(":2"));
}

TEST(KallsymsTest, MissingFileIsAnError) {
  auto k = Kallsyms::Load("/nonexistent/kallsyms");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(0, k.error().sys_errno);
}

// A FIFO where a copy of kallsyms was looked for: refused at once, not waited on for a writer.
TEST(KallsymsTest, AFifoIsRefusedNotWaitedOn) {
  TempDir tmp;
  std::string fifo = tmp.path() + "/kallsyms";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  auto k = Kallsyms::Load(fifo);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(std::string::npos, k.error().ToString().find("not a regular file"))
      << k.error().ToString();
}

TEST(KallsymsTest, ProcKallsymsNamesAKnownFunction) {
  if (geteuid() != 0)
    GTEST_SKIP() << "/proc/kallsyms shows addresses only to root";
  auto k = Kallsyms::Load();
  ASSERT_TRUE(k.ok()) << k.error().ToString();
  if (!k->usable())
    GTEST_SKIP() << "kptr_restrict hides kernel addresses even from root";
  // Find schedule's address independently of the parser (grep), then look it up.
  auto r = testing::RunCommand("grep -m1 -E ' [Tt] schedule$' /proc/kallsyms");
  ASSERT_EQ(0, r.exit_code) << r.output;
  uint64_t addr = std::stoull(r.output.substr(0, r.output.find(' ')), nullptr, 16);
  auto sym = k->Lookup(addr + 1);
  ASSERT_TRUE(sym);
  // Aliases at the same address are possible; the address is what must match.
  EXPECT_EQ(addr, sym->addr);
}

}  // namespace
}  // namespace pbid
