// SPDX-License-Identifier: GPL-2.0
//
// pbid-exec-race SECONDS [PROGRAM]: the lab's reproducer of 5.10's vmacache race. Samples every
// CPU every 100 us with exec_race.bpf.c attached (build-id stacks in every sample, kernel mode
// included) while a child after another execs PROGRAM (default /bin/true), for SECONDS. Prints
// what ran; exits 0 when the program saw samples at 1 kHz or more and the children exec'd, 1
// when nothing was tested (too few samples: a kernel without high-resolution timers samples
// at its tick rate; no exec), 2 on a setup error. Whether the kernel survived is the lab's
// verdict: vm-run.sh reads the console.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "exec_race.h"
#include "exec_race.skel.h"
#include "pbid/event_group.h"

namespace {

struct SkelDeleter {
  void operator()(exec_race* s) const { exec_race__destroy(s); }
};
struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};

int Fail(const char* what) {
  std::fprintf(stderr, "pbid-exec-race: %s: %s\n", what, std::strerror(errno));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: pbid-exec-race SECONDS [PROGRAM]\n");
    return 2;
  }
  char* end = nullptr;
  long seconds = std::strtol(argv[1], &end, 10);
  if (*argv[1] == '\0' || *end != '\0' || seconds < 1 || seconds > 86400) {
    std::fprintf(stderr, "pbid-exec-race: SECONDS must be 1..86400, not '%s'\n", argv[1]);
    return 2;
  }
  const char* program = argc == 3 ? argv[2] : "/bin/true";

  std::unique_ptr<exec_race, SkelDeleter> skel(exec_race__open_and_load());
  if (!skel)
    return Fail("loading the BPF program");
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0)
    return Fail("counting the CPUs");
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links;
  for (int cpu : pbid::OnlineCpus()) {
    perf_event_attr attr = {};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 100000;  // ns of cpu-clock: 10 kHz, kernel mode included
    int fd =
        static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0)
      return Fail("perf_event_open");
    bpf_link* link = bpf_program__attach_perf_event(skel->progs.exec_race, fd);
    if (link == nullptr) {
      close(fd);
      return Fail("attaching the BPF program");
    }
    links.emplace_back(link);  // the link owns fd from here
  }

  auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  uint64_t execs = 0, failed = 0;
  while (std::chrono::steady_clock::now() < stop) {
    pid_t pid = fork();
    if (pid < 0)
      return Fail("fork");
    if (pid == 0) {
      execl(program, program, static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0)
      return Fail("waitpid");
    (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? execs : failed)++;
  }

  // A per-CPU map's lookup gives one value per possible CPU, each padded to 8 bytes.
  static_assert(sizeof(exec_race_buf) % 8 == 0, "per-CPU values are 8-byte aligned");
  std::vector<exec_race_buf> values(static_cast<size_t>(ncpu));
  uint32_t zero = 0;
  // By fd: Debian 11's libbpf (0.3) has no bpf_map__lookup_elem.
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.bufs), &zero, values.data()) != 0)
    return Fail("reading the counters");
  uint64_t samples = 0, with_ids = 0;
  for (const exec_race_buf& v : values) {
    samples += v.samples;
    with_ids += v.with_ids;
  }
  std::printf(
      "pbid-exec-race: %lds, %llu execs of %s (%llu failed), %llu samples, %llu with a "
      "build id\n",
      seconds, static_cast<unsigned long long>(execs), program,
      static_cast<unsigned long long>(failed), static_cast<unsigned long long>(samples),
      static_cast<unsigned long long>(with_ids));
  if (samples < static_cast<uint64_t>(seconds) * 1000) {
    std::printf("pbid-exec-race: under 1000 samples a second: nothing tested\n");
    return 1;
  }
  return execs > 0 ? 0 : 1;
}
