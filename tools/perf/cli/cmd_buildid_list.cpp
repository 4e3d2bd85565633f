// SPDX-License-Identifier: GPL-2.0
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "pbid/session.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid buildid-list - list the build ids in a perf.data file\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid buildid-list [-i FILE] [-H] [-s]\n"
    "\n"
    "DESCRIPTION\n"
    "    Prints one line per DSO, '<build id> <path>', in the format and order of\n"
    "    'perf buildid-list'. When the file has a HEADER_BUILD_ID table (perf's default mode,\n"
    "    and every file perf-buildid writes), the table is printed. Otherwise (files from\n"
    "    'perf record --buildid-mmap') the records are replayed and the DSOs that were hit\n"
    "    by a sample and have a build id in their MMAP2 record are printed, as perf does,\n"
    "    except that in a file with times an exec ends its process's mappings, where perf\n"
    "    keeps those that the new ones do not cover.\n"
    "\n"
    "OPTIONS\n"
    "    -i, --input FILE   input file (default: perf.data; - reads stdin)\n"
    "    -H, --with-hits    only DSOs with samples, even when the file has a table\n"
    "    -s, --source       append the build id's source: kernel, synthesized, file\n"
    "    -h, --help         this text\n"
    "\n" PBID_CLI_READER_EXIT_STATUS;

}  // namespace

int pbid_cmd_buildid_list(int argc, char** argv) {
  bool with_hits = false, show_source = false;
  std::string input;
  std::unique_ptr<PerfDataReader> reader;
  int code = OpenFromCommandLine("buildid-list", kHelp,
                                 {{"with-hits", 'H', ArgKind::kNone, Set(&with_hits)},
                                  {"source", 's', ArgKind::kNone, Set(&show_source)}},
                                 argc, argv, &input, &reader);
  if (code != kParsed)
    return code;

  if (!with_hits && reader->features().build_ids) {
    // perf keeps one DSO per name; a later entry's id replaces an earlier one.
    std::vector<std::string> order;
    std::map<std::string, BuildId> ids;
    for (const BuildIdEntry& e : *reader->features().build_ids) {
      if (ids.find(e.filename) == ids.end())
        order.push_back(e.filename);
      ids[e.filename] = e.build_id;
    }
    for (const std::string& name : order) {
      if (show_source) {
        printf("%s %s file\n", ids[name].ToHex().c_str(), name.c_str());
      } else {
        printf("%s %s\n", ids[name].ToHex().c_str(), name.c_str());
      }
    }
    return FinishOutput("buildid-list");
  }

  Session session(*reader);
  Status st = session.Process();
  if (!st.ok())
    return Fail("buildid-list", st.error(), Stage::kInput, input);
  for (const Dso& d : session.dsos()) {
    if (d.samples == 0 || !d.build_id)
      continue;
    if (show_source) {
      printf("%s %s %s\n", d.build_id->ToHex().c_str(), d.path.c_str(),
             BuildIdSourceName(d.source));
    } else {
      printf("%s %s\n", d.build_id->ToHex().c_str(), d.path.c_str());
    }
  }
  return FinishOutput("buildid-list");
}
