// SPDX-License-Identifier: GPL-2.0
#include "pbid/record_builder.h"

#include "byte_io.h"

namespace pbid {

using internal::ByteWriter;

namespace {

void Begin(ByteWriter& w, uint32_t type, uint16_t misc) {
  w.U32(type);
  w.U16(misc);
  w.U16(0);  // size, patched by Finish
}

void SampleIdBlock(ByteWriter& w, const SampleId& id, const EventAttr* attr) {
  if (attr == nullptr || !attr->attr.sample_id_all)
    return;
  uint64_t st = attr->attr.sample_type;
  if (st & PERF_SAMPLE_TID)
    w.U32(id.pid), w.U32(id.tid);
  if (st & PERF_SAMPLE_TIME)
    w.U64(id.time);
  if (st & PERF_SAMPLE_ID)
    w.U64(id.id);
  if (st & PERF_SAMPLE_STREAM_ID)
    w.U64(id.stream_id);
  if (st & PERF_SAMPLE_CPU)
    w.U32(id.cpu), w.U32(0);
  if (st & PERF_SAMPLE_IDENTIFIER)
    w.U64(id.id);
}

// header.size is 16 bits: a larger record (a sample with a huge callchain) cannot be written
// without its size wrapping and the reader walking into the middle of it.
Result<RecordBytes> Finish(ByteWriter& w, const char* what) {
  if (w.size() > kMaxRecordSize) {
    return Error::Of(ErrorKind::kInvalidArgument, what,
                     "record of " + std::to_string(w.size()) + " bytes exceeds the " +
                         std::to_string(kMaxRecordSize) + " a record header can describe");
  }
  w.Patch16(6, static_cast<uint16_t>(w.size()));
  return std::move(w.buffer());
}

// Records of a fixed size far below kMaxRecordSize.
RecordBytes FinishFixed(ByteWriter& w) {
  w.Patch16(6, static_cast<uint16_t>(w.size()));
  return std::move(w.buffer());
}

}  // namespace

Result<RecordBytes> BuildMmap2(const Mmap2Record& m, uint16_t misc, const EventAttr* attr,
                               bool swap) {
  ByteWriter w(swap);
  misc = m.has_build_id ? (misc | kMiscMmapBuildId) : (misc & ~kMiscMmapBuildId);
  Begin(w, PERF_RECORD_MMAP2, misc);
  w.U32(m.pid);
  w.U32(m.tid);
  w.U64(m.start);
  w.U64(m.len);
  w.U64(m.pgoff);
  if (m.has_build_id) {
    w.U8(static_cast<uint8_t>(m.build_id.size()));
    w.Zeros(3);
    auto padded = m.build_id.Padded();
    w.Bytes(padded.data(), padded.size());
  } else {
    w.U32(m.maj);
    w.U32(m.min);
    w.U64(m.ino);
    w.U64(m.ino_generation);
  }
  w.U32(m.prot);
  w.U32(m.flags);
  w.PaddedString(m.filename, 8);
  SampleIdBlock(w, m.sample_id, attr);
  return Finish(w, "mmap2.filename");
}

Result<RecordBytes> BuildMmap(const MmapRecord& m, uint16_t misc, const EventAttr* attr,
                              bool swap) {
  ByteWriter w(swap);
  Begin(w, PERF_RECORD_MMAP, misc);
  w.U32(m.pid);
  w.U32(m.tid);
  w.U64(m.start);
  w.U64(m.len);
  w.U64(m.pgoff);
  w.PaddedString(m.filename, 8);
  SampleIdBlock(w, m.sample_id, attr);
  return Finish(w, "mmap.filename");
}

Result<RecordBytes> BuildComm(const CommRecord& c, const EventAttr* attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, PERF_RECORD_COMM, c.exec ? kMiscCommExec : 0);
  w.U32(c.pid);
  w.U32(c.tid);
  w.PaddedString(c.comm, 8);
  SampleIdBlock(w, c.sample_id, attr);
  return Finish(w, "comm.comm");
}

RecordBytes BuildTask(uint32_t type, const TaskRecord& t, const EventAttr* attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, type, 0);
  w.U32(t.pid);
  w.U32(t.ppid);
  w.U32(t.tid);
  w.U32(t.ptid);
  w.U64(t.time);
  SampleIdBlock(w, t.sample_id, attr);
  return FinishFixed(w);
}

