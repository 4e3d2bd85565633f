// SPDX-License-Identifier: GPL-2.0
//
// script: records in time order, one line each, like `perf script --show-mmap-events`.
// dump: records in file order with offsets and raw bytes, like `perf report -D`.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "pbid/session.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kScriptHelp[] =
    "NAME\n"
    "    perf-buildid script - print the records of a perf.data file in time order\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid script [-i FILE] [--no-mmap]\n"
    "\n"
    "DESCRIPTION\n"
    "    One line per record, in the style of 'perf script --show-mmap-events\n"
    "    --show-task-events': samples as 'comm tid time: period event: ip (dso)' followed by\n"
    "    their callchain when recorded with -g; MMAP2 records with their build id in <>, or\n"
    "    maj:min ino when they carry none. Build ids that came from another source than the\n"
    "    record are shown as <id source>.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE   input file (default: perf.data; - reads stdin)\n"
    "        --no-mmap      samples only\n"
    "    -h, --help         this text\n"
    "\n" PBID_CLI_READER_EXIT_STATUS;

const char kDumpHelp[] =
    "NAME\n"
    "    perf-buildid dump - print every record of a perf.data file with its raw bytes\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid dump [-i FILE] [--no-hex]\n"
    "\n"
    "DESCRIPTION\n"
    "    Prints the file header (byte order, attrs, feature sections), then each record of\n"
    "    the data section in file order, as 'perf report -D' does: its file offset and size,\n"
    "    a hex dump, and the decoded fields.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE   input file (default: perf.data; - reads stdin)\n"
    "        --no-hex       leave out the hex dumps\n"
    "    -h, --help         this text\n"
    "\n" PBID_CLI_READER_EXIT_STATUS
    "    A record that does not decode is a corrupt input (3); the records before it\n"
    "    are printed.\n";

std::string ProtString(uint32_t prot, uint32_t flags) {
  std::string s;
  s += (prot & PROT_READ) ? 'r' : '-';
  s += (prot & PROT_WRITE) ? 'w' : '-';
  s += (prot & PROT_EXEC) ? 'x' : '-';
  s += (flags & MAP_SHARED) ? 's' : 'p';
  return s;
}

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

// The decoded fields of one record, perf -D style, without a trailing newline.
Result<std::string> Describe(const RecordView& r, const EventAttr* attr) {
  const char* name = RecordTypeName(r.header.type);
  std::string n = name ? name : Fmt("record type %u", r.header.type);
  switch (r.header.type) {
    case PERF_RECORD_MMAP2: {
      auto m = ParseMmap2(r, attr);
      if (!m.ok())
        return m.error();
      std::string id = m->has_build_id ? "<" + m->build_id.ToHex() + ">"
                                       : Fmt("%02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min,
                                             m->ino, m->ino_generation);
      return n +
             Fmt(" %d/%d: [0x%" PRIx64 "(0x%" PRIx64 ") @ 0x%" PRIx64 " ", m->pid, m->tid, m->start,
                 m->len, m->pgoff) +
             id + "]: " + ProtString(m->prot, m->flags) + " " + std::string(m->filename) +
             (m->misc_bit_untrusted ? " (build-id bit ignored: event lacks attr.build_id)" : "");
    }
    case PERF_RECORD_MMAP: {
      auto m = ParseMmap(r, attr);
      if (!m.ok())
        return m.error();
      return n + Fmt(" %d/%d: [0x%" PRIx64 "(0x%" PRIx64 ") @ 0x%" PRIx64 "]: %s", m->pid, m->tid,
                     m->start, m->len, m->pgoff, std::string(m->filename).c_str());
    }
    case PERF_RECORD_COMM: {
      auto c = ParseComm(r, attr);
      if (!c.ok())
        return c.error();
      return n + (c->exec ? " exec" : "") +
             Fmt(": %s:%d/%d", std::string(c->comm).c_str(), c->pid, c->tid);
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      auto t = ParseTask(r, attr);
      if (!t.ok())
        return t.error();
      return n + Fmt("(%d:%d):(%d:%d)", t->pid, t->tid, t->ppid, t->ptid);
    }
    case PERF_RECORD_LOST: {
      auto l = ParseLost(r, attr);
      if (!l.ok())
        return l.error();
      return n + Fmt(" id %" PRIu64 " lost %" PRIu64, l->id, l->lost);
    }
    case PERF_RECORD_LOST_SAMPLES: {
      auto l = ParseLostSamples(r, attr);
      if (!l.ok())
        return l.error();
      return n + Fmt(" lost %" PRIu64, l->lost);
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      auto t = ParseThrottle(r, attr);
      if (!t.ok())
        return t.error();
      return n + Fmt(" %" PRIu64 " id %" PRIu64 " stream %" PRIu64, t->time, t->id, t->stream_id);
    }
    case PERF_RECORD_SAMPLE: {
      if (!attr)
        return n;
      auto s = ParseSample(r, *attr);
      if (!s.ok())
        return s.error();
      std::string out = n + Fmt("(IP, 0x%x): %d/%d: 0x%" PRIx64 " period: %" PRIu64, r.header.misc,
                                s->sample_id.pid, s->sample_id.tid, s->ip, s->period);
      // A field the sample does not carry is left out, not printed as 0.
      uint64_t st = attr->attr.sample_type;
      if (st & PERF_SAMPLE_CPU)
        out += Fmt(" cpu: %u", s->sample_id.cpu);
      if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
        out += Fmt(" id: %" PRIu64, s->sample_id.id);
      if (s->callchain.size()) {
        out += Fmt("\n... FP chain: nr:%" PRIu64, s->callchain.size());
        for (uint64_t i = 0; i < s->callchain.size(); i++) {
          out += Fmt("\n.....  %2" PRIu64 ": %016" PRIx64, i, s->callchain[i]);
        }
      }
      return out;
    }
    case kRecordHeaderBuildId: {
      auto b = ParseHeaderBuildId(r);
      if (!b.ok())
        return b.error();
      return n + Fmt(": %s %s", b->build_id.ToHex().c_str(), std::string(b->filename).c_str());
    }
    default: return n;
  }
}

