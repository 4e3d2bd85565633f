// SPDX-License-Identifier: GPL-2.0
#include "address_space.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace pbid {
namespace internal {
namespace {

Mapping Map(int32_t pid, uint64_t start, uint64_t len, const std::string& path) {
  Mapping m;
  m.pid = pid;
  m.start = start;
  m.end = start + len;
  m.path = path;
  return m;
}

std::string PathAt(const AddressSpace& space, int32_t pid, uint64_t ip, bool kernel = false) {
  const Mapping* m = space.Find(pid, ip, kernel);
  return m ? m->path : "-";
}

// A mapping replaces what it overlaps and leaves the pieces of its neighbours outside it.
TEST(AddressSpaceTest, AMappingCutsWhatItOverlaps) {
  AddressSpace space;
  space.Add(Map(10, 0x1000, 0x4000, "/a"));  // [0x1000, 0x5000)
  space.Add(Map(10, 0x5000, 0x4000, "/c"));  // [0x5000, 0x9000)
  space.Add(Map(10, 0x3000, 0x3000, "/n"));  // [0x3000, 0x6000)
  EXPECT_EQ("/a", PathAt(space, 10, 0x2fff));
  EXPECT_EQ("/n", PathAt(space, 10, 0x3000));
  EXPECT_EQ("/n", PathAt(space, 10, 0x5fff));
  EXPECT_EQ("/c", PathAt(space, 10, 0x6000));
  EXPECT_EQ("-", PathAt(space, 10, 0x9000));
  EXPECT_EQ("-", PathAt(space, 11, 0x2000));
  EXPECT_EQ(AddressSpace::kNoMapping, space.Add(Map(10, 0x1000, 0, "/empty")));
  EXPECT_EQ(3u, space.mappings().size());
}

// A child shares its parent's table until either maps something; an exec empties a table.
TEST(AddressSpaceTest, ForkSharesAndExecEmpties) {
  AddressSpace space;
  space.Add(Map(10, 0x1000, 0x1000, "/bin/parent"));
  space.SetComm(10, true, "parent");
  space.Fork(11, 10);
  EXPECT_EQ("/bin/parent", PathAt(space, 11, 0x1000));
  EXPECT_EQ("parent", space.CommOf(11));
  space.Add(Map(11, 0x1000, 0x1000, "/bin/child"));
  EXPECT_EQ("/bin/child", PathAt(space, 11, 0x1000));
  EXPECT_EQ("/bin/parent", PathAt(space, 10, 0x1000));
  space.Exec(10);
  EXPECT_EQ("-", PathAt(space, 10, 0x1000));
  EXPECT_EQ("/bin/child", PathAt(space, 11, 0x1000));
  EXPECT_EQ(":12", space.CommOf(12));
  EXPECT_EQ("swapper", space.CommOf(0));
}

// The memo of each process's last hit must not outlive a change to its table, nor answer for
// another process in the same slot (pids 256 apart).
TEST(AddressSpaceTest, TheMemoFollowsTheTables) {
  AddressSpace space;
  space.Add(Map(10, 0x1000, 0x1000, "/old"));
  space.Add(Map(266, 0x1000, 0x1000, "/other"));
  EXPECT_EQ("/old", PathAt(space, 10, 0x1000));
  EXPECT_EQ("/other", PathAt(space, 266, 0x1000));
  EXPECT_EQ("/old", PathAt(space, 10, 0x1000));
  space.Add(Map(10, 0x1000, 0x1000, "/new"));
  EXPECT_EQ("/new", PathAt(space, 10, 0x1000));
  space.Exec(10);
  EXPECT_EQ("-", PathAt(space, 10, 0x1000));
}

// Kernel samples above every kernel mapping fall back to the kernel image, not to a module.
TEST(AddressSpaceTest, KernelSamplesPastTheImageFallBackToIt) {
  AddressSpace space;
  space.Add(Map(AddressSpace::kKernelTable, 0xffff0000, 0x1000, "[kernel.kallsyms]_text"));
  space.Add(Map(AddressSpace::kKernelTable, 0xffff8000, 0x1000, "/lib/modules/m.ko"));
  EXPECT_EQ("[kernel.kallsyms]_text", PathAt(space, 5, 0xffff0010, true));
  EXPECT_EQ("/lib/modules/m.ko", PathAt(space, 5, 0xffff8010, true));
  EXPECT_EQ("[kernel.kallsyms]_text", PathAt(space, 5, 0xffffa000, true));
  EXPECT_EQ("-", PathAt(space, 5, 0xfffe0000, true));
  EXPECT_EQ("-", PathAt(space, 5, 0xffffa000, false));
  space.Clear();
  EXPECT_EQ("-", PathAt(space, 5, 0xffff0010, true));
  EXPECT_TRUE(space.mappings().empty());
}

}  // namespace
}  // namespace internal
}  // namespace pbid
