// SPDX-License-Identifier: GPL-2.0
//
// The events perf-buildid knows by name, once: the name record's -e takes and writes to the
// file, the (type, config) it opens, and the pprof value type report gives their samples.
// The names are perf's own (tools/perf/util/parse-events.c).
#ifndef PBID_EVENTS_H_
#define PBID_EVENTS_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <string_view>

namespace pbid {

struct KnownEvent {
  std::string_view name;        // perf's name
  uint32_t type;                // perf_event_attr.type
  uint64_t config;              // perf_event_attr.config
  std::string_view pprof_type;  // pprof's sample type: "cpu" for cpu-clock, as pprof names it
  std::string_view unit;        // of the sample period
  bool recordable;              // record -e opens it
};

inline constexpr KnownEvent kKnownEvents[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu", "nanoseconds", true},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock", "nanoseconds", true},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", "count", true},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions", "count",
     false},
};

// The event of that name, or nullptr.
inline const KnownEvent* FindEvent(std::string_view name) {
  for (const KnownEvent& e : kKnownEvents) {
    if (e.name == name)
      return &e;
  }
  return nullptr;
}

// The event an attr opened, or nullptr.
inline const KnownEvent* FindEvent(uint32_t type, uint64_t config) {
  for (const KnownEvent& e : kKnownEvents) {
    if (e.type == type && e.config == config)
      return &e;
  }
  return nullptr;
}

}  // namespace pbid

#endif  // PBID_EVENTS_H_
