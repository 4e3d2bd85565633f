// SPDX-License-Identifier: GPL-2.0
//
// The event group against the running kernel: one ring per CPU that the CPU's other events
// write into, everything closed and unmapped when the group goes (also after a failure), and
// the fallbacks reported, with an opener that plays a kernel refusing what this one takes.
#include "pbid/event_group.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "pbid/records.h"

namespace pbid {
namespace {

long RealOpen(perf_event_attr* a, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(__NR_perf_event_open, a, pid, cpu, group, flags);
}

EventGroupSpec SelfSpec() {
  EventGroupSpec spec;
  perf_event_attr& a = spec.attr;
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a.sample_id_all = 1;
  a.mmap = 1;
  a.mmap2 = 1;
  spec.name = "dummy";
  spec.cpus = OnlineCpus();
  spec.pids = {0};
  spec.data_pages = 8;
  return spec;
}

// Skips the test where this process may not open events at all.
bool CanOpenEvents() {
  EventGroupSpec spec = SelfSpec();
  spec.attr.exclude_kernel = 1;
  long fd = RealOpen(&spec.attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return false;
  close(static_cast<int>(fd));
  return true;
}

bool IsOpen(int fd) {
  return fcntl(fd, F_GETFD) != -1;
}

int PerfMappings() {
  std::ifstream in("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(in, line);)
    n += line.find("[perf_event]") != std::string::npos;
  return n;
}

#define SKIP_WITHOUT_EVENTS()                                                  \
  do {                                                                         \
    if (!CanOpenEvents())                                                      \
      GTEST_SKIP() << "perf_event_open not allowed here: " << strerror(errno); \
  } while (0)

TEST(EventGroupTest, OneRingPerCpuAndEverythingGoesWithTheGroup) {
  SKIP_WITHOUT_EVENTS();
  EventGroupSpec spec = SelfSpec();
  spec.pids = {0, 0};  // two events per CPU: the second writes into the first's ring
  int before = PerfMappings();
  std::vector<int> fds;
  {
    std::vector<EventFallback> applied;
    auto g = EventGroup::Open(spec, &applied);
    ASSERT_TRUE(g.ok()) << g.error().ToString();
    EXPECT_TRUE(applied.empty());
    EXPECT_TRUE((*g)->fallbacks().empty());
    fds = (*g)->fds();
    ASSERT_EQ(2 * spec.cpus.size(), fds.size());
    ASSERT_EQ(fds.size(), (*g)->ids().size());
    EXPECT_NE((*g)->ids()[0], (*g)->ids()[1]);
    EXPECT_EQ(spec.cpus.size(), (*g)->rings().size());
    EXPECT_EQ(before + static_cast<int>(spec.cpus.size()), PerfMappings());
    for (int fd : fds)
      EXPECT_TRUE(IsOpen(fd));

    // An mmap reaches one CPU's ring twice, once from each event.
    size_t page = sysconf(_SC_PAGESIZE);
    void* map = mmap(nullptr, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, map);
    munmap(map, page);
    (*g)->Disable();
    int found = 0;
    for (EventGroup::Ring& r : (*g)->rings()) {
      auto n = r.buffer.Read([&](const uint8_t* p, size_t size) {
        auto h = ParseRecordHeader(p, size, false, 0);
        if (!h.ok() || h->type != PERF_RECORD_MMAP2)
          return true;
        EventAttr attr;
        attr.attr = (*g)->attr();
        auto m = ParseMmap2(RecordView{*h, p, 0, false}, &attr);
        found += m.ok() && m->start == reinterpret_cast<uint64_t>(map);
        return true;
      });
      ASSERT_TRUE(n.ok()) << n.error().ToString();
    }
    EXPECT_EQ(2, found);
  }
  for (int fd : fds)
    EXPECT_FALSE(IsOpen(fd)) << "fd " << fd;
  EXPECT_EQ(before, PerfMappings());
}

TEST(EventGroupTest, DropsBuildIdWhereTheKernelRejectsIt) {
  SKIP_WITHOUT_EVENTS();
  EventGroupSpec spec = SelfSpec();
  spec.attr.build_id = 1;
  int refused = 0;
  spec.open = [&](perf_event_attr* a, pid_t pid, int cpu, int group, unsigned long flags) {
    if (a->build_id) {
      refused++;
      errno = EINVAL;
      return -1L;
    }
    return RealOpen(a, pid, cpu, group, flags);
  };
  std::vector<EventFallback> applied;
  auto g = EventGroup::Open(spec, &applied);
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  EXPECT_EQ(1, refused) << "build_id is asked for once, not on every CPU";
  EXPECT_EQ(std::vector<EventFallback>{EventFallback::kBuildIdDropped}, applied);
  EXPECT_EQ(applied, (*g)->fallbacks());
  EXPECT_EQ(0u, (*g)->attr().build_id);
  EXPECT_EQ(spec.cpus.size(), (*g)->fds().size());
}

TEST(EventGroupTest, ExcludesTheKernelWhereNotAllowed) {
  SKIP_WITHOUT_EVENTS();
  EventGroupSpec spec = SelfSpec();
  spec.open = [&](perf_event_attr* a, pid_t pid, int cpu, int group, unsigned long flags) {
    if (!a->exclude_kernel) {
      errno = EACCES;
      return -1L;
    }
    return RealOpen(a, pid, cpu, group, flags);
  };
  std::vector<EventFallback> applied;
  auto g = EventGroup::Open(spec, &applied);
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  EXPECT_EQ(std::vector<EventFallback>{EventFallback::kKernelExcluded}, applied);
  EXPECT_EQ(1u, (*g)->attr().exclude_kernel);
}

// A failure after the first events leaves nothing open, and the fallbacks already applied
// are still reported: the user was told about them before the error.
TEST(EventGroupTest, FailureClosesWhatWasOpenAndKeepsTheFallbacks) {
  SKIP_WITHOUT_EVENTS();
  EventGroupSpec spec = SelfSpec();
  spec.attr.build_id = 1;
  spec.cpus = {0, 0};
  std::vector<int> opened;
  spec.open = [&](perf_event_attr* a, pid_t pid, int cpu, int group, unsigned long flags) {
    if (a->build_id) {
      errno = EINVAL;
      return -1L;
    }
    if (!opened.empty()) {
      errno = ENOENT;
      return -1L;
    }
    long fd = RealOpen(a, pid, cpu, group, flags);
    if (fd >= 0)
      opened.push_back(static_cast<int>(fd));
    return fd;
  };
  int before = PerfMappings();
  std::vector<EventFallback> applied;
  auto g = EventGroup::Open(spec, &applied);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ("perf_event_open(dummy, cpu 0): event 'dummy' is not supported here",
            g.error().ToString());
  EXPECT_EQ(ErrorKind::kUnsupported, g.error().kind);
  EXPECT_EQ(std::vector<EventFallback>{EventFallback::kBuildIdDropped}, applied);
  ASSERT_EQ(1u, opened.size());
  EXPECT_FALSE(IsOpen(opened[0]));
  EXPECT_EQ(before, PerfMappings());
}

TEST(EventGroupTest, NoEventIsAnError) {
  EventGroupSpec spec = SelfSpec();
  spec.pids = {0, 0};
  spec.open = [](perf_event_attr*, pid_t, int, int, unsigned long) {
    errno = ESRCH;  // every thread exited
    return -1L;
  };
  auto g = EventGroup::Open(spec);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ("no event could be opened (did the process exit?)", g.error().ToString());
}

}  // namespace
}  // namespace pbid
