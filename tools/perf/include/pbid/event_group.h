// SPDX-License-Identifier: GPL-2.0
//
// The sampling events of one recording: one event per CPU and target, opened from one
// perf_event_attr, with one ring buffer per CPU into which the CPU's other events write
// (PERF_EVENT_IOC_SET_OUTPUT). The object owns the fds and the mappings: they are unmapped
// and closed when it goes, also when opening fails half-way.
#ifndef PBID_EVENT_GROUP_H_
#define PBID_EVENT_GROUP_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pbid/result.h"
#include "pbid/ring_buffer.h"

namespace pbid {

// The CPUs in /sys/devices/system/cpu/online, else 0 .. sysconf(_SC_NPROCESSORS_ONLN) - 1.
std::vector<int> OnlineCpus();

// Whether the kernel puts build ids into MMAP2 records (attr.build_id: Linux 5.12, or 5.10
// with the backport), asked with a dummy event on the calling thread, which needs no privilege.
bool KernelTakesBuildIdAttr();

// What the group changed in the attr to get the events open, in the order it did so. The
// caller says so to the user: each changes what the recording holds.
enum class EventFallback {
  kBuildIdDropped,  // EINVAL with attr.build_id: a kernel without it (before 5.12)
  kKernelExcluded,  // EACCES or EPERM: not allowed to sample the kernel
};

struct EventGroupSpec {
  perf_event_attr attr{};
  std::string name;         // the event's name in errors: "perf_event_open(NAME, cpu N)"
  std::vector<int> cpus;    // one event per CPU and pid
  std::vector<pid_t> pids;  // -1: every process; with more than one, one that exited is skipped
  size_t data_pages = 128;  // per ring buffer, a power of two
  // perf_event_open(2). A test replaces it to play a kernel that refuses what this one takes.
  std::function<long(perf_event_attr*, pid_t, int, int, unsigned long)> open;
};

class EventGroup {
 public:
  // The ring of one CPU and the fd it is mapped from, which poll(2) watches.
  struct Ring {
    int fd;
    RingBuffer buffer;
  };

  // Opens the events and maps their ring buffers. *applied (when given) receives the
  // fallbacks also when a later event fails: what the user was told must not depend on it.
  static Result<std::unique_ptr<EventGroup>> Open(const EventGroupSpec& spec,
                                                  std::vector<EventFallback>* applied = nullptr);
  ~EventGroup();
  EventGroup(const EventGroup&) = delete;
  EventGroup& operator=(const EventGroup&) = delete;

  // The attr the events were opened with: the spec's, less the fallbacks.
  const perf_event_attr& attr() const { return attr_; }
  const std::vector<int>& fds() const { return fds_; }
  const std::vector<uint64_t>& ids() const { return ids_; }  // PERF_EVENT_IOC_ID, as fds()
  std::vector<Ring>& rings() { return rings_; }
  const std::vector<EventFallback>& fallbacks() const { return fallbacks_; }

  // Stops every event; what they wrote stays in the rings to be read.
  void Disable();

 private:
  struct Mapping {
    void* base;
    size_t len;
  };

  EventGroup() = default;
  Status OpenAll(const EventGroupSpec& spec);

  perf_event_attr attr_{};
  std::vector<int> fds_;
  std::vector<uint64_t> ids_;
  std::vector<Mapping> mappings_;
  std::vector<Ring> rings_;
  std::vector<EventFallback> fallbacks_;
};

}  // namespace pbid

#endif  // PBID_EVENT_GROUP_H_
