// SPDX-License-Identifier: GPL-2.0
#include "record_options.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <sstream>

#include "cli.h"

namespace pbid::cli {

namespace {

// perf_event_attr.sample_period with bit 63 set is EINVAL; the ring buffer size in bytes must
// not overflow.
constexpr uint64_t kMaxPeriod = INT64_MAX;
constexpr uint64_t kMaxFreq = UINT32_MAX;
constexpr uint64_t kMaxPages = 1 << 20;
// The kernel's NR_CPUS can reach 8192; a CPU number above that is a typo.
constexpr uint64_t kMaxCpu = 8191;

// perf record's options (tools/perf/builtin-record.c in Linux 6.1, as `perf record
// --list-opts` prints them) that this recorder does not implement, with perf's short letter
// and whether they take a value: a refused option still has to be parsed as perf parses it,
// so that no word of the command line changes its meaning.
struct Refused {
  const char* long_name;
  char short_name;
  ArgKind arg;
};
constexpr Refused kRefused[] = {
    {"filter", 0, ArgKind::kRequired},
    {"exclude-perf", 0, ArgKind::kNone},
    {"realtime", 'r', ArgKind::kRequired},
    {"no-buffering", 0, ArgKind::kNone},
    {"raw-samples", 'R', ArgKind::kNone},
    {"tail-synthesize", 0, ArgKind::kNone},
    {"overwrite", 0, ArgKind::kNone},
    {"no-bpf-event", 0, ArgKind::kNone},
    {"strict-freq", 0, ArgKind::kNone},
    {"mmap-flush", 0, ArgKind::kRequired},
    {"group", 0, ArgKind::kNone},
    {"verbose", 'v', ArgKind::kNone},
    {"stat", 's', ArgKind::kNone},
    {"data", 'd', ArgKind::kNone},
    {"phys-data", 0, ArgKind::kNone},
    {"data-page-size", 0, ArgKind::kNone},
    {"code-page-size", 0, ArgKind::kNone},
    {"no-samples", 'n', ArgKind::kNone},
    {"no-buildid", 'B', ArgKind::kNone},
    {"cgroup", 'G', ArgKind::kRequired},
    {"delay", 'D', ArgKind::kRequired},
    {"kcore", 0, ArgKind::kNone},
    {"uid", 'u', ArgKind::kRequired},
    {"branch-any", 'b', ArgKind::kNone},
    {"branch-filter", 'j', ArgKind::kRequired},
    {"weight", 'W', ArgKind::kNone},
    {"transaction", 0, ArgKind::kNone},
    {"per-thread", 0, ArgKind::kNone},
    {"intr-regs", 'I', ArgKind::kOptional},
    {"user-regs", 0, ArgKind::kOptional},
    {"running-time", 0, ArgKind::kNone},
    {"clockid", 'k', ArgKind::kRequired},
    {"snapshot", 'S', ArgKind::kOptional},
    {"aux-sample", 0, ArgKind::kOptional},
    {"proc-map-timeout", 0, ArgKind::kRequired},
    {"namespaces", 0, ArgKind::kNone},
    {"all-cgroups", 0, ArgKind::kNone},
    {"switch-events", 0, ArgKind::kNone},
    {"clang-path", 0, ArgKind::kRequired},
    {"clang-opt", 0, ArgKind::kRequired},
    {"vmlinux", 0, ArgKind::kRequired},
    {"buildid-all", 0, ArgKind::kNone},
    {"timestamp-filename", 0, ArgKind::kNone},
    {"timestamp-boundary", 0, ArgKind::kNone},
    {"switch-output", 0, ArgKind::kOptional},
    {"switch-output-event", 0, ArgKind::kRequired},
    {"switch-max-files", 0, ArgKind::kRequired},
    {"dry-run", 0, ArgKind::kNone},
    {"aio", 0, ArgKind::kOptional},
    {"affinity", 0, ArgKind::kRequired},
    {"max-size", 0, ArgKind::kRequired},
    {"num-thread-synthesize", 0, ArgKind::kRequired},
    {"control", 0, ArgKind::kRequired},
    {"synth", 0, ArgKind::kRequired},
    {"debuginfod", 0, ArgKind::kOptional},
    {"threads", 0, ArgKind::kOptional},
    {"off-cpu", 0, ArgKind::kNone},
};

OptionHandler Refuse(const char* long_name) {
  return [long_name](const char*) { return "--" + std::string(long_name) + " is not supported"; };
}

std::vector<std::string> Split(const char* s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep))
    parts.push_back(part);
  if (*s == '\0' || s[strlen(s) - 1] == sep)
    parts.push_back("");  // getline drops a last empty field: "0," is an error, not "0"
  return parts;
}

std::string AllEventNames() {
  std::vector<const KnownEvent*> all;
  for (const KnownEvent& e : kKnownEvents)
    all.push_back(&e);
  return JoinEventNames(all);
}