void HexDump(const RecordView& r) {
  printf(". ... raw event: size %u bytes\n", r.header.size);
  for (size_t i = 0; i < r.header.size; i += 16) {
    printf(".  %04zx: ", i);
    for (size_t j = i; j < i + 16; j++) {
      if (j < r.header.size) {
        printf(" %02x", r.data[j]);
      } else {
        printf("   ");
      }
    }
    printf("  ");
    for (size_t j = i; j < i + 16 && j < r.header.size; j++) {
      unsigned char ch = r.data[j];
      putchar(ch >= 0x20 && ch < 0x7f ? ch : '.');
    }
    putchar('\n');
  }
}

}  // namespace

int pbid_cmd_script(int argc, char** argv) {
  bool no_mmap = false;
  std::string input;
  std::unique_ptr<PerfDataReader> reader;
  int code =
      OpenFromCommandLine("script", kScriptHelp, {{"no-mmap", 0, ArgKind::kNone, Set(&no_mmap)}},
                          argc, argv, &input, &reader);
  if (code != kParsed)
    return code;
  Session session(*reader);
  uint64_t current_time = 0;
  auto on_sample = [&](const SampleContext& s) {
    const SampleId& id = s.sample.sample_id;
    std::string name = s.attr.name.empty() ? "event" : s.attr.name;
    const Mapping* m = s.mapping;
    printf("%16s %6u %s: %10" PRIu64 " %s: %16" PRIx64 " (%s)\n", session.CommOf(id.pid).c_str(),
           id.tid, FormatTime(id.time).c_str(), s.sample.period, name.c_str(), s.sample.ip,
           m ? session.dsos()[m->dso].path.c_str() : "[unknown]");
    for (uint64_t i = 0; i < s.sample.callchain.size(); i++) {
      uint64_t ip = s.sample.callchain[i];
      if (ip >= kContextMax)
        continue;
      printf("\t%16" PRIx64 "\n", ip);
    }
    current_time = id.time;
  };
  auto on_record = [&](const RecordContext& ctx) {
    const RecordView& r = ctx.record;
    const EventAttr* attr = &ctx.attr;
    if (no_mmap || r.header.type == PERF_RECORD_SAMPLE)
      return;
    if (r.header.type != PERF_RECORD_MMAP && r.header.type != PERF_RECORD_MMAP2 &&
        r.header.type != PERF_RECORD_COMM && r.header.type != PERF_RECORD_FORK &&
        r.header.type != PERF_RECORD_EXIT && r.header.type != PERF_RECORD_LOST &&
        r.header.type != PERF_RECORD_LOST_SAMPLES) {
      return;
    }
    auto d = Describe(r, attr);
    if (!d.ok())
      return;
    auto sid = ParseSampleId(r, attr);
    SampleId id = sid.ok() ? *sid : SampleId();
    std::string extra;
    // The session drops empty or wrapping mappings: those added nothing.
    const Mapping* m = ctx.added;
    if (m && m->build_id && m->source != BuildIdSource::kKernelRecord)
      extra = " <" + m->build_id->ToHex() + " " + BuildIdSourceName(m->source) + ">";
    printf("%16s %6u %s: %s%s\n", session.CommOf(static_cast<int32_t>(id.pid)).c_str(), id.tid,
           FormatTime(id.time).c_str(), d->c_str(), extra.c_str());
  };
  Status st = session.Process(on_sample, on_record);
  fflush(stdout);
  if (!st.ok())
    return Fail("script", st.error(), Stage::kInput, input);
  return FinishOutput("script");
}

