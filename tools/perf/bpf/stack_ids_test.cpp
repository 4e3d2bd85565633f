// SPDX-License-Identifier: GPL-2.0
//
// The BPF program on the machine's own kernel: a real sampling event on the workload, the
// program attached, the ring buffer drained. The kernel's (id, offset) pairs must name the
// workload's files with readelf's ids, at the offsets that the workload's own mappings give.
#include "pbid/bpf/stack_ids.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "util/test_util.h"

namespace pbid {
namespace {

struct Map {
  uint64_t start, end, pgoff;
  std::string path;
};

std::vector<Map> ReadMaps(pid_t pid) {
  std::vector<Map> maps;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    Map m{};
    char perms[8], path[4096] = "";
    unsigned dev_major, dev_minor;
    unsigned long ino;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %lu %4095s", &m.start,
               &m.end, perms, &m.pgoff, &dev_major, &dev_minor, &ino, path) >= 7) {
      m.path = path;
      maps.push_back(m);
    }
  }
  return maps;
}

// readelf's ids of the workload and its library, by file name.
// The build's workload, or the one PBID_WORKLOAD names (a copy in a VM, with its .buildids).
std::string Workload() {
  const char* w = getenv("PBID_WORKLOAD");
  return w != nullptr ? w : testing::WorkloadBinary();
}

std::map<std::string, std::string> ExpectedIds() {
  std::map<std::string, std::string> ids;
  std::ifstream in(Workload() + ".buildids");
  std::string hex, name;
  while (in >> hex >> name)
    ids[name] = hex;
  return ids;
}

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

TEST(BpfStackIdsTest, FramesCarryReadelfsIdsAtTheMappingsOffsets) {
  auto bpf = BpfStackIds::Load();
  if (!bpf.ok()) {
    // Legitimately absent (no privilege, a kernel built without BPF), except where the lab
    // built the kernel for it.
    if (getenv("PBID_BPF_EXPECT") != nullptr)
      FAIL() << "BPF expected here: " << bpf.error().ToString();
    GTEST_SKIP() << "BPF unavailable here: " << bpf.error().ToString();
  }
  auto expected = ExpectedIds();
  ASSERT_EQ(2u, expected.size()) << "cannot read " << Workload() << ".buildids";
  const std::string workload = Workload();

  // The workload waits for a byte on stdin before it spins, so that the event is attached
  // first and its maps can be read while it runs.
  int go[2];
  ASSERT_EQ(0, pipe(go));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1)
      _exit(127);
    execl(workload.c_str(), workload.c_str(), "400", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(go[0]);

  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 1000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.exclude_kernel = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, child, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_TRUE((*bpf)->Attach(fd).ok());
  ASSERT_EQ(1, write(go[1], "x", 1));
  close(go[1]);

  usleep(200 * 1000);
  std::vector<Map> maps = ReadMaps(child);
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  size_t stacks = 0, with_id = 0, checked = 0;
  auto drained = (*bpf)->Drain([&](const BpfUserStack& s) {
    EXPECT_EQ(static_cast<uint32_t>(child), s.pid);
    stacks++;
    for (const BpfFrame& f : s.frames) {
      if (!f.has_id)
        continue;
      with_id++;
      for (const Map& m : maps) {
        if (f.ip < m.start || f.ip >= m.end)
          continue;
        auto it = expected.find(Basename(m.path));
        if (it == expected.end())
          break;
        // Both the file and the offset: the frame is where the workload's mapping says.
        auto id = BuildId::FromBytes(f.id, 20);
        ASSERT_TRUE(id.ok());
        EXPECT_EQ(it->second, id->ToHex()) << m.path;
        EXPECT_EQ(f.ip - m.start + m.pgoff, f.file_offset) << m.path << " ip " << f.ip;
        checked++;
        break;
      }
    }
  });
  ASSERT_TRUE(drained.ok()) << drained.error().ToString();
  EXPECT_GT(stacks, 50u) << "the program saw too few samples of a 400 ms spin";
  EXPECT_GT(with_id, 0u);
  EXPECT_GT(checked, stacks / 2) << "most samples are in the workload's own code";
  auto dropped = (*bpf)->dropped();
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(0u, *dropped);
  // The event's descriptor stays ours: the program going does not close it (libbpf closes the
  // descriptor it was given), and ours can still be closed once, after it.
  bpf->reset();
  EXPECT_EQ(0, fcntl(fd, F_GETFD) < 0 ? errno : 0) << "the BPF object closed the caller's fd";
  EXPECT_EQ(0, close(fd));
}

}  // namespace
}  // namespace pbid
