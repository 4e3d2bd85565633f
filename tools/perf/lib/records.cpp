// SPDX-License-Identifier: GPL-2.0
#include "pbid/records.h"

#include <cstddef>
#include <cstring>

#include "byte_io.h"

namespace pbid {

using internal::ByteCursor;
using internal::ByteReader;

namespace {

constexpr uint64_t kSampleIdMask = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

// The kernel's record layouts, which its uapi header gives only in comments: the offsets the
// decoders check sizes against, pinned to the ABI by the asserts. The decoders read the fields
// in this order with a ByteCursor, as the builders write them.
struct MmapLayout {
  perf_event_header header;
  uint32_t pid, tid;
  uint64_t addr, len, pgoff;
  char filename[8];
};
static_assert(offsetof(MmapLayout, filename) == 40, "PERF_RECORD_MMAP layout");

struct Mmap2Layout {
  perf_event_header header;
  uint32_t pid, tid;
  uint64_t addr, len, pgoff;
  union {
    struct {
      uint32_t maj, min;
      uint64_t ino, ino_generation;
    } dev;
    struct {
      uint8_t size;
      uint8_t reserved[3];
      uint8_t id[20];
    } build_id;
  } u;
  uint32_t prot, flags;
  char filename[8];
};
static_assert(offsetof(Mmap2Layout, u) == 40 && offsetof(Mmap2Layout, u.build_id.id) == 44 &&
                  offsetof(Mmap2Layout, prot) == 64 && offsetof(Mmap2Layout, filename) == 72,
              "PERF_RECORD_MMAP2 layout");

struct CommLayout {
  perf_event_header header;
  uint32_t pid, tid;
  char comm[8];
};
static_assert(offsetof(CommLayout, comm) == 16, "PERF_RECORD_COMM layout");

struct TaskLayout {  // FORK and EXIT
  perf_event_header header;
  uint32_t pid, ppid, tid, ptid;
  uint64_t time;
};
static_assert(sizeof(TaskLayout) == 32, "PERF_RECORD_FORK/EXIT layout");

struct LostLayout {
  perf_event_header header;
  uint64_t id, lost;
};
static_assert(sizeof(LostLayout) == 24, "PERF_RECORD_LOST layout");

struct LostSamplesLayout {
  perf_event_header header;
  uint64_t lost;
};
static_assert(sizeof(LostSamplesLayout) == 16, "PERF_RECORD_LOST_SAMPLES layout");

struct ThrottleLayout {
  perf_event_header header;
  uint64_t time, id, stream_id;
};
static_assert(sizeof(ThrottleLayout) == 32, "PERF_RECORD_(UN)THROTTLE layout");

// perf's struct perf_record_header_build_id: the id padded to 20 bytes, then its size when
// PERF_RECORD_MISC_BUILD_ID_SIZE is set.
struct HeaderBuildIdLayout {
  perf_event_header header;
  int32_t pid;
  uint8_t id[20];
  uint8_t size;
  uint8_t reserved[3];
  char filename[8];
};
static_assert(offsetof(HeaderBuildIdLayout, size) == 32 &&
                  offsetof(HeaderBuildIdLayout, filename) == 36,
              "PERF_RECORD_HEADER_BUILD_ID layout");

constexpr size_t kBody = sizeof(perf_event_header);

// The number of 8-byte fields a mask of a few sample_type bits selects. Not
// __builtin_popcountll: without -mpopcnt (not in the x86-64 baseline) that is a library call,
// and this runs for every record.
size_t CountBits(uint64_t bits) {
  size_t n = 0;
  for (; bits != 0; bits &= bits - 1)
    n++;
  return n;
}

ByteReader ReaderFor(const RecordView& r) {
  return ByteReader(r.data, r.header.size, r.swap, r.offset);
}

// Bytes available to the fixed part and strings of a record: the trailing sample_id is not.
Result<size_t> BodyEnd(const RecordView& r, const EventAttr* attr, size_t fixed, const char* what) {
  size_t id_size = attr ? attr->SampleIdSize() : 0;
  if (static_cast<size_t>(r.header.size) < fixed + id_size) {
    return Error(std::string(what) + ".header.size", r.offset + 6,
                 "record size " + std::to_string(r.header.size) + " smaller than " +
                     std::to_string(fixed + id_size));
  }
  return r.header.size - id_size;
}

}  // namespace

size_t EventAttr::SampleIdSize() const {
  if (!attr.sample_id_all)
    return 0;
  return 8 * CountBits(attr.sample_type & kSampleIdMask);
}

uint64_t CallchainView::operator[](uint64_t i) const {
  uint64_t v;
  memcpy(&v, p_ + 8 * i, 8);
  return swap_ ? internal::Swap64(v) : v;
}

bool HasUnknownContext(const CallchainView& chain) {
  for (uint64_t i = 0; i < chain.size(); i++) {
    if (IsUnknownContext(chain[i]))
      return true;
  }
  return false;
}

BranchEntry BranchStackView::operator[](uint64_t i) const {
  ByteReader br(p_ + 24 * i, 24, swap_);
  return BranchEntry{br.U64At(0), br.U64At(8), br.U64At(16)};
}

uint64_t RegsView::operator[](uint64_t i) const {
  uint64_t v;
  memcpy(&v, p_ + 8 * i, 8);
  return swap_ ? internal::Swap64(v) : v;
}

std::optional<uint64_t> RegsView::Get(unsigned reg) const {
  if (reg >= 64 || n_ == 0 || !(mask_ & (uint64_t{1} << reg)))
    return std::nullopt;
  // The values are stored in the order of the mask's bits: this one follows those below it.
  return (*this)[CountBits(mask_ & ((uint64_t{1} << reg) - 1))];
}

Result<RecordHeader> ParseRecordHeader(const uint8_t* p, size_t avail, bool swap, uint64_t offset) {
  ByteReader br(p, avail, swap, offset);
  if (!br.Has(0, 8))
    return br.OutOfBounds(0, 8, "record.header");
  RecordHeader h;
  h.type = br.U32At(0);
  h.misc = br.U16At(4);
  h.size = br.U16At(6);
  if (h.size < 8) {
    return Error("record.header.size", offset + 6,
                 "record size " + std::to_string(h.size) + " smaller than its header");
  }
  if (h.size > avail) {
    return Error("record.header.size", offset + 6,
                 "record of " + std::to_string(h.size) + " bytes runs past the end (" +
                     std::to_string(avail) + " bytes left)");
  }
  return h;
}

Result<SampleId> ParseSampleId(const RecordView& r, const EventAttr* attr) {
  SampleId id;
  // Records the tool writes itself (HEADER_BUILD_ID, FINISHED_ROUND, ...) carry none.
  if (attr == nullptr || !attr->attr.sample_id_all || r.header.type >= kRecordHeaderAttr)
    return id;
  size_t n = attr->SampleIdSize();
  if (r.header.size < 8 + n) {
    return Error("sample_id", r.offset + 6, "record too small for its sample_id block");
  }
  ByteReader br = ReaderFor(r);
  size_t off = r.header.size - n;
  uint64_t st = attr->attr.sample_type;
  id.fields = st & kSampleIdMask;
  if (st & PERF_SAMPLE_TID) {
    id.pid = br.U32At(off);
    id.tid = br.U32At(off + 4);
    off += 8;
  }
  if (st & PERF_SAMPLE_TIME)
    id.time = br.U64At(off), off += 8;
  if (st & PERF_SAMPLE_ID)
    id.id = br.U64At(off), off += 8;
  if (st & PERF_SAMPLE_STREAM_ID)
    id.stream_id = br.U64At(off), off += 8;
  if (st & PERF_SAMPLE_CPU)
    id.cpu = br.U32At(off), off += 8;
  if (st & PERF_SAMPLE_IDENTIFIER)
    id.id = br.U64At(off), off += 8;
  return id;
}

std::optional<uint64_t> SampleTime(const RecordView& r, const EventAttr& attr) {
  uint64_t st = attr.attr.sample_type;
  if (!(st & PERF_SAMPLE_TIME))
    return 0;
  // The fields before it are 8 bytes each.
  size_t off = 8 + 8 * CountBits(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));
  ByteReader br = ReaderFor(r);
  if (!br.Has(off, 8))
    return std::nullopt;
  return br.U64At(off);
}

