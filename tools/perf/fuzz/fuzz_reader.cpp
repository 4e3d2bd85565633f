// SPDX-License-Identifier: GPL-2.0
//
// The reader and every record decoder: whatever Open() accepts must decode, or fail with an
// error, record by record, without reading outside the file. The same bytes also go through
// Open() (the file read through the window, which must read what memory holds) and the
// streaming path (-i -).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"

namespace {

// Results are discarded: the sanitizers judge the work, the values do not matter.
template <typename T>
void Touch(const pbid::Result<T>& r) {
  if (!r.ok())
    (void)r.error().ToString();
}

// Keeps a value the compiler would otherwise drop, and with it the reads that made it.
void Sink(uint64_t v) {
  static volatile uint64_t sink;
  sink = sink + v;
}

void DecodeAll(const pbid::PerfDataReader& reader) {
  for (const pbid::EventAttr& a : reader.attrs())
    (void)a.SampleIdSize();
  for (int bit = 0; bit < pbid::kFeatBits; bit++)
    (void)reader.FeatureBytes(bit);
  (void)reader.ForEachRecord([&](const pbid::RecordView& r) {
    const pbid::EventAttr* attr = reader.AttrForRecord(r);
    if (!reader.attrs().empty())
      (void)pbid::RecordEventId(r, reader.attrs()[0]);
    Touch(pbid::ParseSampleId(r, attr));
    switch (r.header.type) {
      case PERF_RECORD_MMAP: Touch(pbid::ParseMmap(r, attr)); break;
      case PERF_RECORD_MMAP2: Touch(pbid::ParseMmap2(r, attr)); break;
      case PERF_RECORD_COMM: Touch(pbid::ParseComm(r, attr)); break;
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT: Touch(pbid::ParseTask(r, attr)); break;
      case PERF_RECORD_LOST: Touch(pbid::ParseLost(r, attr)); break;
      case PERF_RECORD_LOST_SAMPLES: Touch(pbid::ParseLostSamples(r, attr)); break;
      case PERF_RECORD_THROTTLE:
      case PERF_RECORD_UNTHROTTLE: Touch(pbid::ParseThrottle(r, attr)); break;
      case PERF_RECORD_SAMPLE:
        if (attr) {
          auto s = pbid::ParseSample(r, *attr);
          if (s.ok()) {
            uint64_t sum = 0;
            for (uint64_t i = 0; i < s->callchain.size(); i++)
              sum += s->callchain[i];
            // The fields after the callchain are read on access: read every byte the
            // decoder let through, so that the sanitizers see any that is not the record's.
            pbid::RawView raw = s->raw(r);
            for (uint32_t i = 0; i < raw.size; i++)
              sum += raw.data[i];
            pbid::BranchStackView branches = s->branch_stack(r, *attr);
            for (uint64_t i = 0; i < branches.size(); i++)
              sum += branches[i].from + branches[i].to + branches[i].flags;
            sum += s->branch_hw_idx(r, *attr);
            pbid::RegsView regs = s->regs_user(r, *attr);
            for (uint64_t i = 0; i < regs.size(); i++)
              sum += regs[i];
            for (unsigned reg = 0; reg < 64; reg++)
              sum += regs.Get(reg).value_or(0);
            pbid::StackView stack = s->stack_user(r);
            for (uint32_t i = 0; i < stack.size; i++)
              sum += stack.data[i];
            Sink(sum);
          }
        }
        break;
      case pbid::kRecordHeaderBuildId: Touch(pbid::ParseHeaderBuildId(r)); break;
      default: break;
    }
    return pbid::Ok();
  });
}

}  // namespace

// A file read through the window (pread into a ring of chunks) must hand out the bytes the
// same file in memory holds, record for record, and stop where it stops.
void SameAsInMemory(const pbid::PerfDataReader& file, const pbid::PerfDataReader& memory) {
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> seen;
  pbid::Status walked = memory.ForEachRecord([&](const pbid::RecordView& r) {
    seen.emplace_back(r.offset, std::vector<uint8_t>(r.data, r.data + r.header.size));
    return pbid::Ok();
  });
  size_t i = 0;
  pbid::Status again = file.ForEachRecord([&](const pbid::RecordView& r) {
    if (i >= seen.size() || seen[i].first != r.offset ||
        !std::equal(seen[i].second.begin(), seen[i].second.end(), r.data, r.data + r.header.size))
      abort();
    i++;
    return pbid::Ok();
  });
  if (i != seen.size() || walked.ok() != again.ok())
    abort();
  // Read again last to first, as a replay does: from the ring, or from the mapping behind it.
  for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
    pbid::RecordView r = file.RecordAt(it->first);
    if (!std::equal(it->second.begin(), it->second.end(), r.data, r.data + r.header.size))
      abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = pbid::PerfDataReader::FromBytes(std::vector<uint8_t>(data, data + size));
  if (r.ok())
    DecodeAll(**r);
  static pbid::fuzz::InputFile input;
  auto f = pbid::PerfDataReader::Open(input.Write(data, size));
  if (f.ok() != r.ok())
    abort();  // the same validation either way
  if (f.ok()) {
    DecodeAll(**f);
    SameAsInMemory(**f, **r);
  }
  auto s = pbid::PerfDataReader::FromStream(input.fd(), "fuzz input");
  if (s.ok())
    DecodeAll(**s);
  return 0;
}
