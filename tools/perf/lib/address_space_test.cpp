// SPDX-License-Identifier: GPL-2.0
#include "address_space.h"

#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <random>
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

// Adds maps to process 10's table, then expects each probe address to land in the mapping with
// the probe's path ("-": none).
void ExpectProbes(const std::vector<Mapping>& maps,
                  const std::vector<std::pair<uint64_t, std::string>>& probes) {
  AddressSpace space;
  for (const Mapping& m : maps)
    space.Add(m);
  std::vector<std::string> want, got;
  for (const auto& [ip, path] : probes) {
    want.push_back(path);
    got.push_back(PathAt(space, 10, ip));
  }
  EXPECT_EQ(want, got);
}

// A mapping replaces what it overlaps, in one process's table: whole spans go, the spans it
// cuts keep their pieces outside it, and neighbours that only touch it are left alone.
TEST(AddressSpaceTest, AMappingReplacesOnlyWhatItOverlaps) {
  std::vector<Mapping> maps = {
      Map(10, 0x1000, 0x4000, "/a"),  // [0x1000, 0x5000)
      Map(10, 0x5000, 0x1000, "/b"),  // [0x5000, 0x6000)
      Map(10, 0x6000, 0x3000, "/c"),  // [0x6000, 0x9000)
      // Over the top of /a, all of /b and the bottom of /c.
      Map(10, 0x3000, 0x4000, "/n"),  // [0x3000, 0x7000)
      // Inside what is left of /c.
      Map(10, 0x7800, 0x100, "/d"),
      // Below everything, touching /a.
      Map(10, 0x800, 0x800, "/e"),
  };
  std::vector<std::pair<uint64_t, std::string>> probes = {
      {0x7ff, "-"},   {0x800, "/e"},  {0xfff, "/e"},  {0x1000, "/a"}, {0x2fff, "/a"},
      {0x3000, "/n"}, {0x5500, "/n"}, {0x6fff, "/n"}, {0x7000, "/c"}, {0x77ff, "/c"},
      {0x7800, "/d"}, {0x78ff, "/d"}, {0x7900, "/c"}, {0x8fff, "/c"}, {0x9000, "-"},
  };
  ExpectProbes(maps, probes);
}

// The other cases: a mapping that covers spans exactly (their neighbours stay whole), one that
// starts where another ends, and one above every span.
TEST(AddressSpaceTest, AMappingOverWholeSpansLeavesItsNeighboursWhole) {
  std::vector<Mapping> maps = {
      Map(10, 0x1000, 0x1000, "/a"),  // [0x1000, 0x2000)
      Map(10, 0x2000, 0x1000, "/b"),  // [0x2000, 0x3000)
      Map(10, 0x3000, 0x1000, "/c"),  // [0x3000, 0x4000)
      Map(10, 0x4000, 0x1000, "/d"),  // [0x4000, 0x5000)
      Map(10, 0x2000, 0x2000, "/n"),  // exactly /b and /c
      Map(10, 0x5000, 0x1000, "/e"),  // starts where /d ends
      Map(10, 0x9000, 0x1000, "/f"),  // above everything
  };
  // No two probes in a row fall in one span: the memo would answer a second probe there
  // without looking at the table.
  std::vector<std::pair<uint64_t, std::string>> probes = {
      {0x3fff, "/n"}, {0x1000, "/a"}, {0x2000, "/n"}, {0x1fff, "/a"}, {0x4000, "/d"},
      {0x5000, "/e"}, {0x4fff, "/d"}, {0x5fff, "/e"}, {0x9000, "/f"}, {0x6000, "-"},
      {0x9fff, "/f"}, {0x8fff, "-"},  {0xa000, "-"},  {0xfff, "-"},
  };
  ExpectProbes(maps, probes);
}

// An empty range adds nothing, and a process without a table finds nothing.
TEST(AddressSpaceTest, EmptyRangesAndUnknownProcessesHoldNothing) {
  AddressSpace space;
  EXPECT_EQ(AddressSpace::kNoMapping, space.Add(Map(10, 0x1000, 0, "/empty")));
  EXPECT_TRUE(space.mappings().empty());
  EXPECT_EQ("-", PathAt(space, 10, 0x1000));
}

