// SPDX-License-Identifier: GPL-2.0
//
// The record-type table (RecordType in pbid/records.h): each type's name, its check and its
// description, and whether script shows it. The descriptions follow `perf report -D`.
#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <string>

#include "pbid/records.h"

namespace pbid {

namespace {

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string ProtString(uint32_t prot, uint32_t flags) {
  std::string s;
  s += (prot & PROT_READ) ? 'r' : '-';
  s += (prot & PROT_WRITE) ? 'w' : '-';
  s += (prot & PROT_EXEC) ? 'x' : '-';
  s += (flags & MAP_SHARED) ? 's' : 'p';
  return s;
}

// A row's check from its decoder.
template <auto Parse>
Status Check(const RecordView& r, const EventAttr* attr) {
  auto v = Parse(r, attr);
  if (!v.ok())
    return v.error();
  return Ok();
}

Status CheckSample(const RecordView& r, const EventAttr* attr) {
  if (attr == nullptr)
    return Ok();  // no layout to decode it with; the session counts it as unknown
  auto s = ParseSample(r, *attr);
  if (!s.ok())
    return s.error();
  return Ok();
}

Status CheckHeaderBuildId(const RecordView& r, const EventAttr*) {
  auto b = ParseHeaderBuildId(r);
  if (!b.ok())
    return b.error();
  return Ok();
}

Result<std::string> DescribeMmap2(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(Mmap2Record m, ParseMmap2(r, attr));
  std::string id =
      m.has_build_id ? "<" + m.build_id.ToHex() + ">"
                     : Fmt("%02x:%02x %" PRIu64 " %" PRIu64, m.maj, m.min, m.ino, m.ino_generation);
  return Fmt(" %d/%d: [0x%" PRIx64 "(0x%" PRIx64 ") @ 0x%" PRIx64 " ", m.pid, m.tid, m.start, m.len,
             m.pgoff) +
         id + "]: " + ProtString(m.prot, m.flags) + " " + std::string(m.filename) +
         (m.misc_bit_untrusted ? " (build-id bit ignored: event lacks attr.build_id)" : "");
}

Result<std::string> DescribeMmap(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(MmapRecord m, ParseMmap(r, attr));
  return Fmt(" %d/%d: [0x%" PRIx64 "(0x%" PRIx64 ") @ 0x%" PRIx64 "]: %s", m.pid, m.tid, m.start,
             m.len, m.pgoff, std::string(m.filename).c_str());
}

Result<std::string> DescribeComm(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(CommRecord c, ParseComm(r, attr));
  return std::string(c.exec ? " exec" : "") +
         Fmt(": %s:%d/%d", std::string(c.comm).c_str(), c.pid, c.tid);
}

Result<std::string> DescribeTask(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(TaskRecord t, ParseTask(r, attr));
  return Fmt("(%d:%d):(%d:%d)", t.pid, t.tid, t.ppid, t.ptid);
}

Result<std::string> DescribeLost(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(LostRecord l, ParseLost(r, attr));
  return Fmt(" id %" PRIu64 " lost %" PRIu64, l.id, l.lost);
}

Result<std::string> DescribeLostSamples(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(LostSamplesRecord l, ParseLostSamples(r, attr));
  return Fmt(" lost %" PRIu64, l.lost);
}

Result<std::string> DescribeThrottle(const RecordView& r, const EventAttr* attr) {
  PBID_ASSIGN_OR_RETURN(ThrottleRecord t, ParseThrottle(r, attr));
  return Fmt(" %" PRIu64 " id %" PRIu64 " stream %" PRIu64, t.time, t.id, t.stream_id);
}

Result<std::string> DescribeSample(const RecordView& r, const EventAttr* attr) {
  if (!attr)
    return std::string();
  PBID_ASSIGN_OR_RETURN(SampleRecord s, ParseSample(r, *attr));
  std::string out = Fmt("(IP, 0x%x): %d/%d: 0x%" PRIx64 " period: %" PRIu64, r.header.misc,
                        s.sample_id.pid, s.sample_id.tid, s.ip, s.period);
  // A field the sample does not carry is left out, not printed as 0.
  uint64_t st = attr->attr.sample_type;
  if (st & PERF_SAMPLE_CPU)
    out += Fmt(" cpu: %u", s.sample_id.cpu);
  if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
    out += Fmt(" id: %" PRIu64, s.sample_id.id);
  if (s.callchain.size()) {
    out += Fmt("\n... FP chain: nr:%" PRIu64, s.callchain.size());
    for (uint64_t i = 0; i < s.callchain.size(); i++)
      out += Fmt("\n.....  %2" PRIu64 ": %016" PRIx64, i, s.callchain[i]);
  }
  return out;
}

Result<std::string> DescribeHeaderBuildId(const RecordView& r, const EventAttr*) {
  PBID_ASSIGN_OR_RETURN(HeaderBuildIdRecord b, ParseHeaderBuildId(r));
  return Fmt(": %s %s", b.build_id.ToHex().c_str(), std::string(b.filename).c_str());
}

constexpr auto kCheckTask = Check<ParseTask>;

// Sorted by type (a static_assert below keeps it so). Rows without a decoder are types this
// tool passes over but names, as perf -D does.
constexpr RecordType kRecordTypes[] = {
    {PERF_RECORD_MMAP, "PERF_RECORD_MMAP", Check<ParseMmap>, DescribeMmap, true},
    {PERF_RECORD_LOST, "PERF_RECORD_LOST", Check<ParseLost>, DescribeLost, true},
    {PERF_RECORD_COMM, "PERF_RECORD_COMM", Check<ParseComm>, DescribeComm, true},
    {PERF_RECORD_EXIT, "PERF_RECORD_EXIT", kCheckTask, DescribeTask, true},
    {PERF_RECORD_THROTTLE, "PERF_RECORD_THROTTLE", Check<ParseThrottle>, DescribeThrottle, false},
    {PERF_RECORD_UNTHROTTLE, "PERF_RECORD_UNTHROTTLE", Check<ParseThrottle>, DescribeThrottle,
     false},
    {PERF_RECORD_FORK, "PERF_RECORD_FORK", kCheckTask, DescribeTask, true},
    {PERF_RECORD_READ, "PERF_RECORD_READ", nullptr, nullptr, false},
    {PERF_RECORD_SAMPLE, "PERF_RECORD_SAMPLE", CheckSample, DescribeSample, false},
    {PERF_RECORD_MMAP2, "PERF_RECORD_MMAP2", Check<ParseMmap2>, DescribeMmap2, true},
    {PERF_RECORD_AUX, "PERF_RECORD_AUX", nullptr, nullptr, false},
    {PERF_RECORD_ITRACE_START, "PERF_RECORD_ITRACE_START", nullptr, nullptr, false},
    {PERF_RECORD_LOST_SAMPLES, "PERF_RECORD_LOST_SAMPLES", Check<ParseLostSamples>,
     DescribeLostSamples, true},
    {PERF_RECORD_SWITCH, "PERF_RECORD_SWITCH", nullptr, nullptr, false},
    {PERF_RECORD_SWITCH_CPU_WIDE, "PERF_RECORD_SWITCH_CPU_WIDE", nullptr, nullptr, false},
    {PERF_RECORD_NAMESPACES, "PERF_RECORD_NAMESPACES", nullptr, nullptr, false},
    {PERF_RECORD_KSYMBOL, "PERF_RECORD_KSYMBOL", nullptr, nullptr, false},
    {PERF_RECORD_BPF_EVENT, "PERF_RECORD_BPF_EVENT", nullptr, nullptr, false},
    {PERF_RECORD_CGROUP, "PERF_RECORD_CGROUP", nullptr, nullptr, false},
    {PERF_RECORD_TEXT_POKE, "PERF_RECORD_TEXT_POKE", nullptr, nullptr, false},
    {kRecordAuxOutputHwId, "PERF_RECORD_AUX_OUTPUT_HW_ID", nullptr, nullptr, false},
    {kRecordHeaderAttr, "PERF_RECORD_HEADER_ATTR", nullptr, nullptr, false},
    {kRecordHeaderEventType, "PERF_RECORD_HEADER_EVENT_TYPE", nullptr, nullptr, false},
    {kRecordHeaderTracingData, "PERF_RECORD_HEADER_TRACING_DATA", nullptr, nullptr, false},
    {kRecordHeaderBuildId, "PERF_RECORD_HEADER_BUILD_ID", CheckHeaderBuildId, DescribeHeaderBuildId,
     false},
    {kRecordFinishedRound, "PERF_RECORD_FINISHED_ROUND", nullptr, nullptr, false},
    {kRecordIdIndex, "PERF_RECORD_ID_INDEX", nullptr, nullptr, false},
    {kRecordAuxtraceInfo, "PERF_RECORD_AUXTRACE_INFO", nullptr, nullptr, false},
    {kRecordAuxtrace, "PERF_RECORD_AUXTRACE", nullptr, nullptr, false},
    {kRecordAuxtraceError, "PERF_RECORD_AUXTRACE_ERROR", nullptr, nullptr, false},
    {kRecordThreadMap, "PERF_RECORD_THREAD_MAP", nullptr, nullptr, false},
    {kRecordCpuMap, "PERF_RECORD_CPU_MAP", nullptr, nullptr, false},
    {kRecordStatConfig, "PERF_RECORD_STAT_CONFIG", nullptr, nullptr, false},
    {kRecordStat, "PERF_RECORD_STAT", nullptr, nullptr, false},
    {kRecordStatRound, "PERF_RECORD_STAT_ROUND", nullptr, nullptr, false},
    {kRecordEventUpdate, "PERF_RECORD_EVENT_UPDATE", nullptr, nullptr, false},
    {kRecordTimeConv, "PERF_RECORD_TIME_CONV", nullptr, nullptr, false},
    {kRecordHeaderFeature, "PERF_RECORD_HEADER_FEATURE", nullptr, nullptr, false},
    {kRecordCompressed, "PERF_RECORD_COMPRESSED", nullptr, nullptr, false},
    {kRecordFinishedInit, "PERF_RECORD_FINISHED_INIT", nullptr, nullptr, false},
    {kRecordCompressed2, "PERF_RECORD_COMPRESSED2", nullptr, nullptr, false},
};

constexpr bool SortedByType() {
  for (size_t i = 1; i < std::size(kRecordTypes); i++) {
    if (kRecordTypes[i - 1].type >= kRecordTypes[i].type)
      return false;
  }
  return true;
}
static_assert(SortedByType(), "kRecordTypes must be sorted by type, one row per type");

// Types index this, so that the lookup a session makes per record is one load: the table's
// types are small numbers (kernel records from 1, perf's own from 64).
constexpr uint32_t kTypeLimit = kRecordCompressed2 + 1;
static_assert(kRecordTypes[std::size(kRecordTypes) - 1].type < kTypeLimit);

struct TypeIndex {
  uint8_t row[kTypeLimit];  // index + 1 into kRecordTypes; 0: no row
};

constexpr TypeIndex MakeTypeIndex() {
  TypeIndex ix{};
  for (size_t i = 0; i < std::size(kRecordTypes); i++)
    ix.row[kRecordTypes[i].type] = static_cast<uint8_t>(i + 1);
  return ix;
}
constexpr TypeIndex kTypeIndex = MakeTypeIndex();

}  // namespace

const RecordType* RecordTypeOf(uint32_t type) {
  if (type >= kTypeLimit || kTypeIndex.row[type] == 0)
    return nullptr;
  return &kRecordTypes[kTypeIndex.row[type] - 1];
}

const char* RecordTypeName(uint32_t type) {
  const RecordType* t = RecordTypeOf(type);
  return t ? t->name : nullptr;
}

}  // namespace pbid
