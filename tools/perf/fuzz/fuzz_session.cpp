// SPDX-License-Identifier: GPL-2.0
//
// The session: time-ordered replay, mapping tables, fork inheritance, build-id sources. Without
// callbacks, the stream and the survey (Session::Order) must agree on everything.
#include <cstdint>
#include <cstdlib>
#include <tuple>
#include <vector>

#include "pbid/perf_data.h"
#include "pbid/session.h"

namespace {

auto Key(const pbid::Mapping& m) {
  return std::make_tuple(m.pid, m.start, m.end, m.pgoff, m.path, m.build_id, m.source, m.samples,
                         m.record_offset);
}

void SameOutcome(const pbid::PerfDataReader& r) {
  pbid::Session streamed(r, pbid::Session::Order::kStream);
  pbid::Session surveyed(r, pbid::Session::Order::kSurvey);
  pbid::Status a = streamed.Process(), b = surveyed.Process();
  if (a.ok() != b.ok() || a.error().ToString() != b.error().ToString())
    abort();
  const pbid::SessionStats &sa = streamed.stats(), &sb = surveyed.stats();
  if (std::tie(sa.records, sa.samples, sa.lost, sa.lost_samples, sa.mmaps, sa.unresolved,
               sa.throttle, sa.bad_records, sa.unknown_id, sa.mappings_by_source) !=
      std::tie(sb.records, sb.samples, sb.lost, sb.lost_samples, sb.mmaps, sb.unresolved,
               sb.throttle, sb.bad_records, sb.unknown_id, sb.mappings_by_source))
    abort();
  if (streamed.dsos().size() != surveyed.dsos().size())
    abort();
  for (size_t i = 0; i < streamed.dsos().size(); i++) {
    const pbid::Dso &x = streamed.dsos()[i], &y = surveyed.dsos()[i];
    if (std::tie(x.path, x.build_id, x.source, x.samples) !=
        std::tie(y.path, y.build_id, y.source, y.samples))
      abort();
  }
  if (streamed.mappings().size() != surveyed.mappings().size())
    abort();
  for (size_t i = 0; i < streamed.mappings().size(); i++) {
    const pbid::Mapping &x = streamed.mappings()[i], &y = surveyed.mappings()[i];
    if (Key(x) != Key(y) || streamed.CommOf(x.pid) != surveyed.CommOf(y.pid))
      abort();
  }
}

}  // namespace

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
  SameOutcome(**r);
  return 0;
}
