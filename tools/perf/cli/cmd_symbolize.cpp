// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid symbolize: "BUILDID+0xOFFSET" lines (bpftrace's build-ID stacks, BPF stack maps
// with BPF_F_USER_BUILD_ID, crash logs) named by the Symbolizer, as addr2line names addresses.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "pbid/build_id.h"
#include "pbid/symbolize/symbolizer.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid symbolize - name build-ID and file-offset pairs, as addr2line does\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid symbolize [-i FILE] [FILE...]\n"
    "                           [--debug-dir DIR]... [--debug-root DIR]\n"
    "                           [--debuginfod URL | --no-debuginfod]\n"
    "                           [--debuginfod-budget SECONDS]\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads lines of one of these forms, from the files given (- is standard input) or\n"
    "    from standard input:\n"
    "\n"
    "        BUILDID+0xOFFSET\n"
    "        BUILDID OFFSET\n"
    "\n"
    "    BUILDID is 2 to 40 hexadecimal digits; OFFSET is hexadecimal, with or without 0x,\n"
    "    and is a FILE OFFSET in the ELF with that build ID, as BPF stack maps with\n"
    "    BPF_F_USER_BUILD_ID, bpftrace's build-ID stacks and many crash logs give it, not a\n"
    "    virtual address: it is turned into one through the program headers (PT_LOAD).\n"
    "    Blanks around a line, and empty lines, are ignored. The files are found by build\n"
    "    ID as perf-buildid report finds them: DEBUG-ROOT/.build-id, each --debug-dir, then\n"
    "    debuginfod (every build ID of the input is asked for at once, before the first\n"
    "    line is printed, within --debuginfod-budget).\n"
    "\n"
    "OUTPUT\n"
    "    One line per source frame, innermost first, fields separated by a tab:\n"
    "\n"
    "        BUILDID+0xOFFSET <tab> FUNCTION <tab> FILE:LINE\n"
    "        BUILDID+0xOFFSET <tab> FUNCTION <tab> FILE:LINE <tab> inlined into CALLER\n"
    "\n"
    "    An address in inlined code has one line per inlined function, each marked\n"
    "    'inlined into' the function that follows it; FILE:LINE is then the position in\n"
    "    that function (the call site of the one before). The last line of an address is\n"
    "    the out-of-line function. BUILDID is in lower case and OFFSET as 0x and lower-case\n"
    "    hex whatever the input's spelling. FILE:LINE is ??:0 without line information.\n"
    "    What cannot be named prints, as addr2line prints it, with the reason:\n"
    "\n"
    "        BUILDID+0xOFFSET <tab> ?? <tab> ??:0 <tab> (REASON)\n"
    "\n"
    "    REASON is one of: no file with this build id; debug file only, executable not\n"
    "    found; offset outside every PT_LOAD; no symbol at address.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE     read FILE (- is standard input); FILE operands are read after\n"
    "                         it, in order\n" PBID_CLI_SYMBOLIZER_OPTIONS
    "    -h, --help           this text\n"
    "\n"
    "ENVIRONMENT\n"
    "    DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT (per connection),\n"
    "    DEBUGINFOD_MAXTIME (per download): see debuginfod-find(1).\n"
    "\n"
    "EXIT STATUS\n"
    "    0  every line was read (named or not)\n"
    "    1  the output cannot be written, or debuginfod cannot be set up\n"
    "    2  bad command line\n"
    "    3  an input cannot be read, or a line is not of a form above: each is reported on\n"
    "       standard error as FILE:LINE: what is wrong, and the other lines still print\n";

const char kCmd[] = "symbolize";

struct Query {
  BuildId id;
  uint64_t offset = 0;
};

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// One line, blanks around it removed and not empty. Returns "" with *q set, or what is wrong.
std::string ParseLine(const std::string& line, Query* q) {
  std::string id_text, off_text;
  size_t plus = line.find('+');
  if (plus != std::string::npos) {
    id_text = line.substr(0, plus);
    off_text = line.substr(plus + 1);
  } else {
    size_t blank = 0;
    while (blank < line.size() && !IsBlank(line[blank]))
      blank++;
    if (blank == line.size())
      return "expected BUILDID+0xOFFSET or BUILDID OFFSET, not '" + line + "'";
    id_text = line.substr(0, blank);
    size_t rest = blank;
    while (rest < line.size() && IsBlank(line[rest]))
      rest++;
    off_text = line.substr(rest);
  }
  bool hex = !id_text.empty();
  for (char c : id_text)
    hex = hex && IsHex(c);
  if (!hex || id_text.size() % 2 != 0 || id_text.size() > 2 * BuildId::kMaxSize)
    return "build ID '" + id_text + "' is not 2 to 40 hexadecimal digits (an even number)";
  for (char& c : id_text)
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  auto id = BuildId::FromHex(id_text);
  if (!id.ok())
    return "build ID '" + id_text + "': " + id.error().ToString();
  std::string digits = off_text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
    digits = digits.substr(2);
  // First zeros are no digits of the value: 0x0000000000001234 is a 64-bit offset.
  size_t nonzero = digits.find_first_not_of('0');
  std::string significant = nonzero == std::string::npos ? "" : digits.substr(nonzero);
  bool off_hex = !digits.empty();
  for (char c : digits)
    off_hex = off_hex && IsHex(c);
  if (!off_hex)
    return "offset '" + off_text + "' is not a hexadecimal number";
  if (significant.size() > 16)
    return "offset '" + off_text + "' does not fit in 64 bits";
  q->id = *id;
  q->offset = significant.empty() ? 0 : strtoull(significant.c_str(), nullptr, 16);
  return "";
}