int pbid_cmd_dump(int argc, char** argv) {
  bool no_hex = false;
  std::string input;
  std::unique_ptr<PerfDataReader> reader;
  int code = OpenFromCommandLine("dump", kDumpHelp, {{"no-hex", 0, ArgKind::kNone, Set(&no_hex)}},
                                 argc, argv, &input, &reader);
  if (code != kParsed)
    return code;
  // Counted first: a record header that does not fit fails the dump before it prints.
  uint64_t records = 0;
  Status counted = reader->ForEachRecord([&](const RecordView&) {
    records++;
    return Ok();
  });
  if (!counted.ok())
    return Fail("dump", counted.error(), Stage::kInput, input);
  printf("# byte order: %s%s\n", reader->swapped() ? "swapped" : "native",
         reader->pipe_mode() ? ", pipe mode" : "");
  printf("# data: offset 0x%" PRIx64 " size 0x%" PRIx64 " records %" PRIu64 "\n",
         reader->data_offset(), reader->data_size(), records);
  for (size_t i = 0; i < reader->attrs().size(); i++) {
    const EventAttr& a = reader->attrs()[i];
    printf(
        "# attr[%zu] %s: type %u config %llu sample_type 0x%llx build_id %d "
        "sample_id_all %d ids",
        i, a.name.c_str(), a.attr.type, static_cast<unsigned long long>(a.attr.config),
        static_cast<unsigned long long>(a.attr.sample_type), a.attr.build_id, a.attr.sample_id_all);
    for (uint64_t id : a.ids)
      printf(" %" PRIu64, id);
    printf("\n");
  }
  for (int bit = 1; bit < kFeatBits; bit++) {
    auto [p, n] = reader->FeatureBytes(bit);
    if (p)
      printf("# feature %d: %zu bytes\n", bit, n);
  }
  Status st = reader->ForEachRecord([&](const RecordView& r) -> Status {
    printf("\n0x%" PRIx64 " [0x%x]: event: %u\n", r.offset, r.header.size, r.header.type);
    if (!no_hex)
      HexDump(r);
    const EventAttr* attr = reader->AttrForRecord(r);
    PBID_ASSIGN_OR_RETURN(std::string d, Describe(r, attr));
    auto sid = ParseSampleId(r, attr);
    uint64_t t = sid.ok() ? sid->time : 0;
    if (r.header.type == PERF_RECORD_SAMPLE && attr) {
      auto s = ParseSample(r, *attr);
      if (s.ok())
        t = s->sample_id.time;
    }
    printf("%" PRIu64 " 0x%" PRIx64 " [0x%x]: %s\n", t, r.offset, r.header.size, d.c_str());
    return Ok();
  });
  if (!st.ok()) {
    fflush(stdout);
    return Fail("dump", st.error(), Stage::kInput, input);
  }
  return FinishOutput("dump");
}
