// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid record's command line, perf record's grammar: what to record (events and their
// modifiers, call graphs), where (CPUs, processes, threads, a command) and into what file,
// read into one RecordConfig. Every option perf record has is known here: one either works as
// perf's does or is refused by name before anything runs, so that no perf command line is
// misread (an option's value taken for the command).
#ifndef PBID_CLI_RECORD_OPTIONS_H_
#define PBID_CLI_RECORD_OPTIONS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"
#include "pbid/events.h"

namespace pbid::cli {

// One -e event: a row of kKnownEvents and perf's :u / :k modifiers.
struct RecordEvent {
  const KnownEvent* event = nullptr;
  bool exclude_user = false;    // :k
  bool exclude_kernel = false;  // :u
  std::string name;             // as perf names it in the file: "cycles:u"
};

enum class CallGraph { kNone, kFp, kDwarf, kLbr };

// perf's bounds for --call-graph dwarf,SIZE: a multiple of 8, at most USHRT_MAX rounded down.
constexpr uint32_t kDefaultStackDump = 8192;
constexpr uint32_t kMaxStackDump = 65528;

// perf record -z: zstd's levels, 1 when -z has no value.
constexpr int kDefaultCompressionLevel = 1;
constexpr int kMaxCompressionLevel = 22;

struct RecordConfig {
  std::string output = "perf.data";
  uint64_t freq = 4000;
  bool have_freq = false;
  uint64_t period = 0;
  std::vector<RecordEvent> events;  // in command-line order; cpu-clock when none is given
  CallGraph call_graph = CallGraph::kNone;
  uint32_t stack_dump = kDefaultStackDump;  // dwarf: bytes of user stack per sample
  bool all_cpus = false;                    // -a
  std::vector<int> cpus;                    // -C; empty: every online CPU
  std::vector<pid_t> pids;                  // -p
  std::vector<pid_t> tids;                  // -t
  size_t pages = 128;
  bool no_inherit = false;
  bool sample_cpu = false;
  bool sample_identifier = false;
  bool all_user = false;           // --all-user: exclude_kernel on every event
  bool all_kernel = false;         // --all-kernel: exclude_user on every event
  bool user_callchains = false;    // --user-callchains: exclude_callchain_kernel
  bool kernel_callchains = false;  // --kernel-callchains: exclude_callchain_user
  bool quiet = false;
  bool no_buildid_attr = false;
  bool no_buildid_file = false;
  int compression_level = 0;  // -z: 0 writes plain records
  enum class Bpf { kAuto, kOn, kOff } bpf = Bpf::kAuto;
  // --archive DIR: each executable mapped is copied into DIR by build ID while recording;
  // --archive-max: the cap of that directory, 0 for none.
  std::string archive_dir;
  uint64_t archive_max = 0;
  std::vector<std::string> command;

  // The events record watches every process on (-a, -C), not only its targets.
  bool system_wide() const { return all_cpus || !cpus.empty(); }
};

// The option table record parses: perf's options, record's own, and perf's refused ones.
std::vector<Option> RecordOptionTable(RecordConfig* c);

// The long names of perf record's options that perf-buildid record refuses.
std::vector<std::string> UnsupportedRecordOptions();

// Parses the command line into *c and checks it as a whole. Returns kParsed, or the exit
// status after --help or the usage error printed.
int ParseRecordCommandLine(const char* help, int argc, char** argv, RecordConfig* c);

// The pieces, each returning "" or why the value is wrong.
// perf's CPU list: "0,2-3"; sorted, without repeats.
std::string ParseCpuList(const char* s, std::vector<int>* cpus);
// "fp", "dwarf", "dwarf,SIZE", "lbr".
std::string ParseCallGraph(const char* s, RecordConfig* c);
// One -e value: "cycles", "cycles:u,instructions:k"; appended to *events.
std::string ParseEventList(const char* s, std::vector<RecordEvent>* events);
// "PID[,PID...]" for -p and -t.
std::string ParsePidList(const char* option, const char* s, std::vector<pid_t>* pids);

// "cpu-clock, task-clock, ... or branch-misses": the names of `events`.
std::string JoinEventNames(const std::vector<const KnownEvent*>& events);

}  // namespace pbid::cli

#endif  // PBID_CLI_RECORD_OPTIONS_H_
