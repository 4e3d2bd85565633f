// SPDX-License-Identifier: GPL-2.0
//
// The records of small crafted perf.data files, shared by the tests and by pbid-craft: one
// cpu-clock event laid out as perf-buildid record lays out a command's, plus an IDENTIFIER in
// every record, which a file of several events needs and tests of one can use; mappings with
// a fixed build id, and samples.
#ifndef PBID_TESTS_RECORD_FIXTURES_H_
#define PBID_TESTS_RECORD_FIXTURES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "pbid/records.h"

namespace pbid::fixtures {

inline constexpr char kBuildIdHex[] = "1111111111111111111111111111111111111111";

// cpu-clock with IDENTIFIER | IP | TID | TIME | PERIOD, sample_id_all, mmap, mmap2, task.
inline EventAttr SampleAttr(std::vector<uint64_t> ids, bool build_id = true) {
  EventAttr a;
  a.attr.size = sizeof(a.attr);
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  a.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                       PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  a.attr.sample_id_all = 1;
  a.attr.mmap = a.attr.mmap2 = a.attr.task = 1;
  a.attr.build_id = build_id;
  a.ids = std::move(ids);
  a.name = "cpu-clock";
  return a;
}

// r-x, with build id kBuildIdHex. `path` must outlive the record (the view points into it).
inline Mmap2Record Mmap2(int32_t pid, uint64_t start, uint64_t len, std::string_view path,
                         uint64_t id, uint64_t time) {
  Mmap2Record m;
  m.pid = m.tid = static_cast<uint32_t>(pid);
  m.start = start;
  m.len = len;
  m.prot = 5;
  m.filename = path;
  m.has_build_id = true;
  m.build_id = *BuildId::FromHex(kBuildIdHex);
  m.sample_id.pid = m.sample_id.tid = static_cast<uint32_t>(pid);
  m.sample_id.id = id;
  m.sample_id.time = time;
  return m;
}

inline SampleRecord Sample(uint16_t cpumode, uint64_t ip, int32_t pid, uint64_t id, uint64_t time) {
  SampleRecord s;
  s.cpumode = cpumode;
  s.ip = ip;
  s.period = 1;
  s.sample_id.pid = s.sample_id.tid = static_cast<uint32_t>(pid);
  s.sample_id.id = id;
  s.sample_id.time = time;
  return s;
}

}  // namespace pbid::fixtures

#endif  // PBID_TESTS_RECORD_FIXTURES_H_
