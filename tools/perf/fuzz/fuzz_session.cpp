// SPDX-License-Identifier: GPL-2.0
//
// The session: time-ordered replay, mapping tables, fork inheritance, build-id sources. The
// stream and the survey (Session::Order), and a replay with callbacks, which decodes samples in
// their turn instead of when they are queued, must agree on everything.
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

// Aborts unless two replays of one file, `one` returning a and `other` b, agree.
void Same(const pbid::Session& one, const pbid::Status& a, const pbid::Session& other,
          const pbid::Status& b) {
  if (a.ok() != b.ok() || a.error().ToString() != b.error().ToString())
    abort();
  const pbid::SessionStats &sa = one.stats(), &sb = other.stats();
  if (std::tie(sa.records, sa.samples, sa.lost, sa.lost_samples, sa.mmaps, sa.unresolved,
               sa.throttle, sa.bad_records, sa.unknown_id, sa.mappings_by_source) !=
      std::tie(sb.records, sb.samples, sb.lost, sb.lost_samples, sb.mmaps, sb.unresolved,
               sb.throttle, sb.bad_records, sb.unknown_id, sb.mappings_by_source))
    abort();
  if (one.dsos().size() != other.dsos().size())
    abort();
  for (size_t i = 0; i < one.dsos().size(); i++) {
    const pbid::Dso &x = one.dsos()[i], &y = other.dsos()[i];
    if (std::tie(x.path, x.build_id, x.source, x.samples) !=
        std::tie(y.path, y.build_id, y.source, y.samples))
      abort();
  }
  if (one.mappings().size() != other.mappings().size())
    abort();
  for (size_t i = 0; i < one.mappings().size(); i++) {
    const pbid::Mapping &x = one.mappings()[i], &y = other.mappings()[i];
    if (Key(x) != Key(y) || one.CommOf(x.pid) != other.CommOf(y.pid))
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
  pbid::Session streamed(**r, pbid::Session::Order::kStream);
  pbid::Session surveyed(**r, pbid::Session::Order::kSurvey);
  pbid::Status a = streamed.Process(), b = surveyed.Process();
  Same(streamed, a, surveyed, b);
  Same(session, st, surveyed, b);
  return 0;
}