std::optional<uint64_t> SampleIdTime(const RecordView& r, const EventAttr& attr) {
  if (!attr.attr.sample_id_all || r.header.type >= kRecordHeaderAttr)
    return 0;
  size_t n = attr.SampleIdSize();
  if (r.header.size < 8 + n)
    return std::nullopt;
  uint64_t st = attr.attr.sample_type;
  if (!(st & PERF_SAMPLE_TIME))
    return 0;
  // The block opens with TID, then TIME.
  size_t off = r.header.size - n + ((st & PERF_SAMPLE_TID) ? 8 : 0);
  return ReaderFor(r).U64At(off);
}

EventIdPlace EventIdPlaceOf(const EventAttr& layout) {
  uint64_t st = layout.attr.sample_type;
  EventIdPlace at;
  if (st & PERF_SAMPLE_IDENTIFIER) {
    at.in_sample = 8;
  } else if (st & PERF_SAMPLE_ID) {
    at.in_sample = 8 + 8 * CountBits(st & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                           PERF_SAMPLE_ADDR));
  }
  if (!layout.attr.sample_id_all)
    return at;
  // Counted from the end: IDENTIFIER is last; ID comes before STREAM_ID and CPU.
  if (st & PERF_SAMPLE_IDENTIFIER)
    at.in_other = 8;
  else if (st & PERF_SAMPLE_ID)
    at.in_other = 8 + 8 * CountBits(st & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
  return at;
}