RecordBytes BuildLost(const LostRecord& l, const EventAttr* attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, PERF_RECORD_LOST, 0);
  w.U64(l.id);
  w.U64(l.lost);
  SampleIdBlock(w, l.sample_id, attr);
  return FinishFixed(w);
}

RecordBytes BuildLostSamples(const LostSamplesRecord& l, const EventAttr* attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, PERF_RECORD_LOST_SAMPLES, 0);
  w.U64(l.lost);
  SampleIdBlock(w, l.sample_id, attr);
  return FinishFixed(w);
}

RecordBytes BuildThrottle(const ThrottleRecord& t, const EventAttr* attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, t.unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0);
  w.U64(t.time);
  w.U64(t.id);
  w.U64(t.stream_id);
  SampleIdBlock(w, t.sample_id, attr);
  return FinishFixed(w);
}

Result<RecordBytes> BuildSample(const SampleRecord& s, const std::vector<uint64_t>& callchain,
                                const EventAttr& attr, bool swap) {
  return BuildSample(s, callchain, SampleTail(), attr, swap);
}

Result<RecordBytes> BuildSample(const SampleRecord& s, const std::vector<uint64_t>& callchain,
                                const SampleTail& tail, const EventAttr& attr, bool swap) {
  ByteWriter w(swap);
  Begin(w, PERF_RECORD_SAMPLE, s.cpumode);
  uint64_t st = attr.attr.sample_type;
  if (st & PERF_SAMPLE_IDENTIFIER)
    w.U64(s.sample_id.id);
  if (st & PERF_SAMPLE_IP)
    w.U64(s.ip);
  if (st & PERF_SAMPLE_TID)
    w.U32(s.sample_id.pid), w.U32(s.sample_id.tid);
  if (st & PERF_SAMPLE_TIME)
    w.U64(s.sample_id.time);
  if (st & PERF_SAMPLE_ADDR)
    w.U64(s.addr);
  if (st & PERF_SAMPLE_ID)
    w.U64(s.sample_id.id);
  if (st & PERF_SAMPLE_STREAM_ID)
    w.U64(s.sample_id.stream_id);
  if (st & PERF_SAMPLE_CPU)
    w.U32(s.sample_id.cpu), w.U32(0);
  if (st & PERF_SAMPLE_PERIOD)
    w.U64(s.period);
  if (st & PERF_SAMPLE_CALLCHAIN) {
    w.U64(callchain.size());
    for (uint64_t ip : callchain)
      w.U64(ip);
  }
  if (st & PERF_SAMPLE_RAW) {
    w.U32(static_cast<uint32_t>(tail.raw.size()));
    w.Bytes(tail.raw.data(), tail.raw.size());
  }
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    w.U64(tail.branches.size());
    if (attr.attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
      w.U64(tail.branch_hw_idx);
    for (const BranchEntry& b : tail.branches)
      w.U64(b.from), w.U64(b.to), w.U64(b.flags);
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    w.U64(tail.regs_abi);
    if (tail.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
      for (uint64_t v : tail.regs)
        w.U64(v);
    }
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    w.U64(tail.stack.size());
    if (!tail.stack.empty()) {
      w.Bytes(tail.stack.data(), tail.stack.size());
      w.U64(tail.stack_dyn_size);
    }
  }
  return Finish(w, "sample.callchain");
}

Result<RecordBytes> BuildHeaderBuildId(int32_t pid, uint16_t misc, const BuildId& id,
                                       std::string_view filename, bool swap) {
  ByteWriter w(swap);
  Begin(w, kRecordHeaderBuildId, misc | kMiscBuildIdSize);
  w.U32(static_cast<uint32_t>(pid));
  auto padded = id.Padded();
  w.Bytes(padded.data(), padded.size());
  w.U8(static_cast<uint8_t>(id.size()));
  w.Zeros(3);
  w.PaddedString(filename, 64);
  // The 36 bytes before the name and its 64-byte padding leave the record 4 bytes short of a
  // multiple of 8: perf 6.1 wrote it so, but newer perfs reject a record in the data section
  // whose size is not 8-byte aligned (and lose the alignment of every record after it). perf
  // reads the name up to its NUL, so the 4 zeros change nothing for it.
  w.Zeros(4);
  return Finish(w, "header_build_id.filename");
}

RecordBytes BuildEmptyRecord(uint32_t type, bool swap) {
  ByteWriter w(swap);
  Begin(w, type, 0);
  return FinishFixed(w);
}

}  // namespace pbid
