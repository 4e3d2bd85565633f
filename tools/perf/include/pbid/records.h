// SPDX-License-Identifier: GPL-2.0
//
// The perf record ABI in one place: constants, the event attribute, and typed, decoded views of
// the records the tool meets. Views are decoded from the raw bytes of a ring buffer or an
// mmap'd perf.data file (either byte order); strings and callchains point into those bytes,
// so a view is valid only as long as the bytes it came from.
#ifndef PBID_RECORDS_H_
#define PBID_RECORDS_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/result.h"

namespace pbid {

// The misc bits, under the names this library uses: the values from the uapi header this builds
// against (include/uapi, 5.10's with the series), but for perf's own build-ID-size bit, which
// is the tool's (tools/perf/util/event.h), not the kernel's. Record type 21 is newer than the
// header (5.16).
inline constexpr uint16_t kMiscMmapBuildId = PERF_RECORD_MISC_MMAP_BUILD_ID;
inline constexpr uint16_t kMiscCommExec = PERF_RECORD_MISC_COMM_EXEC;
inline constexpr uint16_t kMiscCpumodeMask = PERF_RECORD_MISC_CPUMODE_MASK;
inline constexpr uint16_t kMiscBuildIdSize = 1 << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE
inline constexpr uint32_t kRecordAuxOutputHwId = 21;   // PERF_RECORD_AUX_OUTPUT_HW_ID

// A cpumode (header.misc & kMiscCpumodeMask) that perf counts as the kernel's: the host's or a
// guest's.
inline constexpr bool IsKernelCpumode(uint16_t cpumode) {
  return cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL;
}

// Records the perf tool itself puts into perf.data (tools/perf/lib/include/perf/event.h).
enum UserRecordType : uint32_t {
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,
};

// perf's names for the kernel image: its DSO and its entry in the build-ID table, and (after
// the reference symbol) the file name of the kernel map's MMAP record.
inline constexpr char kKernelDsoName[] = "[kernel.kallsyms]";
inline constexpr char kKernelMmapName[] = "[kernel.kallsyms]_text";

struct RecordView;
struct EventAttr;

// One row per record type this tool knows, kernel and perf's own, in one table
// (lib/record_types.cpp, sorted by type): what every reader of records needs to know of a
// type. Adding a type is adding its row (and its decoder below, if it has fields to read).
struct RecordType {
  uint32_t type;
  const char* name;  // perf's: "PERF_RECORD_MMAP2"
  // Decodes a record of this type and drops the result: Ok, or the decoder's error naming the
  // field and offset. nullptr: the type has no decoder, nothing to check. attr is the record's
  // event, nullptr if none owns it. A session checks every kernel record this way whose type
  // it does not otherwise use, so that a file it replays holds no record that does not decode.
  Status (*check)(const RecordView& r, const EventAttr* attr);
  // What the record holds, as `perf report -D` prints it after the name ("" when the row has
  // no decoder); fails as check does.
  Result<std::string> (*describe)(const RecordView& r, const EventAttr* attr);
  // `script` shows it, as `perf script --show-mmap-events --show-task-events` does (samples
  // have a format of their own there).
  bool in_script;
};

// The row of `type`, or nullptr for a type this tool does not know.
const RecordType* RecordTypeOf(uint32_t type);
// "PERF_RECORD_MMAP2" etc., or nullptr for unknown types.
const char* RecordTypeName(uint32_t type);

// perf_event_attr as this tool knows it (the uapi struct of the build machine), plus the ids
// the kernel assigned to each instance of the event and its name (EVENT_DESC).
struct EventAttr {
  perf_event_attr attr{};
  std::vector<uint64_t> ids;
  std::string name;

  // Size of the trailing sample_id block of non-sample records (0 without sample_id_all).
  size_t SampleIdSize() const;
};

// Size in bytes this tool writes for an attr: PERF_ATTR_SIZE_VER7. perf 6.1 refuses attrs
// larger than its own struct, so this must not grow with newer uapi headers.
inline constexpr uint32_t kWrittenAttrSize = 128;

struct RecordHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
};

// One raw record: header.size bytes at data, in the byte order given by swap.
struct RecordView {
  RecordHeader header;
  const uint8_t* data = nullptr;  // points at the perf_event_header
  uint64_t offset = 0;            // absolute offset in the file (or ring buffer position)
  bool swap = false;
};

// The sample_id block (attr.sample_id_all) of non-sample records, or the same fields of a
// sample. Absent fields stay 0; `fields` is the sample_type mask that was decoded.
struct SampleId {
  uint64_t fields = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
};

