// SPDX-License-Identifier: GPL-2.0
//
// script: records in time order, one line each, like `perf script --show-mmap-events`.
// dump: records in file order with offsets and raw bytes, like `perf report -D`.
#include <cinttypes>
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
    "    record are shown as <id source>. A mapping without a GNU build ID shows the identity\n"
    "    the recorder read from its file, named by its kind: <go:ID> (the Go build ID, as go\n"
    "    tool buildid prints it) or <file-hash:HEX> (the OpenTelemetry specification's file\n"
    "    hash).\n"
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

// The decoded fields of one record, perf -D style, without a trailing newline: its name, then
// what its row of the record-type table says of it.
Result<std::string> Describe(const RecordView& r, const EventAttr* attr) {
  const RecordType* t = RecordTypeOf(r.header.type);
  if (!t)
    return "record type " + std::to_string(r.header.type);
  if (!t->describe)
    return std::string(t->name);
  PBID_ASSIGN_OR_RETURN(std::string fields, t->describe(r, attr));
  return t->name + fields;
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
    // A chain perf drops as corrupt is not printed, as perf script does not print it.
    const uint64_t frames = HasUnknownContext(s.sample.callchain) ? 0 : s.sample.callchain.size();
    for (uint64_t i = 0; i < frames; i++) {
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
    if (no_mmap)
      return;
    const RecordType* t = RecordTypeOf(r.header.type);
    if (!t || !t->in_script)
      return;
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
    if (m && !m->build_id) {
      const Identity other = BestIdentity(std::nullopt, m->file_ids);
      if (other.kind != IdentityKind::kNone)
        extra = " <" + std::string(IdentityKindName(other.kind)) + ":" + other.value + ">";
    }
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