// Reads the lines of one input, keeping the well-formed ones and reporting the others.
// False when the input itself cannot be read.
bool ReadInput(const std::string& path, std::vector<Query>* out, int* bad_lines) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "stdin" : path;
  FILE* f = is_stdin ? stdin : fopen(path.c_str(), "re");
  if (f == nullptr) {
    Fail(kCmd, Error::Sys(path, errno, "cannot open"), Stage::kInput);
    return false;
  }
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  uint64_t lineno = 0;
  while ((n = getline(&buf, &cap, f)) >= 0) {
    lineno++;
    std::string line(buf, static_cast<size_t>(n));
    size_t b = 0, e = line.size();
    while (b < e && IsBlank(line[b]))
      b++;
    while (e > b && IsBlank(line[e - 1]))
      e--;
    if (b == e)
      continue;
    Query q;
    std::string why = ParseLine(line.substr(b, e - b), &q);
    if (!why.empty()) {
      fprintf(stderr, "perf-buildid %s: %s:%" PRIu64 ": %s\n", kCmd, name.c_str(), lineno,
              why.c_str());
      ++*bad_lines;
      continue;
    }
    out->push_back(q);
  }
  int err = ferror(f) ? errno : 0;
  free(buf);
  if (!is_stdin)
    fclose(f);
  if (err != 0) {
    Fail(kCmd, Error::Sys(path, err, "cannot read"), Stage::kInput);
    return false;
  }
  return true;
}

std::string Position(const SourceFrame& f) {
  if (f.file.empty())
    return "??:0";
  return f.file + ":" + std::to_string(f.line);
}

void Print(const Query& q, const Result<Symbolization>& r) {
  char key[80];
  snprintf(key, sizeof(key), "%s+0x%" PRIx64, q.id.ToHex().c_str(), q.offset);
  if (!r.ok()) {
    // A file with this build ID that cannot be read: named as nothing, with the reason.
    printf("%s\t??\t??:0\t(%s)\n", key, r.error().ToString().c_str());
    return;
  }
  if (r->status != SymbolizeStatus::kOk || r->frames.empty()) {
    printf("%s\t??\t??:0\t(%s)\n", key, SymbolizeStatusName(r->status));
    return;
  }
  const std::vector<SourceFrame>& frames = r->frames;
  for (size_t i = 0; i < frames.size(); i++) {
    const std::string& fn = frames[i].function.empty() ? "??" : frames[i].function;
    if (i + 1 < frames.size()) {
      printf("%s\t%s\t%s\tinlined into %s\n", key, fn.c_str(), Position(frames[i]).c_str(),
             frames[i + 1].function.empty() ? "??" : frames[i + 1].function.c_str());
    } else {
      printf("%s\t%s\t%s\n", key, fn.c_str(), Position(frames[i]).c_str());
    }
  }
}

}  // namespace

int pbid_cmd_symbolize(int argc, char** argv) {
  SymbolizerOptions opts;
  std::vector<std::string> inputs;
  bool url_given = false;
  std::vector<Option> options = {{"input", 'i', ArgKind::kRequired, [&](const char* v) {
                                    inputs.push_back(v);
                                    return std::string();
                                  }}};
  for (Option& o : SymbolizerOptionList(&opts, &url_given))
    options.push_back(std::move(o));
  int code = ParseCommandLine(kCmd, kHelp, std::move(options), argc, argv, &inputs);
  if (code == kParsed)
    code = SymbolizerOptionsConflict(kCmd, opts, url_given);
  if (code != kParsed)
    return code;
  if (inputs.empty())
    inputs.push_back("-");

  auto symbolizer = Symbolizer::Create(opts);
  if (!symbolizer.ok())
    return Fail(kCmd, symbolizer.error(), Stage::kOperation);

  // Every line is read before the first is named: debuginfod is asked for all the build IDs
  // at once, within the budget, rather than one at a time as lines come.
  std::vector<Query> queries;
  int bad_lines = 0;
  bool unreadable = false;
  for (const std::string& in : inputs) {
    if (!ReadInput(in, &queries, &bad_lines))
      unreadable = true;
  }
  if ((*symbolizer)->UsesDebuginfod()) {
    std::set<BuildId> seen;
    std::vector<std::pair<BuildId, std::string>> modules;
    for (const Query& q : queries) {
      if (seen.insert(q.id).second)
        modules.emplace_back(q.id, "");
    }
    (*symbolizer)->Prefetch(modules);
  }
  for (const Query& q : queries) {
    // No recorded path: the files are found by build ID only.
    Print(q, (*symbolizer)->SymbolizeOffset(q.id, "", q.offset, SymbolDetail::kFull));
  }
  SymbolizerCoverage cov = (*symbolizer)->Coverage();
  if (cov.debuginfod_skipped != 0) {
    fprintf(stderr, "perf-buildid %s: debuginfod: %d lookups skipped (%s)\n", kCmd,
            cov.debuginfod_skipped, cov.debuginfod_skip_reason.c_str());
  }
  int out = FinishOutput(kCmd);
  if (out != kExitOk)
    return out;
  return bad_lines != 0 || unreadable ? kExitBadInput : kExitOk;
}