struct MmapRecord {  // PERF_RECORD_MMAP
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, len = 0, pgoff = 0;
  std::string_view filename;
  SampleId sample_id;
};

struct Mmap2Record {  // PERF_RECORD_MMAP2
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, len = 0, pgoff = 0;
  // Set when misc has PERF_RECORD_MISC_MMAP_BUILD_ID *and* the record's event asked for build
  // ids (attr.build_id). Some kernels (6.18.44 among them) set the misc bit on records of
  // events that did not ask; those carry maj/min/ino and the bit is ignored.
  bool has_build_id = false;
  bool misc_bit_untrusted = false;  // the misc bit was set but the event lacks attr.build_id
  BuildId build_id;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;
  std::string_view filename;
  SampleId sample_id;
};

struct CommRecord {  // PERF_RECORD_COMM
  uint32_t pid = 0, tid = 0;
  std::string_view comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
  SampleId sample_id;
};

struct TaskRecord {  // PERF_RECORD_FORK and PERF_RECORD_EXIT
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  SampleId sample_id;
};

struct LostRecord {  // PERF_RECORD_LOST
  uint64_t id = 0, lost = 0;
  SampleId sample_id;
};

struct LostSamplesRecord {  // PERF_RECORD_LOST_SAMPLES
  uint64_t lost = 0;
  SampleId sample_id;
};

struct ThrottleRecord {  // PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE
  bool unthrottle = false;
  uint64_t time = 0, id = 0, stream_id = 0;
  SampleId sample_id;
};

// The callchain of a sample, read in place.
class CallchainView {
 public:
  CallchainView() = default;
  CallchainView(const uint8_t* p, uint64_t n, bool swap) : p_(p), n_(n), swap_(swap) {}
  uint64_t size() const { return n_; }
  uint64_t operator[](uint64_t i) const;

 private:
  const uint8_t* p_ = nullptr;
  uint64_t n_ = 0;
  bool swap_ = false;
};

// PERF_CONTEXT_* markers inside a callchain are >= this value.
inline constexpr uint64_t kContextMax = PERF_CONTEXT_MAX;

// A value at or above kContextMax that is none of the kernel's markers: a user stack the
// kernel walked by frame pointers can hold anything, -1 among it. perf then takes the whole
// callchain for corrupt and drops it (the sample keeps its ip); so do report and script.
inline bool IsUnknownContext(uint64_t v) {
  switch (v) {
    case PERF_CONTEXT_HV:
    case PERF_CONTEXT_KERNEL:
    case PERF_CONTEXT_USER:
    case PERF_CONTEXT_GUEST:
    case PERF_CONTEXT_GUEST_KERNEL:
    case PERF_CONTEXT_GUEST_USER: return false;
    default: return v >= kContextMax;
  }
}
bool HasUnknownContext(const CallchainView& chain);

// PERF_SAMPLE_RAW: what the event put there (a tracepoint's fields, ...), in place and in the
// byte order of the event's producer.
struct RawView {
  const uint8_t* data = nullptr;
  uint32_t size = 0;
};

struct BranchEntry {  // struct perf_branch_entry; flags is the bitfield word as recorded
  uint64_t from = 0, to = 0, flags = 0;
};

// PERF_SAMPLE_BRANCH_STACK's entries, read in place.
class BranchStackView {
 public:
  BranchStackView() = default;
  BranchStackView(const uint8_t* p, uint32_t n, bool swap) : p_(p), n_(n), swap_(swap) {}
  uint64_t size() const { return n_; }
  BranchEntry operator[](uint64_t i) const;

 private:
  const uint8_t* p_ = nullptr;
  uint32_t n_ = 0;  // a record holds at most 64 KiB
  bool swap_ = false;
};

// PERF_SAMPLE_REGS_USER: the registers attr.sample_regs_user selects, one value per bit in the
// order of the bits (perf register numbers: arch/<arch>/include/uapi/asm/perf_regs.h), read in
// place. abi is PERF_SAMPLE_REGS_ABI_NONE (no values: the sample hit a kernel thread), _32 or
// _64, of the interrupted task; the decoder refuses any other.
class RegsView {
 public:
  RegsView() = default;
  RegsView(uint8_t abi, uint64_t mask, const uint8_t* p, uint8_t n, bool swap)
      : p_(p), mask_(mask), abi_(abi), n_(n), swap_(swap) {}
  uint64_t abi() const { return abi_; }
  uint64_t mask() const { return mask_; }  // attr.sample_regs_user; 0 when absent
  uint64_t size() const { return n_; }     // values present: 0 with ABI_NONE
  uint64_t operator[](uint64_t i) const;   // the i-th value stored
  // Register `reg` (a bit of mask), nullopt when the sample does not hold it.
  std::optional<uint64_t> Get(unsigned reg) const;

