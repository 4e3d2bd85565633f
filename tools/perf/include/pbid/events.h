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
};

// perf's generic events (its "Hardware event" and "Software event" lists), every one of which
// record -e opens; the first is record's default.
inline constexpr KnownEvent kKnownEvents[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu", "nanoseconds"},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock", "nanoseconds"},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", "count"},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches",
     "count"},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations", "count"},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", "count"},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions", "count"},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "cache-references",
     "count"},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses", "count"},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches", "count"},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses", "count"},
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