uint64_t RecordEventId(const RecordView& r, const EventAttr& layout) {
  return RecordEventId(r, EventIdPlaceOf(layout));
}

// The fields MMAP and MMAP2 share, in their order, up to the ones MMAP2 adds.
template <typename MmapLike>
void ReadMmapStart(ByteCursor& c, MmapLike& m) {
  m.pid = c.U32();
  m.tid = c.U32();
  m.start = c.U64();
  m.len = c.U64();
  m.pgoff = c.U64();
}

Result<MmapRecord> ParseMmap(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(size_t end, BodyEnd(r, attr, offsetof(MmapLayout, filename) + 1, "mmap"));
  ByteCursor c(ReaderFor(r), kBody);
  MmapRecord m;
  ReadMmapStart(c, m);
  PBID_ASSIGN_OR_RETURN(m.filename, c.CString(end, "mmap.filename"));
  PBID_ASSIGN_OR_RETURN(m.sample_id, ParseSampleId(r, attr));
  return m;
}

Result<Mmap2Record> ParseMmap2(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(size_t end, BodyEnd(r, attr, offsetof(Mmap2Layout, filename) + 1, "mmap2"));
  ByteCursor c(ReaderFor(r), kBody);
  Mmap2Record m;
  ReadMmapStart(c, m);
  bool bit = r.header.misc & kMiscMmapBuildId;
  bool trusted = bit && attr != nullptr && attr->attr.build_id;
  if (trusted) {
    uint8_t size = c.U8();
    c.Skip(sizeof(Mmap2Layout::u.build_id.reserved));
    auto id = BuildId::FromBytes(r.data + c.offset(), size);
    if (!id.ok()) {
      return Error("mmap2.build_id_size", r.offset + offsetof(Mmap2Layout, u.build_id.size),
                   "build id size " + std::to_string(size) + " outside 1..20");
    }
    c.Skip(sizeof(Mmap2Layout::u.build_id.id));
    m.has_build_id = true;
    m.build_id = *id;
  } else {
    m.misc_bit_untrusted = bit;
    m.maj = c.U32();
    m.min = c.U32();
    m.ino = c.U64();
    m.ino_generation = c.U64();
  }
  m.prot = c.U32();
  m.flags = c.U32();
  PBID_ASSIGN_OR_RETURN(m.filename, c.CString(end, "mmap2.filename"));
  PBID_ASSIGN_OR_RETURN(m.sample_id, ParseSampleId(r, attr));
  return m;
}

Result<CommRecord> ParseComm(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(size_t end, BodyEnd(r, attr, offsetof(CommLayout, comm) + 1, "comm"));
  ByteCursor cur(ReaderFor(r), kBody);
  CommRecord c;
  c.pid = cur.U32();
  c.tid = cur.U32();
  c.exec = r.header.misc & kMiscCommExec;
  PBID_ASSIGN_OR_RETURN(c.comm, cur.CString(end, "comm.comm"));
  PBID_ASSIGN_OR_RETURN(c.sample_id, ParseSampleId(r, attr));
  return c;
}

