// SPDX-License-Identifier: GPL-2.0
//
// Builders for the records the tool writes itself: synthesized COMM/MMAP2 for processes that
// already run, MMAP2 rewritten with a build id read from the file, perf's user records, and
// arbitrary records for tests. Output is in the byte order given by `swap` (false = native).
// `attr` decides the trailing sample_id block (attr.sample_id_all, attr.sample_type); pass
// nullptr for records that carry none.
#ifndef PBID_RECORD_BUILDER_H_
#define PBID_RECORD_BUILDER_H_

#include <cstdint>
#include <vector>

#include "pbid/records.h"

namespace pbid {

using RecordBytes = std::vector<uint8_t>;

// The most a record header's 16-bit size can describe. The builders of records with a
// variable part (a name, a callchain) return an error, of kind kInvalidArgument, for a record
// that would be larger; those of fixed-size records cannot fail.
inline constexpr size_t kMaxRecordSize = 65535;

// MMAP2 in the build-id form (misc gains PERF_RECORD_MISC_MMAP_BUILD_ID) when m.has_build_id,
// else in the maj/min/ino form. misc carries the cpumode (PERF_RECORD_MISC_USER, ...).
Result<RecordBytes> BuildMmap2(const Mmap2Record& m, uint16_t misc, const EventAttr* attr,
                               bool swap = false);
Result<RecordBytes> BuildMmap(const MmapRecord& m, uint16_t misc, const EventAttr* attr,
                              bool swap = false);
Result<RecordBytes> BuildComm(const CommRecord& c, const EventAttr* attr, bool swap = false);
// type is PERF_RECORD_FORK or PERF_RECORD_EXIT.
RecordBytes BuildTask(uint32_t type, const TaskRecord& t, const EventAttr* attr, bool swap = false);
RecordBytes BuildLost(const LostRecord& l, const EventAttr* attr, bool swap = false);
RecordBytes BuildLostSamples(const LostSamplesRecord& l, const EventAttr* attr, bool swap = false);
RecordBytes BuildThrottle(const ThrottleRecord& t, const EventAttr* attr, bool swap = false);
// Writes the fields attr.sample_type asks for (no READ, nothing past CALLCHAIN).
Result<RecordBytes> BuildSample(const SampleRecord& s, const std::vector<uint64_t>& callchain,
                                const EventAttr& attr, bool swap = false);
// The fields after the callchain, each written when attr.sample_type has its bit. The values
// are written as given, so that a test can build a record that contradicts its attr.
struct SampleTail {
  std::vector<uint8_t> raw;    // PERF_SAMPLE_RAW: u32 size, then these bytes
  uint64_t branch_hw_idx = 0;  // written when attr.branch_sample_type has BRANCH_HW_INDEX
  std::vector<BranchEntry> branches;
  uint64_t regs_abi = PERF_SAMPLE_REGS_ABI_64;
  std::vector<uint64_t> regs;  // written unless regs_abi is PERF_SAMPLE_REGS_ABI_NONE
  std::vector<uint8_t> stack;  // PERF_SAMPLE_STACK_USER: size, bytes, then dyn_size if any
  uint64_t stack_dyn_size = 0;
};
Result<RecordBytes> BuildSample(const SampleRecord& s, const std::vector<uint64_t>& callchain,
                                const SampleTail& tail, const EventAttr& attr, bool swap = false);
// PERF_RECORD_HEADER_BUILD_ID as perf 6.1 writes it (filename padded to 64 bytes, size in the
// record: PERF_RECORD_MISC_BUILD_ID_SIZE), then 4 zeros that make its size a multiple of 8, as
// newer perfs require. misc is PERF_RECORD_MISC_USER or _KERNEL.
Result<RecordBytes> BuildHeaderBuildId(int32_t pid, uint16_t misc, const BuildId& id,
                                       std::string_view filename, bool swap = false);
// A header-only record, e.g. kRecordFinishedRound or kRecordFinishedInit.
RecordBytes BuildEmptyRecord(uint32_t type, bool swap = false);

}  // namespace pbid

#endif  // PBID_RECORD_BUILDER_H_
