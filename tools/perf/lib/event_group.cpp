// SPDX-License-Identifier: GPL-2.0
#include "pbid/event_group.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace pbid {

namespace {

long SysPerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

}  // namespace

std::vector<int> OnlineCpus() {
  std::vector<int> cpus;
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string s;
  if (in && std::getline(in, s)) {
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ',')) {
      int a, b;
      if (sscanf(part.c_str(), "%d-%d", &a, &b) == 2) {
        for (int i = a; i <= b; i++)
          cpus.push_back(i);
      } else if (sscanf(part.c_str(), "%d", &a) == 1) {
        cpus.push_back(a);
      }
    }
  }
  if (cpus.empty()) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < (n > 0 ? n : 1); i++)
      cpus.push_back(static_cast<int>(i));
  }
  return cpus;
}

bool KernelTakesBuildIdAttr() {
  perf_event_attr a{};
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.mmap2 = 1;
  a.build_id = 1;
  long fd = SysPerfEventOpen(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return false;
  close(static_cast<int>(fd));
  return true;
}

Result<std::unique_ptr<EventGroup>> EventGroup::Open(const EventGroupSpec& spec,
                                                     std::vector<EventFallback>* applied) {
  std::unique_ptr<EventGroup> g(new EventGroup());
  Status s = g->OpenAll(spec);
  if (applied)
    *applied = g->fallbacks_;
  if (!s.ok())
    return s.error();
  return g;
}

EventGroup::~EventGroup() {
  for (const Mapping& m : mappings_)
    munmap(m.base, m.len);
  for (int fd : fds_)
    close(fd);
}

void EventGroup::Disable() {
  for (int fd : fds_)
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

Status EventGroup::OpenAll(const EventGroupSpec& spec) {
  auto open = spec.open ? spec.open : SysPerfEventOpen;
  perf_event_attr& a = attr_;
  a = spec.attr;
  size_t page = sysconf(_SC_PAGESIZE);
  for (int cpu : spec.cpus) {
    int leader = -1;
    for (pid_t pid : spec.pids) {
      long fd = open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
      if (fd < 0 && errno == EINVAL && a.build_id) {
        a.build_id = 0;
        fd = open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
          fallbacks_.push_back(EventFallback::kBuildIdDropped);
        } else {
          // The EINVAL was not about build_id: report it with the attr as asked.
          a.build_id = 1;
          errno = EINVAL;
        }
      }
      if (fd < 0 && (errno == EACCES || errno == EPERM) && !a.exclude_kernel) {
        a.exclude_kernel = 1;
        fd = open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
          fallbacks_.push_back(EventFallback::kKernelExcluded);
      }
      if (fd < 0 && errno == ESRCH && spec.pids.size() > 1)
        continue;  // thread exited
      if (fd < 0) {
        int e = errno;
        std::string what = "perf_event_open(" + spec.name + ", cpu " + std::to_string(cpu) + ")";
        if (e == ENOENT || e == EOPNOTSUPP)
          return Error::Of(ErrorKind::kUnsupported, what,
                           "event '" + spec.name + "' is not supported here");
        if (e == EINVAL && a.freq)
          return Error::Sys(what, e, "rejected (is -F above kernel.perf_event_max_sample_rate?)");
        return Error::Sys(what, e, "failed");
      }
      fds_.push_back(static_cast<int>(fd));
      uint64_t id = 0;
      if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
        return Error::Sys("PERF_EVENT_IOC_ID", errno, "failed");
      ids_.push_back(id);
      if (leader < 0) {
        size_t len = (spec.data_pages + 1) * page;
        void* base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED)
          return Error::Sys("mmap ring buffer", errno, std::to_string(spec.data_pages) + " pages");
        mappings_.push_back(Mapping{base, len});
        rings_.push_back(
            Ring{static_cast<int>(fd), RingBuffer(base, page, spec.data_pages * page)});
        leader = static_cast<int>(fd);
      } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0) {
        return Error::Sys("PERF_EVENT_IOC_SET_OUTPUT", errno, "failed");
      }
    }
  }
  if (fds_.empty())
    return Error::Of(ErrorKind::kIo, "", "no event could be opened (did the process exit?)");
  return Ok();
}

}  // namespace pbid