Result<TaskRecord> ParseTask(const RecordView& r, const EventAttr* attr) {
  PBID_RETURN_IF_ERROR(
      BodyEnd(r, attr, sizeof(TaskLayout), r.header.type == PERF_RECORD_FORK ? "fork" : "exit"));
  ByteCursor c(ReaderFor(r), kBody);
  TaskRecord t;
  t.pid = c.U32();
  t.ppid = c.U32();
  t.tid = c.U32();
  t.ptid = c.U32();
  t.time = c.U64();
  PBID_ASSIGN_OR_RETURN(t.sample_id, ParseSampleId(r, attr));
  return t;
}

Result<LostRecord> ParseLost(const RecordView& r, const EventAttr* attr) {
  PBID_RETURN_IF_ERROR(BodyEnd(r, attr, sizeof(LostLayout), "lost"));
  ByteCursor c(ReaderFor(r), kBody);
  LostRecord l;
  l.id = c.U64();
  l.lost = c.U64();
  PBID_ASSIGN_OR_RETURN(l.sample_id, ParseSampleId(r, attr));
  return l;
}

Result<LostSamplesRecord> ParseLostSamples(const RecordView& r, const EventAttr* attr) {
  PBID_RETURN_IF_ERROR(BodyEnd(r, attr, sizeof(LostSamplesLayout), "lost_samples"));
  ByteCursor c(ReaderFor(r), kBody);
  LostSamplesRecord l;
  l.lost = c.U64();
  PBID_ASSIGN_OR_RETURN(l.sample_id, ParseSampleId(r, attr));
  return l;
}

Result<ThrottleRecord> ParseThrottle(const RecordView& r, const EventAttr* attr) {
  PBID_RETURN_IF_ERROR(BodyEnd(r, attr, sizeof(ThrottleLayout), "throttle"));
  ByteCursor c(ReaderFor(r), kBody);
  ThrottleRecord t;
  t.unthrottle = r.header.type == PERF_RECORD_UNTHROTTLE;
  t.time = c.U64();
  t.id = c.U64();
  t.stream_id = c.U64();
  PBID_ASSIGN_OR_RETURN(t.sample_id, ParseSampleId(r, attr));
  return t;
}

