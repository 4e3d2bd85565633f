// SPDX-License-Identifier: GPL-2.0
#include "pbid/elf_build_id.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "util/test_util.h"

namespace pbid {
namespace {

std::string Fixture(const char* name) {
  return std::string(testing::LibFixturesDir()) + "/" + name;
}

// What binutils says, as the reference.
std::string Readelf(const std::string& path) {
  std::string cmd = "readelf -n '" + path + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p)
    return "";
  char line[512];
  std::string id;
  while (fgets(line, sizeof(line), p)) {
    char hex[128];
    if (sscanf(line, " Build ID: %127s", hex) == 1)
      id = hex;
  }
  pclose(p);
  return id;
}

std::vector<char> Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ElfStyleTest : public ::testing::TestWithParam<std::pair<const char*, size_t>> {};

TEST_P(ElfStyleTest, MatchesReadelf) {
  auto [name, size] = GetParam();
  std::string path = Fixture(name);
  std::string expected = Readelf(path);
  ASSERT_FALSE(expected.empty()) << "readelf found no id in " << path;
  auto id = ReadElfBuildId(path);
  ASSERT_TRUE(id.ok()) << id.error().ToString();
  ASSERT_TRUE(id->has_value());
  EXPECT_EQ(expected, (*id)->ToHex());
  EXPECT_EQ(size, (*id)->size());
  // Same bytes from memory.
  std::vector<char> b = Bytes(path);
  auto mem = ReadElfBuildIdMemory(b.data(), b.size(), name);
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ(**id, **mem);
}

INSTANTIATE_TEST_SUITE_P(Styles, ElfStyleTest,
                         ::testing::Values(std::make_pair("sha1.so", size_t{20}),
                                           std::make_pair("md5.so", size_t{16}),
                                           std::make_pair("uuid.so", size_t{16}),
                                           std::make_pair("elf32.elf", size_t{20})),
                         [](const auto& info) {
                           std::string n = info.param.first;
                           return n.substr(0, n.find('.'));
                         });

TEST(ElfBuildIdTest, NoBuildIdIsNotAnError) {
  auto id = ReadElfBuildId(Fixture("none.so"));
  ASSERT_TRUE(id.ok()) << id.error().ToString();
  EXPECT_FALSE(id->has_value());
  EXPECT_EQ("", Readelf(Fixture("none.so")));
}

TEST(ElfBuildIdTest, FailuresAreErrors) {
  auto missing = ReadElfBuildId("/nonexistent/lib.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ENOENT, missing.error().sys_errno);
  auto not_elf = ReadElfBuildId("/proc/self/cmdline");
  ASSERT_FALSE(not_elf.ok());
  // A truncated ELF: either an error or, if the notes survived, the right id; never another.
  std::vector<char> b = Bytes(Fixture("sha1.so"));
  for (size_t n : {size_t{0}, size_t{16}, size_t{64}, size_t{100}, b.size() / 2}) {
    auto r = ReadElfBuildIdMemory(b.data(), n, "truncated");
    if (r.ok() && r->has_value()) {
      EXPECT_EQ(Readelf(Fixture("sha1.so")), (*r)->ToHex()) << n;
    }
    if (n < 64) {
      EXPECT_FALSE(r.ok() && r->has_value()) << n;
    }
  }
}

// "Failed to read" and "no build ID" are different results: every prefix of an ELF that has
// a build id gives that id or an error, never ok-without-id.
TEST(ElfBuildIdTest, TruncatedElfIsNeverNone) {
  for (const char* f : {"sha1.so", "elf32.elf"}) {
    std::vector<char> b = Bytes(Fixture(f));
    std::string want = Readelf(Fixture(f));
    ASSERT_FALSE(want.empty()) << f;
    for (size_t n = 0; n < b.size(); n++) {
      std::vector<char> prefix(b.begin(), b.begin() + n);
      auto r = ReadElfBuildIdMemory(prefix.data(), prefix.size(), "truncated");
      if (!r.ok())
        continue;
      ASSERT_TRUE(r->has_value()) << f << " cut to " << n << " bytes read as 'no build id'";
      EXPECT_EQ(want, (*r)->ToHex()) << f << " cut to " << n;
    }
  }
}

TEST(ElfBuildIdTest, BareNotes) {
  // namesz=4 descsz=4 type=NT_GNU_BUILD_ID(3) "GNU\0" deadbeef
  const unsigned char notes[] = {4, 0, 0,   0,   4,   0, 0,    0,    3,    0,
                                 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef};
  auto id = ReadNotesBuildId(notes, sizeof(notes), "notes");
  ASSERT_TRUE(id.ok()) << id.error().ToString();
  ASSERT_TRUE(id->has_value());
  EXPECT_EQ("deadbeef", (*id)->ToHex());
}

TEST(ElfBuildIdTest, KernelMatchesPerf) {
  auto id = KernelBuildId();
  if (!id.ok() || !id->has_value())
    GTEST_SKIP() << "no /sys/kernel/notes build id";
  if (access("/usr/bin/perf", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/perf";
  FILE* p = popen("/usr/bin/perf buildid-list -k 2>/dev/null", "r");
  ASSERT_NE(nullptr, p);
  char line[128] = {};
  char* got = fgets(line, sizeof(line), p);
  pclose(p);
  ASSERT_NE(nullptr, got);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  EXPECT_EQ(s, (*id)->ToHex());
}

// Each module's id is its own notes file's (perf 6.17 gave every module the first one's).
TEST(ElfBuildIdTest, KernelModuleFromSysfs) {
  testing::TempDir tmp;
  const unsigned char a[] = {4, 0, 0,   0,   4,   0, 0,    0,    3,    0,
                             0, 0, 'G', 'N', 'U', 0, 0xaa, 0xaa, 0xaa, 0x01};
  const unsigned char b[] = {4, 0, 0,   0,   4,   0, 0,    0,    3,    0,
                             0, 0, 'G', 'N', 'U', 0, 0xbb, 0xbb, 0xbb, 0x02};
  for (auto [name, notes] : {std::pair{"mod_a", a}, std::pair{"mod_b", b}}) {
    std::string dir = tmp.path() + "/" + name + "/notes";
    ASSERT_EQ(0, system(("mkdir -p " + dir).c_str()));
    std::ofstream(dir + "/.note.gnu.build-id", std::ios::binary)
        .write(reinterpret_cast<const char*>(notes), sizeof(a));
  }
  ASSERT_EQ(0, system(("mkdir -p " + tmp.path() + "/no_id/notes").c_str()));
  auto ia = KernelModuleBuildId("mod_a", tmp.path());
  auto ib = KernelModuleBuildId("mod_b", tmp.path());
  ASSERT_TRUE(ia.ok() && ia->has_value());
  ASSERT_TRUE(ib.ok() && ib->has_value());
  EXPECT_EQ("aaaaaa01", (*ia)->ToHex());
  EXPECT_EQ("bbbbbb02", (*ib)->ToHex());
  auto none = KernelModuleBuildId("no_id", tmp.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace pbid