// The combinations of options perf refuses or that this recorder cannot honour together.
std::string CheckConfig(const RecordConfig& c) {
  bool threads = !c.pids.empty() || !c.tids.empty();
  if (c.all_cpus && threads)
    return "-a excludes -p and -t";
  if (!c.all_cpus && c.cpus.empty() && !threads && c.command.empty())
    return "give a command, -a, -C CPUS, -p PID or -t TID";
  if (c.have_freq && c.period)
    return "-F and -c exclude each other";
  if (c.all_user && c.all_kernel)
    return "--all-user and --all-kernel exclude each other";
  if (c.archive_max > 0 && c.archive_dir.empty())
    return "--archive-max needs --archive DIR";
  return "";
}

}  // namespace

std::string JoinEventNames(const std::vector<const KnownEvent*>& events) {
  std::string s;
  for (size_t i = 0; i < events.size(); i++) {
    if (i > 0)
      s += i + 1 == events.size() ? " or " : ", ";
    s += events[i]->name;
  }
  return s;
}

std::string ParseCpuList(const char* s, std::vector<int>* cpus) {
  std::vector<int> out;
  for (const std::string& part : Split(s, ',')) {
    size_t dash = part.find('-');
    std::string first = part.substr(0, dash);
    std::string last = dash == std::string::npos ? first : part.substr(dash + 1);
    uint64_t a, b;
    if (!ParseUnsigned(first.c_str(), 0, kMaxCpu, &a) ||
        !ParseUnsigned(last.c_str(), 0, kMaxCpu, &b) || b < a) {
      return "bad CPU list '" + std::string(s) + "': expected CPUs and ranges such as 0,2-3";
    }
    for (uint64_t i = a; i <= b; i++)
      out.push_back(static_cast<int>(i));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  *cpus = out;
  return "";
}

std::string ParseCallGraph(const char* s, RecordConfig* c) {
  std::vector<std::string> parts = Split(s, ',');
  const std::string& mode = parts[0];
  if (mode == "fp" && parts.size() == 1) {
    c->call_graph = CallGraph::kFp;
  } else if (mode == "lbr" && parts.size() == 1) {
    c->call_graph = CallGraph::kLbr;
  } else if (mode == "dwarf" && parts.size() <= 2) {
    uint64_t size = kDefaultStackDump;
    if (parts.size() == 2) {
      // perf rounds the size up to 8 bytes, then bounds it.
      if (!ParseUnsigned(parts[1].c_str(), 1, kMaxStackDump, &size))
        return "--call-graph " + std::string(s) + ": the stack dump size must be from 8 to " +
               std::to_string(kMaxStackDump);
      size = (size + 7) & ~uint64_t{7};
    }
    c->call_graph = CallGraph::kDwarf;
    c->stack_dump = static_cast<uint32_t>(size);
  } else {
    return "--call-graph " + std::string(s) + ": expected fp, dwarf[,SIZE] or lbr";
  }
  return "";
}

std::string ParseEventList(const char* s, std::vector<RecordEvent>* events) {
  std::vector<RecordEvent> out;
  for (const std::string& word : Split(s, ',')) {
    size_t colon = word.find(':');
    std::string name = word.substr(0, colon);
    std::string mods = colon == std::string::npos ? "" : word.substr(colon + 1);
    RecordEvent e;
    e.event = FindEvent(name);
    if (!e.event)
      return "unsupported event '" + name + "' (" + AllEventNames() + ")";
    // perf: given u or k, the levels not named are excluded; both is the default.
    bool u = false, k = false;
    for (char m : mods) {
      if (m == 'u') {
        u = true;
      } else if (m == 'k') {
        k = true;
      } else {
        return "event '" + word + "': modifier '" + std::string(1, m) +
               "' is not supported (u and k are)";
      }
    }
    if (colon != std::string::npos && mods.empty())
      return "event '" + word + "': a modifier is missing after ':'";
    e.exclude_kernel = u && !k;
    e.exclude_user = k && !u;
    e.name = word;
    out.push_back(e);
  }
  events->insert(events->end(), out.begin(), out.end());
  return "";
}

std::string ParsePidList(const char* option, const char* s, std::vector<pid_t>* pids) {
  for (const std::string& part : Split(s, ',')) {
    uint64_t pid;
    if (!ParseUnsigned(part.c_str(), 1, INT32_MAX, &pid))
      return BadNumber(option, s, 1, INT32_MAX) + " or a comma-separated list of them";
    if (std::find(pids->begin(), pids->end(), static_cast<pid_t>(pid)) == pids->end())
      pids->push_back(static_cast<pid_t>(pid));
  }
  return "";
}

std::vector<std::string> UnsupportedRecordOptions() {
  std::vector<std::string> names;
  for (const Refused& r : kRefused)
    names.push_back(r.long_name);
  return names;
}

std::vector<Option> RecordOptionTable(RecordConfig* c) {
  auto take_freq = [c](const char* v) {
    c->have_freq = true;
    return Unsigned("-F", 1, kMaxFreq, &c->freq)(v);
  };
  auto take_pages = [c](const char* v) {
    uint64_t pages;
    if (!ParseUnsigned(v, 1, kMaxPages, &pages) || (pages & (pages - 1)) != 0)
      return BadNumber("-m", v, 1, kMaxPages) + ", a power of two";
    c->pages = pages;
    return std::string();
  };
  auto take_bpf = [c](const char* v) {
    std::string when = v ? v : "on";
    if (when == "auto")
      c->bpf = RecordConfig::Bpf::kAuto;
    else if (when == "on")
      c->bpf = RecordConfig::Bpf::kOn;
    else if (when == "off")
      c->bpf = RecordConfig::Bpf::kOff;
    else
      return "--bpf=" + when + ": expected auto, on or off";
    return std::string();
  };
  // perf's -g: a call graph, frame pointers unless --call-graph chose the kind before.
  auto take_g = [c](const char*) {
    if (c->call_graph == CallGraph::kNone)
      c->call_graph = CallGraph::kFp;
    return std::string();
  };
  // perf's -z: level 1 without a value or with 0; above zstd's 22, 22.
  auto take_z = [c](const char* v) {
    uint64_t level = 0;
    if (v && !ParseUnsigned(v, 0, UINT32_MAX, &level))
      return BadNumber("--compression-level", v, 0, kMaxCompressionLevel);
    c->compression_level = static_cast<int>(
        level == 0 ? kDefaultCompressionLevel : std::min<uint64_t>(level, kMaxCompressionLevel));
    return std::string();
  };
  // What perf does anyway and this recorder always does: accepted, nothing to change.
  auto always = [](const char*) { return std::string(); };
  std::vector<Option> t = {
      {"output", 'o', ArgKind::kRequired, Store(&c->output)},
      {"freq", 'F', ArgKind::kRequired, take_freq},
      {"count", 'c', ArgKind::kRequired, Unsigned("-c", 1, kMaxPeriod, &c->period)},
      {nullptr, 'g', ArgKind::kNone, take_g},
      {"call-graph", 0, ArgKind::kRequired, [c](const char* v) { return ParseCallGraph(v, c); }},
      {"event", 'e', ArgKind::kRequired,
       [c](const char* v) { return ParseEventList(v, &c->events); }},
      {"all-cpus", 'a', ArgKind::kNone, Set(&c->all_cpus)},
      {"cpu", 'C', ArgKind::kRequired, [c](const char* v) { return ParseCpuList(v, &c->cpus); }},
      {"pid", 'p', ArgKind::kRequired,
       [c](const char* v) { return ParsePidList("-p", v, &c->pids); }},
      {"tid", 't', ArgKind::kRequired,
       [c](const char* v) { return ParsePidList("-t", v, &c->tids); }},
      {"mmap-pages", 'm', ArgKind::kRequired, take_pages},
      {"no-inherit", 'i', ArgKind::kNone, Set(&c->no_inherit)},
      {"sample-cpu", 0, ArgKind::kNone, Set(&c->sample_cpu)},
      {"sample-identifier", 0, ArgKind::kNone, Set(&c->sample_identifier)},
      {"all-user", 0, ArgKind::kNone, Set(&c->all_user)},
      {"all-kernel", 0, ArgKind::kNone, Set(&c->all_kernel)},
      {"user-callchains", 0, ArgKind::kNone, Set(&c->user_callchains)},
      {"kernel-callchains", 0, ArgKind::kNone, Set(&c->kernel_callchains)},
      // Samples always carry TIME and PERIOD; MMAP2 records always carry build ids
      // (--buildid-mmap); no build-id cache is ever written (-N).
      {"timestamp", 'T', ArgKind::kNone, always},
      {"period", 'P', ArgKind::kNone, always},
      {"buildid-mmap", 0, ArgKind::kNone, always},
      {"no-buildid-cache", 'N', ArgKind::kNone, always},
      {"quiet", 'q', ArgKind::kNone, Set(&c->quiet)},
      {"no-buildid-attr", 0, ArgKind::kNone, Set(&c->no_buildid_attr)},
      {"bpf", 0, ArgKind::kOptional, take_bpf},
      {"no-buildid-file", 0, ArgKind::kNone, Set(&c->no_buildid_file)},
      {"compression-level", 'z', ArgKind::kOptional, take_z},
      {"archive", 0, ArgKind::kRequired,
       [c](const char* v) {
         c->archive_dir = v;
         return c->archive_dir.empty() ? std::string("--archive needs a directory") : "";
       }},
      {"archive-max", 0, ArgKind::kRequired, Size("--archive-max", &c->archive_max)},
  };
  for (const Refused& r : kRefused)
    t.push_back({r.long_name, r.short_name, r.arg, Refuse(r.long_name)});
  return t;
}

int ParseRecordCommandLine(const char* help, int argc, char** argv, RecordConfig* c) {
  int code = ParseCommandLine("record", help, RecordOptionTable(c), argc, argv, &c->command);
  if (code != kParsed)
    return code;
  std::string bad = CheckConfig(*c);
  if (!bad.empty())
    return UsageError("record", bad);
  if (c->events.empty()) {
    RecordEvent e;
    e.event = &kKnownEvents[0];
    e.name = std::string(e.event->name);
    c->events.push_back(e);
  }
  return kParsed;
}

}  // namespace pbid::cli