namespace {

// The fields after the callchain that carry a size of their own, in the kernel's order
// (perf_output_sample): kept out of ParseSample so that samples without them, most of them,
// pay one test for the lot.
constexpr uint64_t kSampleTail =
    PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
// A sample's fields of 8 bytes each, in the kernel's order before PERF_SAMPLE_READ.
constexpr uint64_t kSampleFixed = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                  PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

uint64_t U64In(const RecordView& r, size_t off) {
  uint64_t v;
  memcpy(&v, r.data + off, 8);
  return r.swap ? internal::Swap64(v) : v;
}

bool HasHwIdx(const EventAttr& attr) {
  return attr.attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;
}

__attribute__((noinline)) Status ParseSampleTail(const RecordView& r, const EventAttr& attr,
                                                 const ByteReader& br, size_t off,
                                                 SampleRecord::TailPlaces* t) {
  const uint64_t st = attr.attr.sample_type;
  const size_t record_size = r.header.size;
  // Every offset below is inside the record, whose size is 16 bits.
  auto place = [](size_t o) { return static_cast<uint16_t>(o); };
  if (st & PERF_SAMPLE_RAW) {
    if (!br.Has(off, 4))
      return br.OutOfBounds(off, 4, "sample.raw.size");
    uint32_t size = br.U32At(off);
    if (!br.Has(off + 4, size)) {
      return Error("sample.raw.size", r.offset + off,
                   std::to_string(size) + " bytes do not fit the record");
    }
    t->raw = place(off);
    // The kernel pads size so that the next field is 8-byte aligned; perf steps over exactly
    // 4 + size bytes, and so does this.
    off += 4 + size;
  }
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    size_t nr_off = off;
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.branch_stack.nr");
    uint64_t nr = br.U64At(off);
    off += 8;
    if (HasHwIdx(attr)) {
      if (!br.Has(off, 8))
        return br.OutOfBounds(off, 8, "sample.branch_stack.hw_idx");
      off += 8;
    }
    constexpr size_t kEntry = sizeof(BranchEntry);
    static_assert(kEntry == 24, "struct perf_branch_entry");
    if (nr > record_size / kEntry || !br.Has(off, nr * kEntry)) {
      return Error("sample.branch_stack.nr", r.offset + nr_off,
                   std::to_string(nr) + " entries do not fit the record");
    }
    t->branch_stack = place(nr_off);
    off += nr * kEntry;
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.regs_user.abi");
    uint64_t abi = br.U64At(off);
    if (abi > PERF_SAMPLE_REGS_ABI_64) {
      return Error("sample.regs_user.abi", r.offset + off,
                   "unknown register ABI " + std::to_string(abi));
    }
    t->regs_user = place(off);
    off += 8;
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
      size_t n = CountBits(attr.attr.sample_regs_user);
      if (!br.Has(off, 8 * n))
        return br.OutOfBounds(off, 8 * n, "sample.regs_user.regs");
      off += 8 * n;
    }
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    size_t size_off = off;
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.stack_user.size");
    uint64_t size = br.U64At(off);
    off += 8;
    if (size != 0) {
      if (size > record_size || !br.Has(off, size)) {
        return Error("sample.stack_user.size", r.offset + size_off,
                     std::to_string(size) + " bytes do not fit the record");
      }
      off += size;
      if (!br.Has(off, 8))
        return br.OutOfBounds(off, 8, "sample.stack_user.dyn_size");
      uint64_t dyn_size = br.U64At(off);
      // perf refuses such a sample too ("user stack dump failure").
      if (dyn_size > size) {
        return Error("sample.stack_user.dyn_size", r.offset + off,
                     "dyn_size " + std::to_string(dyn_size) + " larger than the copy's " +
                         std::to_string(size) + " bytes");
      }
      off += 8;
    }
    t->stack_user = place(size_off);
  }
  return Ok();
}

}  // namespace

