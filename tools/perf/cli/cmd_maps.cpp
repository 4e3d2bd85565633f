// SPDX-License-Identifier: GPL-2.0
#include <sys/mman.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "pbid/session.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid maps - list every mapping of a perf.data file with its build id\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid maps [-i FILE] [--json] [-p PID]\n"
    "\n"
    "DESCRIPTION\n"
    "    Replays the PERF_RECORD_MMAP and PERF_RECORD_MMAP2 records in time order and prints\n"
    "    one line per mapping:\n"
    "\n"
    "        PID START-END PGOFF PROT SAMPLES BUILD-ID SOURCE PATH\n"
    "\n"
    "    PID is -1 for kernel mappings. PROT is r/w/x and p or s ('----' for MMAP records,\n"
    "    which carry none). BUILD-ID is the GNU build ID; a mapping without one shows the\n"
    "    identity the recorder read from its file instead, named by its kind: go:ID (the Go\n"
    "    build ID of a program linked by Go's own linker, as go tool buildid prints it) or\n"
    "    file-hash:HEX (the OpenTelemetry specification's file hash, 32 hex digits); '-' when\n"
    "    there is none. SOURCE says where the GNU build ID came from:\n"
    "      kernel       the kernel put it into the MMAP2 record (attr.build_id)\n"
    "      synthesized  the recorder read it for a process that was already running\n"
    "      file         read from the file: after the MMAP2 arrived (kernels without\n"
    "                   attr.build_id), or from the HEADER_BUILD_ID table by file name\n"
    "      none         no id: anonymous memory, no build-id note, or the file was gone\n"
    "    A MMAP2 record with PERF_RECORD_MISC_MMAP_BUILD_ID set by an event that did not\n"
    "    ask for build ids is read as maj/min/ino, never as an id.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE   input file (default: perf.data; - reads stdin)\n"
    "        --json         one JSON array of objects (pid, tid, start, end, pgoff, prot,\n"
    "                       path, build_id (GNU only), source, go_build_id, file_hash,\n"
    "                       identity (the best one: kind gnu, go, file-hash or none, and\n"
    "                       value), samples, kernel, time)\n"
    "    -p, --pid PID      only this process\n"
    "    -h, --help         this text\n"
    "\n" PBID_CLI_READER_EXIT_STATUS;

// PROT as the text shows it: "----" for an MMAP record, which carries none.
const char* Prot(const Mapping& m, char (&buf)[5]) {
  if (m.prot == 0 && m.flags == 0)
    return "----";
  buf[0] = (m.prot & PROT_READ) ? 'r' : '-';
  buf[1] = (m.prot & PROT_WRITE) ? 'w' : '-';
  buf[2] = (m.prot & PROT_EXEC) ? 'x' : '-';
  buf[3] = (m.flags & MAP_SHARED) ? 's' : 'p';
  buf[4] = '\0';
  return buf;
}

// An integer in base 10 or 16 (lower case, no prefix), as printf's %d, %u and %x write it.
template <typename Int>
void AppendInt(std::string* out, Int v, int base = 10) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof(buf), v, base).ptr;
  out->append(buf, end);
}

// One mapping's line of the text output, into *line. Written by hand, not by printf: on a
// file with tens of thousands of mappings, printf's work per line (and the strings the
// identity took) was a third of what maps cost beyond buildid-list.
void AppendLine(const Mapping& m, std::string* line) {
  static const char kDigits[] = "0123456789abcdef";
  char prot[5];
  AppendInt(line, m.pid);
  *line += ' ';
  AppendInt(line, m.start, 16);
  *line += '-';
  AppendInt(line, m.end, 16);
  *line += ' ';
  AppendInt(line, m.pgoff, 16);
  *line += ' ';
  *line += Prot(m, prot);
  *line += ' ';
  AppendInt(line, m.samples);
  *line += ' ';
  // The GNU build ID bare, as perf prints it; another kind named by a prefix, so that it is
  // never read as one.
  if (m.build_id) {
    for (size_t i = 0; i < m.build_id->size(); i++) {
      *line += kDigits[m.build_id->data()[i] >> 4];
      *line += kDigits[m.build_id->data()[i] & 0xf];
    }
  } else {
    const Identity best = BestIdentity(m.build_id, m.file_ids);
    if (best.kind == IdentityKind::kNone) {
      *line += '-';
    } else {
      *line += IdentityKindName(best.kind);
      *line += ':';
      *line += best.value;
    }
  }
  *line += ' ';
  *line += BuildIdSourceName(m.source);
  *line += ' ';
  *line += m.path;
  *line += '\n';
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

int pbid_cmd_maps(int argc, char** argv) {
  bool json = false;
  bool have_pid = false;
  int64_t pid = 0;
  auto take_pid = [&](const char* v) {
    // -1 selects the kernel's mappings.
    if (!ParseInt(v, -1, INT32_MAX, &pid))
      return BadNumber("-p", v, -1, INT32_MAX);
    have_pid = true;
    return std::string();
  };
  std::string input;
  std::unique_ptr<PerfDataReader> reader;
  int code = OpenFromCommandLine(
      "maps", kHelp,
      {{"json", 0, ArgKind::kNone, Set(&json)}, {"pid", 'p', ArgKind::kRequired, take_pid}}, argc,
      argv, &input, &reader);
  if (code != kParsed)
    return code;
  Session session(*reader);
  Status st = session.Process();
  if (!st.ok())
    return Fail("maps", st.error(), Stage::kInput, input);
  if (!json) {
    std::string line;
    for (const Mapping& m : session.mappings()) {
      if (have_pid && m.pid != pid)
        continue;
      line.clear();
      AppendLine(m, &line);
      fwrite(line.data(), 1, line.size(), stdout);
    }
    return FinishOutput("maps");
  }
  bool first = true;
  printf("[");
  for (const Mapping& m : session.mappings()) {
    if (have_pid && m.pid != pid)
      continue;
    std::string id = m.build_id ? m.build_id->ToHex() : "";
    const Identity best = BestIdentity(m.build_id, m.file_ids);
    char prot[5];
    printf("%s\n  {\"pid\": %d, \"tid\": %u, \"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64
           "\", \"pgoff\": \"0x%" PRIx64
           "\", \"prot\": \"%s\", \"path\": %s, "
           "\"build_id\": %s, \"source\": \"%s\", \"go_build_id\": %s, \"file_hash\": %s, "
           "\"identity\": {\"kind\": \"%s\", \"value\": %s}, \"samples\": %" PRIu64
           ", \"kernel\": %s, \"time\": %" PRIu64 "}",
           first ? "" : ",", m.pid, m.tid, m.start, m.end, m.pgoff, Prot(m, prot),
           JsonString(m.path).c_str(), m.build_id ? JsonString(id).c_str() : "null",
           BuildIdSourceName(m.source),
           m.file_ids.go_build_id ? JsonString(*m.file_ids.go_build_id).c_str() : "null",
           m.file_ids.file_hash ? JsonString(m.file_ids.file_hash->ToHex()).c_str() : "null",
           IdentityKindName(best.kind),
           best.kind == IdentityKind::kNone ? "null" : JsonString(best.value).c_str(), m.samples,
           m.kernel ? "true" : "false", m.time);
    first = false;
  }
  printf("%s]\n", first ? "" : "\n");
  return FinishOutput("maps");
}