 private:
  // Small: every sample carries one, used or not.
  const uint8_t* p_ = nullptr;
  uint64_t mask_ = 0;
  uint8_t abi_ = PERF_SAMPLE_REGS_ABI_NONE;
  uint8_t n_ = 0;
  bool swap_ = false;
};

// PERF_SAMPLE_STACK_USER: a copy of the user stack from the sampled stack pointer up, in place.
// The record holds `size` bytes (attr.sample_stack_user), of which the kernel filled the first
// dyn_size; the rest is padding. Memory contents: never byte-swapped.
struct StackView {
  const uint8_t* data = nullptr;
  uint32_t size = 0;  // a record holds at most 64 KiB
  uint32_t dyn_size = 0;
  uint32_t valid_size() const { return dyn_size < size ? dyn_size : size; }
};

struct SampleRecord {    // PERF_RECORD_SAMPLE, the fields up to PERF_SAMPLE_STACK_USER
  uint16_t cpumode = 0;  // header.misc & 7: PERF_RECORD_MISC_KERNEL, _USER, ...
  // Where the fields after the callchain are in the record, offsets from its start (0 when
  // absent): read them with the functions below. Only this much is kept, so that a sample
  // without them (most are) costs no more to decode: every sample is decoded, several times.
  struct TailPlaces {
    uint16_t raw = 0, branch_stack = 0, regs_user = 0, stack_user = 0;
  } tail;
  uint64_t ip = 0;
  uint64_t addr = 0;
  uint64_t period = 0;
  SampleId sample_id;  // pid/tid/time/id/stream_id/cpu of the sample
  CallchainView callchain;

  // The fields after the callchain, read in place from what the decoder checked; r and attr
  // are those the sample was decoded from. Empty views when the sample does not hold them.
  RawView raw(const RecordView& r) const;
  BranchStackView branch_stack(const RecordView& r, const EventAttr& attr) const;
  uint64_t branch_hw_idx(const RecordView& r, const EventAttr& attr) const;  // 0 without one
  RegsView regs_user(const RecordView& r, const EventAttr& attr) const;
  StackView stack_user(const RecordView& r) const;
};

// PERF_RECORD_HEADER_BUILD_ID: one entry of the HEADER_BUILD_ID table, or the same record in
// the data stream of pipe-mode files. pid is the *machine* pid (-1 for the host).
struct HeaderBuildIdRecord {
  int32_t pid = -1;
  uint16_t misc = 0;
  BuildId build_id;  // length from the record when kMiscBuildIdSize is set, else 20
  std::string_view filename;
};

// Decoders. Each checks every field against header.size and names field and offset on error.
// attr is the event the record belongs to; it may be null for records that have no
// sample_id (then sample_id is left empty and MMAP2 build ids are not trusted).
Result<RecordHeader> ParseRecordHeader(const uint8_t* p, size_t avail, bool swap, uint64_t offset);
Result<SampleId> ParseSampleId(const RecordView& r, const EventAttr* attr);
Result<MmapRecord> ParseMmap(const RecordView& r, const EventAttr* attr);
Result<Mmap2Record> ParseMmap2(const RecordView& r, const EventAttr* attr);
Result<CommRecord> ParseComm(const RecordView& r, const EventAttr* attr);
Result<TaskRecord> ParseTask(const RecordView& r, const EventAttr* attr);
Result<LostRecord> ParseLost(const RecordView& r, const EventAttr* attr);
Result<LostSamplesRecord> ParseLostSamples(const RecordView& r, const EventAttr* attr);
Result<ThrottleRecord> ParseThrottle(const RecordView& r, const EventAttr* attr);
Result<SampleRecord> ParseSample(const RecordView& r, const EventAttr& attr);
Result<HeaderBuildIdRecord> ParseHeaderBuildId(const RecordView& r);

// The time a record carries, read in place without decoding the rest: a session orders every
// record by it, twice. RecordTime gives a sample's PERF_SAMPLE_TIME (0 when the event records
// none), SampleIdTime the time in another kernel record's sample_id block (0 without
// sample_id_all), both as the decoders above would. nullopt when the record is too short to
// hold the field; the decoder then names the error.
std::optional<uint64_t> SampleTime(const RecordView& r, const EventAttr& attr);
std::optional<uint64_t> SampleIdTime(const RecordView& r, const EventAttr& attr);