Result<SampleRecord> ParseSample(const RecordView& r, const EventAttr& attr) {
  ByteReader br = ReaderFor(r);
  SampleRecord s;
  s.cpumode = r.header.misc & kMiscCpumodeMask;
  uint64_t st = attr.attr.sample_type;
  size_t off = 8;
  auto next = [&](const char* field) -> Result<uint64_t> {
    auto v = br.U64(off, field);
    if (v.ok())
      off += 8;
    return v;
  };
#define PBID_TAKE(var, field) \
  do {                        \
    auto v_ = next(field);    \
    if (!v_.ok())             \
      return v_.error();      \
    var = *v_;                \
  } while (0)
  [[maybe_unused]] uint64_t tmp = 0;
  s.sample_id.fields = st & kSampleIdMask;
  // The fixed fields are 8 bytes each; when the record holds them all (every valid sample),
  // one bounds check replaces one per field. This runs for every sample, several times.
  size_t fixed = 8 * CountBits(st & kSampleFixed);
  if (br.Has(off, fixed)) {
    auto take = [&] {
      uint64_t v = br.U64At(off);
      off += 8;
      return v;
    };
    if (st & PERF_SAMPLE_IDENTIFIER)
      s.sample_id.id = take();
    if (st & PERF_SAMPLE_IP)
      s.ip = take();
    if (st & PERF_SAMPLE_TID) {
      s.sample_id.pid = br.U32At(off);
      s.sample_id.tid = br.U32At(off + 4);
      off += 8;
    }
    if (st & PERF_SAMPLE_TIME)
      s.sample_id.time = take();
    if (st & PERF_SAMPLE_ADDR)
      s.addr = take();
    if (st & PERF_SAMPLE_ID)
      s.sample_id.id = take();
    if (st & PERF_SAMPLE_STREAM_ID)
      s.sample_id.stream_id = take();
    if (st & PERF_SAMPLE_CPU) {
      s.sample_id.cpu = br.U32At(off);
      off += 8;
    }
    if (st & PERF_SAMPLE_PERIOD)
      s.period = take();
    st &= ~kSampleFixed;  // the checked reads below then skip them
  }
  if (st & PERF_SAMPLE_IDENTIFIER)
    PBID_TAKE(s.sample_id.id, "sample.identifier");
  if (st & PERF_SAMPLE_IP)
    PBID_TAKE(s.ip, "sample.ip");
  if (st & PERF_SAMPLE_TID) {
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.tid");
    s.sample_id.pid = br.U32At(off);
    s.sample_id.tid = br.U32At(off + 4);
    off += 8;
  }
  if (st & PERF_SAMPLE_TIME)
    PBID_TAKE(s.sample_id.time, "sample.time");
  if (st & PERF_SAMPLE_ADDR)
    PBID_TAKE(s.addr, "sample.addr");
  if (st & PERF_SAMPLE_ID)
    PBID_TAKE(s.sample_id.id, "sample.id");
  if (st & PERF_SAMPLE_STREAM_ID)
    PBID_TAKE(s.sample_id.stream_id, "sample.stream_id");
  if (st & PERF_SAMPLE_CPU) {
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.cpu");
    s.sample_id.cpu = br.U32At(off);
    off += 8;
  }
  if (st & PERF_SAMPLE_PERIOD)
    PBID_TAKE(s.period, "sample.period");
  if (st & PERF_SAMPLE_READ) {
    uint64_t rf = attr.attr.read_format;
    size_t per_value = 8 + ((rf & PERF_FORMAT_ID) ? 8 : 0) + ((rf & PERF_FORMAT_LOST) ? 8 : 0);
    if (rf & PERF_FORMAT_GROUP) {
      uint64_t nr = 0;
      PBID_TAKE(nr, "sample.read.nr");
      if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
        PBID_TAKE(tmp, "sample.read.time_enabled");
      if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
        PBID_TAKE(tmp, "sample.read.time_running");
      if (nr > r.header.size / per_value || !br.Has(off, nr * per_value)) {
        return Error("sample.read.nr", r.offset + off - 8,
                     "group of " + std::to_string(nr) + " values does not fit the record");
      }
      off += nr * per_value;
    } else {
      PBID_TAKE(tmp, "sample.read.value");
      if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
        PBID_TAKE(tmp, "sample.read.time_enabled");
      if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
        PBID_TAKE(tmp, "sample.read.time_running");
      if (rf & PERF_FORMAT_ID)
        PBID_TAKE(tmp, "sample.read.id");
      if (rf & PERF_FORMAT_LOST)
        PBID_TAKE(tmp, "sample.read.lost");
    }
  }
  if (st & PERF_SAMPLE_CALLCHAIN) {
    size_t nr_off = off;
    if (!br.Has(off, 8))
      return br.OutOfBounds(off, 8, "sample.callchain.nr");
    uint64_t nr = br.U64At(off);
    off += 8;
    if (nr > r.header.size / 8 || !br.Has(off, nr * 8)) {
      return Error("sample.callchain.nr", r.offset + nr_off,
                   std::to_string(nr) + " entries do not fit the record");
    }
    s.callchain = CallchainView(r.data + off, nr, r.swap);
    off += nr * 8;
  }
#undef PBID_TAKE
  if (st & kSampleTail) {
    // Into a copy: were s itself to escape into the call, the compiler would keep it in memory
    // all along instead of in registers, and every sample would pay for that.
    SampleRecord::TailPlaces tail;
    PBID_RETURN_IF_ERROR(ParseSampleTail(r, attr, br, off, &tail));
    s.tail = tail;
  }
  return s;
}

SampleKeyPlace SampleKeyPlaceOf(const EventAttr& attr) {
  uint64_t st = attr.attr.sample_type;
  SampleKeyPlace at;
  // The usual layout: ParseSample succeeds when the fixed fields and the callchain fit, and
  // has nothing else to check. The rest of the record is left unread: a replay without
  // callbacks reads every sample, and decoding each whole was the largest part of its cost.
  at.usual = (st & ~(kSampleFixed | PERF_SAMPLE_CALLCHAIN)) == 0;
  at.callchain = (st & PERF_SAMPLE_CALLCHAIN) != 0;
  at.end = static_cast<uint32_t>(8 + 8 * CountBits(st & kSampleFixed));
  // IDENTIFIER, IP, TID and TIME lead, in that order.
  uint32_t off = (st & PERF_SAMPLE_IDENTIFIER) ? 16 : 8;
  if (st & PERF_SAMPLE_IP) {
    at.ip = off;
    off += 8;
  }
  if (st & PERF_SAMPLE_TID) {
    at.pid = off;
    off += 8;
  }
  if (st & PERF_SAMPLE_TIME)
    at.time = off;
  return at;
}