// A child shares its parent's table until either maps something; an exec empties a table.
TEST(AddressSpaceTest, ForkSharesAndExecStartsAfresh) {
  AddressSpace space;
  space.Add(Map(10, 0x1000, 0x1000, "/bin/parent"));
  space.SetComm(10, true, "parent");
  space.Fork(11, 10);
  EXPECT_EQ("/bin/parent", PathAt(space, 11, 0x1000));
  EXPECT_EQ("parent", space.CommOf(11));
  space.Add(Map(11, 0x1000, 0x1000, "/bin/child"));
  EXPECT_EQ("/bin/child", PathAt(space, 11, 0x1000));
  EXPECT_EQ("/bin/parent", PathAt(space, 10, 0x1000));
  space.Add(Map(10, 0x8000, 0x1000, "/lib/libc"));
  space.Exec(10);
  // As in perf, the old mappings answer until new ones cover them: the exec's own samples
  // after its COMM have the old program's user ip.
  EXPECT_EQ("/bin/parent", PathAt(space, 10, 0x1000));
  space.Add(Map(10, 0x1000, 0x1000, "/bin/new"));
  EXPECT_EQ("/bin/new", PathAt(space, 10, 0x1000));
  EXPECT_EQ("/lib/libc", PathAt(space, 10, 0x8000));
  EXPECT_EQ("-", PathAt(space, 10, 0x4000));
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
  EXPECT_EQ("-", PathAt(space, 10, 0x2000));  // just past the end
  space.Fork(522, 10);                        // 522 = 10 + 2 * 256, a copy of 10's table
  EXPECT_EQ("/new", PathAt(space, 522, 0x1000));
  space.Exec(10);
  space.Add(Map(10, 0x1000, 0x1000, "/exec"));
  EXPECT_EQ("/exec", PathAt(space, 10, 0x1000));
  EXPECT_EQ("/new", PathAt(space, 522, 0x1000));
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

// A seeded model check: random mappings, short and long, over a small address range, and after
// each batch every page's mapping against a page-by-page model. The table grows to a couple of
// thousand spans, so mappings start, end and erase across the table's internal boundaries.
TEST(AddressSpaceTest, RandomMappingsMatchAPageModel) {
  constexpr uint64_t kPage = 0x1000, kPages = 8192, kBase = 0x400000;
  std::mt19937_64 rng(1);
  AddressSpace space;
  std::vector<size_t> model(kPages, AddressSpace::kNoMapping);
  for (int batch = 0; batch < 20; batch++) {
    for (int i = 0; i < 500; i++) {
      uint64_t len = rng() % 16 == 0 ? 1 + rng() % 2048 : 1 + rng() % 8;
      uint64_t first = rng() % kPages;
      uint64_t last = std::min(kPages, first + len);
      size_t idx = space.Add(Map(10, kBase + first * kPage, (last - first) * kPage, "/m"));
      std::fill(model.begin() + static_cast<std::ptrdiff_t>(first),
                model.begin() + static_cast<std::ptrdiff_t>(last), idx);
    }
    size_t wrong = 0;
    for (uint64_t p = 0; p < kPages; p++) {
      // Two probes per page, its first and last byte, and never twice in a row in one span
      // without the table having answered the first.
      if (space.FindIndex(10, kBase + p * kPage, false) != model[p] ||
          space.FindIndex(10, kBase + p * kPage + kPage - 1, false) != model[p])
        wrong++;
    }
    ASSERT_EQ(0u, wrong) << "batch " << batch;
  }
  EXPECT_EQ(AddressSpace::kNoMapping, space.FindIndex(10, kBase - 1, false));
  EXPECT_EQ(AddressSpace::kNoMapping, space.FindIndex(10, kBase + kPages * kPage, false));
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The CPU time of adding maps to one process's table, after checking that each mapping is
// found where it was put.
double SecondsToAdd(const std::vector<Mapping>& maps) {
  AddressSpace space;
  double t0 = ThreadCpuSeconds();
  for (const Mapping& m : maps)
    space.Add(m);
  double t = ThreadCpuSeconds() - t0;
  size_t lost = 0;
  for (size_t i = 0; i < space.mappings().size(); i++) {
    const Mapping& m = space.mappings()[i];
    if (space.FindIndex(m.pid, m.start, false) != i || space.FindIndex(m.pid, m.end, false) == i)
      lost++;
  }
  EXPECT_EQ(0u, lost);
  return t;
}

// One process that maps many files, as mmap hands out addresses from the top down: each new
// mapping lies below the last one. Adding them costs about what adding them at rising
// addresses does, and so does adding them in a random (seeded) order; a table that moved every
// span above the new one would take time quadratic in their number (50,000 here: 0.2 s,
// against 4 ms). The bound leaves room for a loaded machine: 4 times the rising
// order's time, plus 10 ms.
TEST(AddressSpaceTest, FallingAndRandomOrdersCostWhatRisingDoes) {
  constexpr size_t kMappings = 50000;
  std::vector<Mapping> rising;
  for (size_t i = 0; i < kMappings; i++)
    rising.push_back(Map(10, 0x10000000 + i * 0x2000, 0x1000, "/lib" + std::to_string(i % 100)));
  std::vector<Mapping> falling(rising.rbegin(), rising.rend());
  std::vector<Mapping> random = rising;
  std::shuffle(random.begin(), random.end(), std::mt19937_64(1));
  // Best of three rounds, the orders taking turns: the first round also pays for the heap
  // the process grows.
  double up = 1e9, down = 1e9, any = 1e9;
  for (int round = 0; round < 3; round++) {
    up = std::min(up, SecondsToAdd(rising));
    down = std::min(down, SecondsToAdd(falling));
    any = std::min(any, SecondsToAdd(random));
  }
  std::printf("adding %zu mappings: rising %.1f ms, falling %.1f ms, random %.1f ms\n", kMappings,
              up * 1e3, down * 1e3, any * 1e3);
  double bound = 4 * up + 0.010;
  EXPECT_LE(down, bound);
  EXPECT_LE(any, bound);
}

}  // namespace
}  // namespace internal
}  // namespace pbid
