// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid archive: the files a recording's samples hit, stored by build ID in the
// .build-id layout, so that the recording can be symbolized where none of them exists.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "pbid/session.h"
#include "pbid/symbolize/archive.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kCmd[] = "archive";

const char kHelp[] =
    "NAME\n"
    "    perf-buildid archive - store the files a recording needs, by build ID\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid archive [-i FILE] -o DIR [--max-size SIZE]\n"
    "    perf-buildid archive [-i FILE] -o FILE.tar | -o FILE.tar.zst\n"
    "                         [--debug-dir DIR]... [--debug-root DIR]\n"
    "                         [--debuginfod URL | --no-debuginfod]\n"
    "                         [--debuginfod-budget SECONDS]\n"
    "\n"
    "DESCRIPTION\n"
    "    For every user-space file that a sample of FILE hit and that has a build ID, stores\n"
    "    the executable as DIR/xx/yyyy and its separate debug file, where one exists, as\n"
    "    DIR/xx/yyyy.debug: the .build-id layout that 'debuginfod -F DIR', gdb, perf and\n"
    "    'perf-buildid report --debug-dir DIR' read. The files are found as report finds\n"
    "    them (the recorded path only if the file there has the recorded build ID, then\n"
    "    DEBUG-ROOT/.build-id, each --debug-dir, then debuginfod), so a file with another\n"
    "    build ID is never stored. Files are regular files (debuginfod -F skips symbolic\n"
    "    links), written under a temporary name and renamed.\n"
    "\n"
    "    A file hit that has no GNU build ID but other identities in the recording (its Go\n"
    "    build ID, its file hash) is stored as DIR/file-hash/xx/yyyy, by its file hash, if the\n"
    "    file at its recorded path (or in a --debug-dir's file-hash directory) still has them.\n"
    "    debuginfod cannot serve these: report finds them with --debug-dir DIR.\n"
    "\n"
    "    DIR may be filled by several recordings: a build ID already there is kept and not\n"
    "    copied again, so recordings of the same binaries share their files. Each file this\n"
    "    recording needs gets the current time as its modification time: the time of its\n"
    "    last use. With --max-size, the least recently used build IDs are then removed\n"
    "    until DIR holds at most SIZE, never one this recording needs; when those alone are\n"
    "    more than SIZE, DIR is left larger and a warning says so (perf's ~/.debug has no\n"
    "    such bound).\n"
    "\n"
    "    With -o FILE.tar (or FILE.tar.zst, compressed with zstd), the same files of this\n"
    "    recording alone are written into a portable tarball instead, in the same layout:\n"
    "    'tar -xf FILE.tar -C DIR' makes DIR an archive directory.\n"
    "\n"
    "OUTPUT\n"
    "    One line per file hit, tab-separated:\n"
    "\n"
    "        stored|present|missing <tab> BUILDID <tab> PATH [<tab> REASON]\n"
    "\n"
    "    where a file without a build ID shows file-hash:HASH for BUILDID.\n"
    "\n"
    "    'present' means the archive already held it. Kernel images are not stored (report\n"
    "    reads kernel symbols from --kallsyms). Then, on standard error, the count of files\n"
    "    and bytes copied.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE     input file (default: perf.data)\n"
    "    -o, --output DIR     the archive directory (created if "
    "needed)\n" PBID_CLI_SYMBOLIZER_OPTIONS
    "    -h, --help           this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 every file was looked up (the missing ones are listed), 1 the archive cannot be\n"
    "    written, 2 bad command line, 3 the input is missing, unreadable or corrupt.\n";

const char* OutcomeName(ArchiveEntry::Outcome o) {
  switch (o) {
    case ArchiveEntry::Outcome::kStored: return "stored";
    case ArchiveEntry::Outcome::kPresent: return "present";
    case ArchiveEntry::Outcome::kMissing: break;
  }
  return "missing";
}

}  // namespace