bool ParseSampleKey(const RecordView& r, const EventAttr& attr, SampleKey* key) {
  return ParseSampleKey(r, attr, SampleKeyPlaceOf(attr), key);
}

bool ParseSampleKeyDecoded(const RecordView& r, const EventAttr& attr, SampleKey* key) {
  Result<SampleRecord> s = ParseSample(r, attr);
  if (!s.ok())
    return false;
  *key = SampleKey{s->sample_id.time, s->ip, s->sample_id.pid, s->cpumode};
  return true;
}

RawView SampleRecord::raw(const RecordView& r) const {
  if (tail.raw == 0)
    return RawView();
  uint32_t size;
  memcpy(&size, r.data + tail.raw, 4);
  return RawView{r.data + tail.raw + 4, r.swap ? internal::Swap32(size) : size};
}

BranchStackView SampleRecord::branch_stack(const RecordView& r, const EventAttr& attr) const {
  if (tail.branch_stack == 0)
    return BranchStackView();
  size_t entries = tail.branch_stack + (HasHwIdx(attr) ? 16 : 8);
  return BranchStackView(r.data + entries, static_cast<uint32_t>(U64In(r, tail.branch_stack)),
                         r.swap);
}

uint64_t SampleRecord::branch_hw_idx(const RecordView& r, const EventAttr& attr) const {
  return tail.branch_stack != 0 && HasHwIdx(attr) ? U64In(r, tail.branch_stack + 8) : 0;
}

RegsView SampleRecord::regs_user(const RecordView& r, const EventAttr& attr) const {
  if (tail.regs_user == 0)
    return RegsView();
  uint64_t mask = attr.attr.sample_regs_user;
  auto abi = static_cast<uint8_t>(U64In(r, tail.regs_user));
  auto n = static_cast<uint8_t>(abi == PERF_SAMPLE_REGS_ABI_NONE ? 0 : CountBits(mask));
  return RegsView(abi, mask, r.data + tail.regs_user + 8, n, r.swap);
}

StackView SampleRecord::stack_user(const RecordView& r) const {
  if (tail.stack_user == 0)
    return StackView();
  uint64_t size = U64In(r, tail.stack_user);
  if (size == 0)
    return StackView();
  // Both were checked against the record's 16-bit size.
  return StackView{r.data + tail.stack_user + 8, static_cast<uint32_t>(size),
                   static_cast<uint32_t>(U64In(r, tail.stack_user + 8 + size))};
}

Result<HeaderBuildIdRecord> ParseHeaderBuildId(const RecordView& r) {
  constexpr size_t kFixed = offsetof(HeaderBuildIdLayout, filename);
  ByteReader br = ReaderFor(r);
  if (r.header.size < kFixed + 1) {
    return Error("build_id.header.size", r.offset + 6,
                 "record size " + std::to_string(r.header.size) + " smaller than " +
                     std::to_string(kFixed + 1));
  }
  HeaderBuildIdRecord b;
  b.misc = r.header.misc;
  b.pid = static_cast<int32_t>(br.U32At(offsetof(HeaderBuildIdLayout, pid)));
  size_t size = (r.header.misc & kMiscBuildIdSize) ? r.data[offsetof(HeaderBuildIdLayout, size)]
                                                   : BuildId::kMaxSize;
  auto id = BuildId::FromBytes(r.data + offsetof(HeaderBuildIdLayout, id), size);
  if (!id.ok()) {
    return Error("build_id.size", r.offset + offsetof(HeaderBuildIdLayout, size),
                 "build id size " + std::to_string(size) + " outside 1..20");
  }
  b.build_id = *id;
  PBID_ASSIGN_OR_RETURN(b.filename,
                        br.CString(kFixed, r.header.size - kFixed, "build_id.filename"));
  return b;
}

}  // namespace pbid
