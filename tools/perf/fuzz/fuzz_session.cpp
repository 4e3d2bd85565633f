// SPDX-License-Identifier: GPL-2.0
//
// The session: time-ordered replay, mapping tables, fork inheritance, build-id sources.
#include <cstdint>
#include <vector>

#include "pbid/perf_data.h"
#include "pbid/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = pbid::PerfDataReader::FromBytes(std::vector<uint8_t>(data, data + size));
  if (!r.ok())
    return 0;
  pbid::Session session(**r);
  uint64_t hits = 0;
  pbid::Status st = session.Process(
      [&](const pbid::SampleContext& s) {
        if (s.mapping)
          hits += session.dsos()[s.mapping->dso].samples;
        (void)session.CommOf(static_cast<int32_t>(s.sample.sample_id.pid));
      },
      [&](const pbid::RecordContext& c) {
        hits += c.record.header.size + c.attr_index;
        if (c.added)
          (void)session.Find(c.added->pid, c.added->start, c.added->kernel);
      });
  if (!st.ok())
    (void)st.error().ToString();
  for (const pbid::Mapping& m : session.mappings()) {
    (void)session.Find(m.pid, m.start, m.kernel);
    (void)session.Find(m.pid, m.end, m.kernel);
  }
  (void)hits;
  return 0;
}