int pbid_cmd_archive(int argc, char** argv) {
  SymbolizerOptions opts;
  bool url_given = false;
  std::string input = "perf.data", output;
  uint64_t max_bytes = 0;
  std::vector<Option> options = {
      {"input", 'i', ArgKind::kRequired, Store(&input)},
      {"output", 'o', ArgKind::kRequired, Store(&output)},
      {"max-size", 0, ArgKind::kRequired, Size("--max-size", &max_bytes)},
  };
  for (Option& o : SymbolizerOptionList(&opts, &url_given))
    options.push_back(std::move(o));
  int code = ParseCommandLine(kCmd, kHelp, std::move(options), argc, argv, nullptr);
  if (code == kParsed)
    code = SymbolizerOptionsConflict(kCmd, opts, url_given);
  if (code != kParsed)
    return code;
  if (output.empty())
    return UsageError(kCmd, "-o DIR is required");

  auto reader = OpenInput(input);
  if (!reader.ok())
    return Fail(kCmd, reader.error(), Stage::kInput, input);
  Session session(**reader);
  if (Status st = session.Process(); !st.ok())
    return Fail(kCmd, st.error(), Stage::kInput, input);

  ArchiveInput want;
  std::set<std::pair<BuildId, std::string>> seen;
  std::set<std::pair<std::string, std::string>> seen_files;  // (file hash, path)
  for (const Dso& d : session.dsos()) {
    if (d.samples == 0)
      continue;
    if (!d.build_id) {
      // A file named by its other identities: stored by its file hash.
      if (!d.kernel && !d.file_ids.empty() &&
          seen_files.insert({d.file_ids.file_hash ? d.file_ids.file_hash->ToHex() : "", d.path})
              .second) {
        want.by_file_ids.emplace_back(d.file_ids, d.path);
      }
      continue;
    }
    if (d.kernel) {
      printf("missing\t%s\t%s\tkernel image: not archived\n", d.build_id->ToHex().c_str(),
             d.path.c_str());
      continue;
    }
    if (seen.insert({*d.build_id, d.path}).second)
      want.modules.emplace_back(*d.build_id, d.path);
  }

  auto ends_with = [&](const char* suffix) {
    size_t n = strlen(suffix);
    return output.size() > n && output.compare(output.size() - n, n, suffix) == 0;
  };
  const bool tarball = ends_with(".tar") || ends_with(".tar.zst");
  if (tarball && max_bytes > 0)
    return UsageError(kCmd, "--max-size applies to an archive directory, not a tarball");
  auto summary = tarball ? ArchiveModulesToTarball(opts, output, want)
                         : ArchiveModules(opts, output, want, max_bytes);
  if (!summary.ok())
    return Fail(kCmd, summary.error(), Stage::kOperation, input);
  uint64_t missing = 0;
  for (const ArchiveEntry& e : summary->entries) {
    if (e.outcome == ArchiveEntry::Outcome::kMissing) {
      missing++;
      printf("missing\t%s\t%s\t%s\n", e.Key().c_str(), e.recorded_path.c_str(), e.reason.c_str());
    } else {
      printf("%s\t%s\t%s\n", OutcomeName(e.outcome), e.Key().c_str(), e.recorded_path.c_str());
    }
  }
  fprintf(stderr,
          "perf-buildid %s: %zu files hit, %" PRIu64 " missing; copied %" PRIu64 " files, %" PRIu64
          " bytes\n",
          kCmd, summary->entries.size(), missing, summary->files_copied, summary->bytes_copied);
  if (max_bytes > 0) {
    fprintf(stderr,
            "perf-buildid %s: evicted %" PRIu64 " build IDs, %" PRIu64
            " bytes; archive holds %" PRIu64 " bytes\n",
            kCmd, summary->ids_evicted, summary->bytes_evicted, summary->archive_bytes);
    if (!summary->within_cap)
      fprintf(stderr,
              "perf-buildid %s: warning: the files this recording needs exceed --max-size "
              "%" PRIu64 "; none of them was evicted\n",
              kCmd, max_bytes);
  }
  return FinishOutput(kCmd);
}