// What a replay without callbacks keeps of a sample: the key it orders and looks it up by.
struct SampleKey {
  uint64_t time = 0, ip = 0;
  uint32_t pid = 0;
  uint16_t cpumode = 0;
};
// A sample's key, read in place: true, and *key set, exactly when ParseSample succeeds, with
// the fields it would give. The usual layout (fixed fields and a callchain: `-g`) is checked
// and read without decoding the rest; any other goes through ParseSample.
bool ParseSampleKey(const RecordView& r, const EventAttr& attr, SampleKey* key);

// The u64 at off in r, in the host's byte order; the caller checked that it fits.
inline uint64_t RecordU64At(const RecordView& r, size_t off) {
  uint64_t v;
  std::memcpy(&v, r.data + off, 8);
  return r.swap ? __builtin_bswap64(v) : v;
}

// Where ParseSampleKey finds the key for one attr, worked out once (as EventIdPlace): a replay
// reads the key of every sample, and decoding sample_type for each was most of that.
struct SampleKeyPlace {
  bool usual = false;                  // only fixed fields and a callchain: read in place
  bool callchain = false;              // the callchain follows the fixed fields, at `end`
  uint32_t end = 0;                    // past the fixed fields
  uint32_t ip = 0, pid = 0, time = 0;  // offsets in the record; 0: the sample has no such field
};
SampleKeyPlace SampleKeyPlaceOf(const EventAttr& attr);
// ParseSampleKey(r, attr, key) for a sample that is not in the usual layout, or does not fit.
bool ParseSampleKeyDecoded(const RecordView& r, const EventAttr& attr, SampleKey* key);
// ParseSampleKey(r, attr, key) for the place SampleKeyPlaceOf(attr) gives; inline, as a replay
// reads the key of every sample.
inline bool ParseSampleKey(const RecordView& r, const EventAttr& attr, const SampleKeyPlace& at,
                           SampleKey* key) {
  const size_t size = r.header.size;
  if (!at.usual || size < at.end)
    return ParseSampleKeyDecoded(r, attr, key);
  // The callchain's entries must fit: what ParseSample checks, and nothing else is left.
  if (at.callchain &&
      (size < size_t{at.end} + 8 || RecordU64At(r, at.end) > (size - at.end - 8) / 8))
    return ParseSampleKeyDecoded(r, attr, key);
  key->cpumode = r.header.misc & kMiscCpumodeMask;
  key->ip = at.ip ? RecordU64At(r, at.ip) : 0;
  if (at.pid) {
    uint32_t pid;
    std::memcpy(&pid, r.data + at.pid, 4);
    key->pid = r.swap ? __builtin_bswap32(pid) : pid;
  } else {
    key->pid = 0;
  }
  key->time = at.time ? RecordU64At(r, at.time) : 0;
  return true;
}

// The sample id (PERF_SAMPLE_IDENTIFIER or ID) of any record, used to find its event when
// several attrs share a file. Needs the layout every attr shares; returns 0 when absent.
uint64_t RecordEventId(const RecordView& r, const EventAttr& layout);

// Where RecordEventId finds the id for one layout, worked out once: a reader that looks up the
// event of every record should not decode sample_type for each.
struct EventIdPlace {
  uint32_t in_sample = 0;  // from a sample's start; 0: samples carry no id
  uint32_t in_other = 0;   // from the end of any other kernel record; 0: they carry none
};
EventIdPlace EventIdPlaceOf(const EventAttr& layout);

// RecordEventId(r, layout) for the place EventIdPlaceOf(layout) gives.
inline uint64_t RecordEventId(const RecordView& r, const EventIdPlace& at) {
  size_t size = r.header.size, off;
  if (r.header.type == PERF_RECORD_SAMPLE) {
    if (at.in_sample == 0 || size < size_t{at.in_sample} + 8)
      return 0;
    off = at.in_sample;
  } else {
    if (r.header.type >= kRecordHeaderAttr || at.in_other == 0 || size < size_t{at.in_other} + 8)
      return 0;
    off = size - at.in_other;
  }
  return RecordU64At(r, off);
}

}  // namespace pbid

namespace pbid {

// perf_event_attr <-> file bytes. Decoding accepts any size from PERF_ATTR_SIZE_VER0 up, byte
// swaps field by field and bit-reverses the flags word the way perf does for files written on
// the other endianness; bytes beyond this build's struct must be zero.
Result<perf_event_attr> DecodeAttr(const uint8_t* p, size_t size, bool swap, uint64_t offset);
// Writes exactly `size` bytes (kWrittenAttrSize by default) with attr.size set to it.
std::vector<uint8_t> EncodeAttr(const perf_event_attr& attr, bool swap,
                                uint32_t size = kWrittenAttrSize);

}  // namespace pbid

#endif  // PBID_RECORDS_H_
