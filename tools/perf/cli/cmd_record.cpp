// SPDX-License-Identifier: GPL-2.0
//
// perf-buildid record: perf_event_open with build-id MMAP2 records, ring buffers drained into
// a perf.data file, and a fallback that reads build ids from /proc/PID/map_files on kernels
// without attr.build_id.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cli.h"
#include "pbid/bpf/mapping_ids.h"
#include "pbid/elf_build_id.h"
#include "pbid/event_group.h"
#include "pbid/events.h"
#include "pbid/perf_data.h"
#include "pbid/proc_maps.h"
#include "pbid/record_builder.h"
#include "pbid/ring_buffer.h"
#include "pbid/workload.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid record - record a CPU profile with build ids in every mapping\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid record [-o FILE] [-F HZ | -c PERIOD] [-g] [-e EVENT] [-m PAGES]\n"
    "                        (-a | -p PID | [--] COMMAND [ARGS...])\n"
    "\n"
    "DESCRIPTION\n"
    "    Opens one sampling event per CPU with mmap, mmap2, build_id, comm, task and\n"
    "    sample_id_all set, runs COMMAND (or watches PID, or the whole system with -a), and\n"
    "    writes the kernel's records into a perf.data file that perf report, perf script and\n"
    "    perf buildid-list read.\n"
    "\n"
    "    Processes that already run (-a, -p) get synthesized COMM and MMAP2 records, with the\n"
    "    build id read through /proc/PID/map_files/<range> (works for deleted files and other\n"
    "    mount namespaces), else /proc/PID/root/<path> if the inode still matches.\n"
    "\n"
    "    When the kernel rejects attr.build_id (EINVAL: Linux before 5.12 without the\n"
    "    backport), record says so once and reads the build id of each new executable mapping\n"
    "    the same way as soon as its MMAP2 record arrives. Such ids are written as a\n"
    "    PERF_RECORD_HEADER_BUILD_ID record right after the MMAP2 record; kernel records are\n"
    "    never rewritten. All ids also go into the HEADER_BUILD_ID table at the end.\n"
    "\n"
    "    There, unless --bpf=off, a BPF program on the sampling events also has the kernel\n"
    "    read each sampled user frame's build id and file offset while the mapping exists\n"
    "    (bpf_get_stack with BPF_F_USER_BUILD_ID): this reaches processes that exit and files\n"
    "    that are deleted or replaced before the file can be read. A frame names a mapping\n"
    "    only if its offset is that mapping's; two sources that disagree leave the mapping\n"
    "    without an id. These ids go into a per-mapping section of the file (and into\n"
    "    HEADER_BUILD_ID when their path has no other id). The events then use\n"
    "    CLOCK_MONOTONIC, the program's clock. Without permission (CAP_BPF and CAP_PERFMON,\n"
    "    or CAP_SYS_ADMIN) or kernel support (CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS), one\n"
    "    line says why and recording goes on with the file path.\n"
    "\n"
    "    SIGINT and SIGTERM stop recording and still finish a valid file. At the end a summary\n"
    "    gives the samples, lost records, the mappings with a build id by source, those\n"
    "    without one, and those whose file could not be read (unreadable).\n"
    "\n"
    "OPTIONS\n"
    "    -o, --output FILE     output file (default: perf.data); a non-empty FILE is kept\n"
    "                          as FILE.old. '-' streams pipe-mode perf.data to stdout\n"
    "                          (perf record -o -) and sends COMMAND's stdout to stderr\n"
    "    -F, --freq HZ         sample at HZ per second (default: 4000, capped at\n"
    "                          kernel.perf_event_max_sample_rate)\n"
    "    -c, --count PERIOD    sample every PERIOD events (nanoseconds for the clocks)\n"
    "    -g, --call-graph      record frame-pointer callchains\n"
    "    -e, --event EVENT     cpu-clock (default), task-clock or cycles\n"
    "    -a, --all-cpus        every process on every CPU, until SIGINT/SIGTERM\n"
    "    -p, --pid PID         the threads of PID (and their future children) until it exits\n"
    "    -m, --mmap-pages N    data pages per ring buffer, a power of two (default: 128)\n"
    "        --bpf[=WHEN]      build ids from a BPF program at sample time: auto (the\n"
    "                          default: when the kernel rejects attr.build_id), on (always;\n"
    "                          an error if it cannot load) or off\n"
    "    -q, --quiet           no summary\n"
    "        --no-buildid-attr do not ask the kernel for build ids; use the fallback path\n"
    "                          (for comparing both paths on one kernel)\n"
    "        --no-buildid-file do not read build ids from the mapped files either: only\n"
    "                          the kernel's records and the BPF program give them (for\n"
    "                          measuring what each source reaches alone)\n"
    "    -h, --help            this text\n"
    "\n"
    "EXIT STATUS\n"
    "    With COMMAND, once the file is written: COMMAND's exit status (128+N if signal N\n"
    "    killed it, 0 if it died of the SIGINT/SIGTERM that stopped the recording), as perf.\n"
    "    0  the file was written (-a, -p)\n"
    "    1  recording failed: events could not be opened, COMMAND could not run, write error\n"
    "    2  bad command line\n"
    "\n"
    "EXAMPLES\n"
    "    perf-buildid record -F 999 -g -- ./server --port 8080\n"
    "    perf-buildid record -a -o system.data & sleep 10; kill -INT $!\n";

volatile sig_atomic_t g_stop = 0;
constexpr int kTermTimeoutMs = 2000;

void OnSignal(int) {
  g_stop = 1;
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// A file kept open, O_PATH, so that the kernel frees it when this lets go, not when its last
// name goes.
class HeldFile {
 public:
  HeldFile() = default;
  explicit HeldFile(int fd) : fd_(fd) {}
  ~HeldFile() { Release(); }
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;
  HeldFile& operator=(HeldFile&& o) noexcept {
    if (this != &o) {
      Release();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  void Release() {
    if (fd_ >= 0)
      close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// perf's check_backup: a non-empty FILE is kept as FILE.old when a new recording replaces it.
// This runs while the command already runs and nothing drains the ring yet, and freeing the
// recording FILE.old held takes tens of milliseconds for a few dozen MB: enough for a command
// that maps files fast to overflow the ring. So *held keeps that recording open, and it is
// freed when *held lets go, after the recording. (A killed recorder's files close with it.)
Status BackupOld(const std::string& path, HeldFile* held) {
  struct stat st;
  if (stat(path.c_str(), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
    return Ok();
  std::string old = path + ".old";
  // Without it (none, or it cannot be opened) the rename frees it at once, as it always did.
  HeldFile previous(open(old.c_str(), O_PATH | O_CLOEXEC));
  if (rename(path.c_str(), old.c_str()) < 0)
    return Error::Sys(path, errno, "cannot move the previous recording to " + old);
  *held = std::move(previous);
  return Ok();
}

// The events record opens, named from pbid/events.h: the option checks a name against the
// table, the attr takes its type and config from the row, and the file names the event by it.
const KnownEvent* FindRecordable(const std::string& name) {
  const KnownEvent* e = FindEvent(name);
  return e && e->recordable ? e : nullptr;
}

// "cpu-clock, task-clock or cycles"
std::string EventNames() {
  std::vector<std::string_view> names;
  for (const KnownEvent& e : kKnownEvents) {
    if (e.recordable)
      names.push_back(e.name);
  }
  std::string s;
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0)
      s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

// The recorder's messages, one line each on stderr: what it falls back to, could not do or
// adds ("perf-buildid record: ..."), and the closing lines perf record prints too ("[ ... ]").
void Say(const char* before, const char* after, const char* fmt, va_list ap) {
  fputs(before, stderr);
  vfprintf(stderr, fmt, ap);
  fputs(after, stderr);
}

void Warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Say("perf-buildid record: ", "\n", fmt, ap);
  va_end(ap);
}

void Note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Say("[ ", " ]\n", fmt, ap);
  va_end(ap);
}

struct Options {
  std::string output = "perf.data";
  uint64_t freq = 4000;
  uint64_t period = 0;
  bool callchain = false;
  const KnownEvent* event = FindEvent("cpu-clock");
  bool all_cpus = false;
  pid_t pid = -1;
  size_t pages = 128;
  bool quiet = false;
  bool no_buildid_attr = false;
  bool no_buildid_file = false;
  enum class Bpf { kAuto, kOn, kOff } bpf = Bpf::kAuto;
  std::vector<std::string> command;
};

class Recorder {
 public:
  Recorder(const Options& o, int argc, char** argv) : opt_(o), argc_(argc), argv_(argv) {}
  int Run();

 private:
  Status Prepare();
  Status StartTargets(std::vector<pid_t>* targets, std::vector<pid_t>* synth);
  Status Record();
  int Finish(const Status& recorded);
  Features FileFeatures();
  Status PrepareBpf();
  Status AttachBpf();
  void FinishBpf(Features* f);
  Status OpenEvents(const std::vector<pid_t>& targets);
  Status Synthesize(const std::vector<pid_t>& pids);
  Status SynthesizeKernel();
  Status Drain(bool* wrote);
  Status HandleRecord(const uint8_t* rec, size_t size);
  Status WriteIdRecord(const std::string& filename, const BuildId& id);
  Status OnMapping(Mmap2Record& m, const std::string& path, const FileIdentity& ident,
                   bool synthesized);
  void Remember(std::string_view name, const BuildId& id, bool kernel);
  Result<MaybeBuildId> MappingBuildId(pid_t pid, uint64_t start, uint64_t end,
                                      const std::string& path, const FileIdentity& ident);
  // How a mapping was counted when its record arrived; BPF may change it at the end.
  enum class Counted : uint8_t { kNone, kUnreadable, kKernelRecord, kSynthesized, kFile };
  Counted CountMapping(const std::string& path, const Result<MaybeBuildId>& id,
                       BuildIdSource found);
  void Summary();
  SampleId SynthId(pid_t pid, pid_t tid) const;
  bool to_stdout() const { return opt_.output == "-"; }

  Options opt_;
  int argc_;
  char** argv_;
  EventAttr attr_;
  bool fallback_ = false;
  std::unique_ptr<PerfDataWriter> writer_;
  HeldFile superseded_;  // the recording FILE.old held before this one (BackupOld)
  BuildIdCache cache_;
  std::optional<MaybeBuildId> vdso_;
  std::vector<BuildIdEntry> table_;
  // The (name, id) pairs in table_, each as the name, a NUL and the id's bytes.
  std::unordered_set<std::string> in_table_;
  std::string table_key_;               // Remember's key, built in place: no allocation per MMAP2
  std::unique_ptr<Workload> workload_;  // the command, when record runs one
  bool child_done_ = false;             // the command has exited: child_status_ is its wait status
  int child_status_ = 0;
  std::unique_ptr<BpfMappingIds> bpf_;  // the BPF source of ids, when it is on
  // How each mapping BPF was told of was counted, in the order it was told: FinishBpf moves
  // the mappings whose id BPF decided from that count to BPF's.
  std::vector<Counted> bpf_counted_;
  std::optional<BpfMappingIds::Stats> bpf_stats_;
  uint64_t disputed_ = 0;  // mappings whose id two sources gave differently: written without
  uint64_t samples_ = 0, lost_ = 0, lost_samples_ = 0;
  std::map<BuildIdSource, uint64_t> by_source_;
  uint64_t unreadable_ = 0;  // mappings whose file could not be read: not "without an id"
  std::string first_unreadable_;
  // Last, so that it goes first: the events close before the BPF links on them and the
  // command go, the order in which the recorder has always let go of them.
  std::unique_ptr<EventGroup> events_;
};

SampleId Recorder::SynthId(pid_t pid, pid_t tid) const {
  SampleId id;
  id.pid = pid;
  id.tid = tid;
  id.id = attr_.ids.empty() ? 0 : attr_.ids[0];
  return id;
}

Status Recorder::OpenEvents(const std::vector<pid_t>& targets) {
  perf_event_attr& a = attr_.attr;
  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.type = opt_.event->type;
  a.config = opt_.event->config;
  attr_.name = std::string(opt_.event->name);
  if (opt_.period) {
    a.sample_period = opt_.period;
  } else {
    a.freq = 1;
    a.sample_freq = opt_.freq;
  }
  // perf record's fields for a command; with -a, perf's less the ID it needs to tell its
  // tracking event from the sampling one: the records of our one event need no id. Every
  // field counts: sample_id_all copies TID, TIME, CPU and the ids into every MMAP2, COMM and
  // FORK as well, where in an mmap storm each 8 bytes is 6% more ring.
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (opt_.all_cpus)
    a.sample_type |= PERF_SAMPLE_CPU;
  if (opt_.callchain)
    a.sample_type |= PERF_SAMPLE_CALLCHAIN;
  a.mmap = 1;
  a.mmap2 = 1;
  a.comm = 1;
  a.comm_exec = 1;
  a.task = 1;
  a.sample_id_all = 1;
  a.build_id = opt_.no_buildid_attr ? 0 : 1;
  if (opt_.no_buildid_attr) {
    fallback_ = true;
    Warn(
        "attr.build_id not requested (--no-buildid-attr); "
        "reading build ids from /proc/PID/map_files as mappings are reported");
  }
  if (bpf_) {
    // The BPF program stamps its stacks with bpf_ktime_get_ns: the records must share its
    // clock for a stack to be placed among the mappings.
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
  }
  // The kernel wakes the drain each time another eighth of the ring has been written, so when
  // the drain is then not scheduled (a loaded host can hold it off for tens of ms), at least
  // seven eighths of the ring are free for what comes meanwhile; perf leaves the kernel's
  // default, half. A wakeup per 64 KiB (the default ring) costs little.
  a.watermark = 1;
  a.wakeup_watermark =
      static_cast<uint32_t>(std::min<uint64_t>(opt_.pages * sysconf(_SC_PAGESIZE) / 8, UINT32_MAX));
  if (!opt_.all_cpus)
    a.inherit = 1;
  if (workload_) {
    a.disabled = 1;
    a.enable_on_exec = 1;
  }

  EventGroupSpec spec;
  spec.attr = a;
  spec.name = std::string(opt_.event->name);
  spec.cpus = OnlineCpus();
  spec.pids = targets;
  spec.data_pages = opt_.pages;
  std::vector<EventFallback> applied;
  auto group = EventGroup::Open(spec, &applied);
  for (EventFallback f : applied) {
    if (f == EventFallback::kBuildIdDropped) {
      fallback_ = true;
      Warn(
          "the kernel rejects attr.build_id (EINVAL); reading build "
          "ids from /proc/PID/map_files as mappings are reported");
    } else {
      Warn(
          "not allowed to sample the kernel; "
          "recording user space only");
    }
  }
  if (!group.ok())
    return group.error();
  events_ = std::move(*group);
  a = events_->attr();
  attr_.ids = events_->ids();
  return Ok();
}

// Decided before the events are opened: with BPF they use the program's clock.
Status Recorder::PrepareBpf() {
  using Bpf = Options::Bpf;
  if (opt_.bpf == Bpf::kOff)
    return Ok();
  if (opt_.bpf == Bpf::kAuto && !opt_.no_buildid_attr && KernelTakesBuildIdAttr())
    return Ok();
  auto loaded = BpfMappingIds::Load();
  if (!loaded.ok()) {
    if (opt_.bpf == Bpf::kOn)
      return Error(loaded.error()).Context("--bpf=on");
    Warn("no BPF path (%s); build ids from the file path only", loaded.error().ToString().c_str());
    return Ok();
  }
  bpf_ = std::move(*loaded);
  return Ok();
}

// Before the command runs: children inherit the program with the events.
Status Recorder::AttachBpf() {
  if (!bpf_)
    return Ok();
  size_t attached = 0;
  for (int fd : events_->fds()) {
    Status s = bpf_->Attach(fd);
    if (s.ok()) {
      attached++;
      continue;
    }
    if (opt_.bpf == Options::Bpf::kOn)
      return Error(s.error()).Context("--bpf=on");
    if (attached > 0) {
      // Detaching would disable the events it is on: keep what runs, it only adds ids.
      Warn("BPF on %zu of %zu events only (%s)", attached, events_->fds().size(),
           s.error().ToString().c_str());
      break;
    }
    Warn("no BPF path (%s); build ids from the file path only", s.error().ToString().c_str());
    bpf_.reset();
    return Ok();
  }
  if (!opt_.quiet) {
    Warn(
        "build ids also from a BPF program at sample time "
        "(events on CLOCK_MONOTONIC)");
  }
  return Ok();
}

// The ids BPF decided: a per-mapping section, the summary's counts, and perf's name-keyed
// table for paths that had only this one id.
void Recorder::FinishBpf(Features* f) {
  if (!bpf_)
    return;
  std::vector<MappingIdEntry> entries;
  // A path's one BPF id; nullopt once a second, different one came (a replaced file).
  std::map<std::string, std::optional<BuildId>> by_path;
  std::set<std::string> named;
  for (const BuildIdEntry& e : table_)
    named.insert(e.filename);
  for (const BpfMappingIds::Decided& d : bpf_->Decisions()) {
    entries.push_back(d.entry);
    switch (bpf_counted_[d.mapping]) {
      case Counted::kNone: by_source_[BuildIdSource::kNone]--; break;
      case Counted::kUnreadable: unreadable_--; break;
      case Counted::kKernelRecord: by_source_[BuildIdSource::kKernelRecord]--; break;
      case Counted::kSynthesized: by_source_[BuildIdSource::kSynthesized]--; break;
      case Counted::kFile: by_source_[BuildIdSource::kFile]--; break;
    }
    if (d.entry.kind == MappingIdEntry::Kind::kDisputed) {
      by_source_[BuildIdSource::kNone]++;
      disputed_++;
      continue;
    }
    by_source_[BuildIdSource::kBpf]++;
    auto [it, first] = by_path.emplace(d.path, d.entry.build_id);
    if (!first && it->second != d.entry.build_id)
      it->second.reset();
  }
  for (const auto& [path, id] : by_path) {
    if (id && named.count(path) == 0)
      Remember(path, *id, false);
  }
  if (to_stdout() && !entries.empty()) {
    Warn(
        "%zu mappings' BPF ids kept by file name only: a pipe-mode "
        "stream cannot carry the per-mapping section (perf stops on feature records it "
        "does not know)",
        entries.size());
  }
  f->mapping_ids = std::move(entries);
  bpf_stats_ = bpf_->stats();
}

// Runs for every MMAP2 record: under a storm of mmaps, tens of thousands a second.
void Recorder::Remember(std::string_view name, const BuildId& id, bool kernel) {
  table_key_.assign(name);
  table_key_.push_back('\0');
  table_key_.append(reinterpret_cast<const char*>(id.data()), id.size());
  if (!in_table_.insert(table_key_).second)
    return;
  table_.push_back(BuildIdEntry{
      -1, static_cast<uint16_t>(kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER), id,
      std::string(name)});
}

// The build id of a mapped file as the recorder reads it itself: by the mapping (map_files),
// or the vdso image of our own process. Anonymous and special mappings have none. Failures are
// returned, never cached: a file that cannot be read now is not a file without an id.
Result<MaybeBuildId> Recorder::MappingBuildId(pid_t pid, uint64_t start, uint64_t end,
                                              const std::string& path, const FileIdentity& ident) {
  if (!path.empty() && path[0] == '/') {
    if (opt_.no_buildid_file)
      return MaybeBuildId();
    std::string p = path;
    const std::string deleted = " (deleted)";
    if (p.size() > deleted.size() &&
        p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0) {
      p.resize(p.size() - deleted.size());
    }
    return cache_.Get(pid, start, end, p, ident);
  }
  if (path == "[vdso]") {
    if (!vdso_) {
      auto r = VdsoBuildId();
      if (!r.ok())
        return r.error();
      vdso_ = *r;
    }
    return *vdso_;
  }
  return MaybeBuildId();
}

Recorder::Counted Recorder::CountMapping(const std::string& path, const Result<MaybeBuildId>& id,
                                         BuildIdSource found) {
  if (!id.ok()) {
    if (unreadable_++ == 0)
      first_unreadable_ = path + ": " + id.error().ToString();
    return Counted::kUnreadable;
  }
  by_source_[*id ? found : BuildIdSource::kNone]++;
  if (!*id)
    return Counted::kNone;
  switch (found) {
    case BuildIdSource::kKernelRecord: return Counted::kKernelRecord;
    case BuildIdSource::kSynthesized: return Counted::kSynthesized;
    default: return Counted::kFile;
  }
}

Status Recorder::WriteIdRecord(const std::string& filename, const BuildId& id) {
  // pid is the machine pid in perf's format: -1 is the host.
  return writer_->WriteRecord(BuildHeaderBuildId(-1, PERF_RECORD_MISC_USER, id, filename));
}

// Every MMAP2 of a user mapping goes through here once, the kernel's as it is drained and
// those synthesized for processes already running, so that each gets the same treatment: its
// id (the kernel record's own, else read from the file through `path`, which for a synthesized
// record may be empty: anonymous), the HEADER_BUILD_ID record after the MMAP2 when that does
// not carry the id itself, the build-ID table, the counts, and the BPF source's view of it. A
// synthesized record is written here, with the id in it unless the recorder falls back; the
// kernel's is in the file already.
Status Recorder::OnMapping(Mmap2Record& m, const std::string& path, const FileIdentity& ident,
                           bool synthesized) {
  Result<MaybeBuildId> got = MaybeBuildId();
  BuildIdSource found = BuildIdSource::kKernelRecord;
  if (m.has_build_id) {
    got = MaybeBuildId(m.build_id);
  } else {
    // No id from the kernel: no attr.build_id, the kernel could not read the file, or a
    // synthesized record.
    got = MappingBuildId(static_cast<pid_t>(m.pid), m.start, m.start + m.len, path, ident);
    found = synthesized ? BuildIdSource::kSynthesized : BuildIdSource::kFile;
  }
  MaybeBuildId id = got.ok() ? *got : MaybeBuildId();
  if (synthesized) {
    if (id && !fallback_) {
      m.has_build_id = true;
      m.build_id = *id;
    }
    PBID_RETURN_IF_ERROR(writer_->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_USER, &attr_)));
  }
  const std::string name(m.filename);
  if (id && !m.has_build_id)
    PBID_RETURN_IF_ERROR(WriteIdRecord(name, *id));
  if (id)
    Remember(name, *id, false);
  Counted counted = CountMapping(name, got, found);
  if (bpf_) {
    bpf_->OnMmap2(m, id, id ? found : BuildIdSource::kNone);
    bpf_counted_.push_back(counted);
  }
  return Ok();
}

Status Recorder::SynthesizeKernel() {
  auto text = ReadKernelText();
  if (!text.ok() || !*text)
    return Ok();  // no kallsyms or addresses hidden (kptr_restrict)
  Mmap2Record m;
  m.pid = static_cast<uint32_t>(-1);
  m.tid = 0;
  m.start = (*text)->start;
  m.len = (*text)->end - (*text)->start;
  m.pgoff = (*text)->start;  // perf's convention: the address of the reference symbol (_text)
  m.filename = kKernelMmapName;
  auto id = KernelBuildId();
  if (id.ok() && *id) {
    Remember(kKernelDsoName, **id, true);
    if (!fallback_) {
      m.has_build_id = true;
      m.build_id = **id;
    }
  }
  m.sample_id = SynthId(0, 0);  // the idle task, as in perf's synthesized kernel map
  return writer_->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_KERNEL, &attr_));
}

Status Recorder::Synthesize(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    auto snap = SnapshotProcess(pid);
    if (!snap.ok())
      continue;  // exited, or a kernel thread we cannot read
    for (const ProcessSnapshot::Thread& t : snap->threads) {
      CommRecord c;
      c.pid = pid;
      c.tid = t.tid;
      c.comm = t.comm;
      c.sample_id = SynthId(pid, t.tid);
      Status s = writer_->WriteRecord(BuildComm(c, &attr_));
      if (!s.ok())
        return s;
    }
    for (const ProcMapping& pm : snap->exec_maps) {
      Mmap2Record m;
      m.pid = pid;
      m.tid = pid;
      m.start = pm.start;
      m.len = pm.end - pm.start;
      m.pgoff = pm.pgoff;
      m.prot = pm.prot;
      m.flags = pm.flags;
      m.maj = pm.maj;
      m.min = pm.min;
      m.ino = pm.ino;
      std::string path = pm.path.empty() ? "//anon" : pm.path;
      m.filename = path;
      m.sample_id = SynthId(pid, pid);
      PBID_RETURN_IF_ERROR(
          OnMapping(m, pm.path, FileIdentity{pm.maj, pm.min, pm.ino}, /*synthesized=*/true));
    }
  }
  return Ok();
}

Status Recorder::HandleRecord(const uint8_t* data, size_t size) {
  RecordView r;
  r.data = data;
  memcpy(&r.header.type, data, 4);
  memcpy(&r.header.misc, data + 4, 2);
  r.header.size = static_cast<uint16_t>(size);
  Status s = writer_->WriteRecord(data, size);
  if (!s.ok())
    return s;
  switch (r.header.type) {
    case PERF_RECORD_SAMPLE: samples_++; break;
    case PERF_RECORD_LOST: {
      auto l = ParseLost(r, &attr_);
      if (l.ok())
        lost_ += l->lost;
      break;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      auto l = ParseLostSamples(r, &attr_);
      if (l.ok())
        lost_samples_ += l->lost;
      break;
    }
    case PERF_RECORD_MMAP2: {
      auto m = ParseMmap2(r, &attr_);
      if (!m.ok())
        break;
      std::string path(m->filename);
      PBID_RETURN_IF_ERROR(OnMapping(*m, path,
                                     FileIdentity{m->maj, m->min, m->ino, m->ino_generation},
                                     /*synthesized=*/false));
      break;
    }
    case PERF_RECORD_COMM: {
      if (!bpf_)
        break;
      auto c = ParseComm(r, &attr_);
      if (c.ok() && c->exec)
        bpf_->OnExec(c->pid, c->sample_id.time);
      break;
    }
    case PERF_RECORD_FORK: {
      if (!bpf_)
        break;
      auto t = ParseTask(r, &attr_);
      if (t.ok() && t->pid != t->ppid)
        bpf_->OnFork(t->ppid, t->pid, t->time);
      break;
    }
    default: break;
  }
  return Ok();
}

Status Recorder::Drain(bool* wrote) {
  *wrote = false;
  for (EventGroup::Ring& ring : events_->rings()) {
    Status failure;
    auto n = ring.buffer.Read([&](const uint8_t* rec, size_t size) {
      Status s = HandleRecord(rec, size);
      if (!s.ok()) {
        failure = s;
        return false;
      }
      return true;
    });
    if (!failure.ok())
      return failure;
    if (!n.ok()) {
      Warn("ring buffer: %s", n.error().ToString().c_str());
    } else if (*n > 0) {
      *wrote = true;
    }
  }
  return Ok();
}

void Recorder::Summary() {
  if (opt_.quiet)
    return;
  Note("perf-buildid record: %" PRIu64 " samples, %" PRIu64 " lost records, %" PRIu64
       " lost samples; wrote %s (%.3f MB)",
       samples_, lost_, lost_samples_, opt_.output.c_str(),
       writer_ ? writer_->data_size() / 1e6 : 0.0);
  Note("mappings with a build id: %" PRIu64 " kernel record, %" PRIu64 " synthesized, %" PRIu64
       " read from file, %" PRIu64 " bpf; %" PRIu64 " without, %" PRIu64 " unreadable",
       by_source_[BuildIdSource::kKernelRecord], by_source_[BuildIdSource::kSynthesized],
       by_source_[BuildIdSource::kFile], by_source_[BuildIdSource::kBpf],
       by_source_[BuildIdSource::kNone], unreadable_);
  if (unreadable_ > 0)
    Note("first unreadable mapping: %s", first_unreadable_.c_str());
  if (bpf_stats_) {
    const BpfMappingIds::Stats& b = *bpf_stats_;
    Note("bpf: %" PRIu64 " stacks, %" PRIu64 " user frames (%" PRIu64 " with an id), %" PRIu64
         " mappings given an id, %" PRIu64 " frames at another offset, %" PRIu64
         " conflicts (%" PRIu64 " mappings left without an id), %" PRIu64 " stacks dropped",
         b.stacks, b.frames, b.frames_with_id, b.assigned, b.offset_mismatch, b.conflicts,
         disputed_, b.dropped);
  }
}

// The options are parsed before (pbid_cmd_record). An error while preparing ends the command
// at once; once the recording runs, an error still finishes the file with what it recorded.
int Recorder::Run() {
  Status prepared = Prepare();
  if (!prepared.ok()) {
    int code = Fail("record", prepared.error(), Stage::kSystem);
    workload_.reset();  // the command must not outlive a recording that never started
    return code;
  }
  return Finish(Record());
}

void InstallSignalHandlers() {
  // Handlers first: a SIGINT that comes while the command starts must stop the recording,
  // not kill the recorder.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A reader of our output going away must not kill us before the file is finished.
  signal(SIGPIPE, SIG_IGN);
}

// The processes the events follow; *synth: those already running, which get synthesized
// records. The command is started here but held until the events are open.
Status Recorder::StartTargets(std::vector<pid_t>* targets, std::vector<pid_t>* synth) {
  if (opt_.all_cpus) {
    targets->push_back(-1);
  } else if (opt_.pid > 0) {
    *targets = ListPids("/proc/" + std::to_string(opt_.pid) + "/task");
    if (targets->empty())
      return Error::Sys("-p " + std::to_string(opt_.pid), ESRCH, "no such process");
    synth->push_back(opt_.pid);
  } else {
    PBID_ASSIGN_OR_RETURN(workload_, Workload::Start(opt_.command, to_stdout()));
    targets->push_back(workload_->pid());
  }
  return Ok();
}

Status Recorder::Prepare() {
  InstallSignalHandlers();
  std::vector<pid_t> targets, synth;
  PBID_RETURN_IF_ERROR(StartTargets(&targets, &synth));
  PBID_RETURN_IF_ERROR(PrepareBpf());
  PBID_RETURN_IF_ERROR(OpenEvents(targets));
  PBID_RETURN_IF_ERROR(AttachBpf());
  std::vector<EventAttr> attrs{attr_};
  PBID_ASSIGN_OR_RETURN(
      writer_, to_stdout() ? PerfDataWriter::CreatePipe(STDOUT_FILENO, "standard output", attrs)
                           : PerfDataWriter::Create(opt_.output, attrs));

  // Listed only now that the events are open: a process started earlier shows up here, a
  // later one in the kernel's records.
  if (opt_.all_cpus)
    synth = ListPids("/proc");
  PBID_RETURN_IF_ERROR(SynthesizeKernel());
  PBID_RETURN_IF_ERROR(Synthesize(synth));
  PBID_RETURN_IF_ERROR(writer_->WriteRecord(BuildEmptyRecord(kRecordFinishedInit)));

  // A command that cannot run leaves FILE as it was: the writer removes its temporary file.
  if (workload_)
    PBID_RETURN_IF_ERROR(workload_->Go());
  // A recording exists now: the previous file becomes FILE.old and this one takes its name.
  if (!to_stdout())
    PBID_RETURN_IF_ERROR(BackupOld(opt_.output, &superseded_));
  return writer_->Publish();
}

// Until the command exits, the -p process goes or SIGINT/SIGTERM comes; then the events are
// stopped and one more pass collects what they wrote last.
Status Recorder::Record() {
  std::vector<pollfd> pfds;
  for (const EventGroup::Ring& ring : events_->rings())
    pfds.push_back(pollfd{ring.fd, POLLIN, 0});
  bool stopping = false;
  time_t last_checkpoint = time(nullptr);
  while (true) {
    bool wrote = false;
    // Stacks first, then the records: a stack's mappings are then known when it is matched.
    if (bpf_)
      PBID_RETURN_IF_ERROR(bpf_->Collect());
    PBID_RETURN_IF_ERROR(Drain(&wrote));
    if (bpf_)
      bpf_->Match();
    if (wrote)
      PBID_RETURN_IF_ERROR(writer_->WriteRecord(BuildEmptyRecord(kRecordFinishedRound)));
    if (time(nullptr) != last_checkpoint) {
      last_checkpoint = time(nullptr);
      PBID_RETURN_IF_ERROR(writer_->Checkpoint());
    }
    if (stopping)
      return Ok();
    if (workload_ && !child_done_)
      child_done_ = workload_->Exited(&child_status_);
    if (opt_.pid > 0 && kill(opt_.pid, 0) < 0 && errno == ESRCH)
      stopping = true;
    if (child_done_ || g_stop)
      stopping = true;
    if (stopping) {
      events_->Disable();
      continue;
    }
    poll(pfds.data(), pfds.size(), 100);
  }
}

Features Recorder::FileFeatures() {
  Features f = HostFeatures();
  std::vector<std::string> cmdline;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  cmdline.push_back(n > 0 ? std::string(exe, n) : "perf-buildid");
  for (int i = 0; i < argc_; i++)
    cmdline.push_back(argv_[i]);
  f.cmdline = cmdline;
  FinishBpf(&f);
  f.build_ids = table_;
  return f;
}

// recorded: how the recording ended; its error is reported, but what was recorded is still
// written.
int Recorder::Finish(const Status& recorded) {
  // Write the complete file before waiting for the command: what was recorded must be on
  // disk even if the command is slow to die.
  Status fin = writer_->Finish(FileFeatures());
  superseded_.Release();
  if (workload_ && !child_done_) {
    child_status_ = workload_->Terminate(kTermTimeoutMs);
    child_done_ = true;
  }
  if (!recorded.ok() || !fin.ok())
    return Fail("record", recorded.ok() ? fin.error() : recorded.error(), Stage::kSystem);
  Summary();
  if (child_done_ && !opt_.quiet) {
    if (WIFEXITED(child_status_) && WEXITSTATUS(child_status_) != 0) {
      Note("%s exited with status %d", opt_.command[0].c_str(), WEXITSTATUS(child_status_));
    } else if (WIFSIGNALED(child_status_)) {
      Note("%s killed by signal %d", opt_.command[0].c_str(), WTERMSIG(child_status_));
    }
  }
  // As perf: the command's own status, so that a script sees it fail. A command that dies of
  // the SIGINT/SIGTERM that stopped us (or of our SIGTERM/SIGKILL) did what was asked.
  if (child_done_ && WIFEXITED(child_status_))
    return WEXITSTATUS(child_status_);
  if (child_done_ && WIFSIGNALED(child_status_) && !g_stop)
    return 128 + WTERMSIG(child_status_);
  return kExitOk;
}

// perf_event_attr.sample_period with bit 63 set is EINVAL; the ring buffer size in bytes must
// not overflow.
constexpr uint64_t kMaxPeriod = INT64_MAX;
constexpr uint64_t kMaxFreq = UINT32_MAX;
constexpr uint64_t kMaxPages = 1 << 20;

}  // namespace

int pbid_cmd_record(int argc, char** argv) {
  Options o;
  bool have_freq = false;
  auto take_freq = [&](const char* v) {
    have_freq = true;
    return Unsigned("-F", 1, kMaxFreq, &o.freq)(v);
  };
  auto take_event = [&](const char* v) {
    o.event = FindRecordable(v);
    if (!o.event)
      return "unsupported event '" + std::string(v) + "' (" + EventNames() + ")";
    return std::string();
  };
  auto take_pid = [&](const char* v) {
    uint64_t pid;
    if (!ParseUnsigned(v, 1, INT32_MAX, &pid))
      return BadNumber("-p", v, 1, INT32_MAX);
    o.pid = static_cast<pid_t>(pid);
    return std::string();
  };
  auto take_pages = [&](const char* v) {
    uint64_t pages;
    if (!ParseUnsigned(v, 1, kMaxPages, &pages) || (pages & (pages - 1)) != 0)
      return BadNumber("-m", v, 1, kMaxPages) + ", a power of two";
    o.pages = pages;
    return std::string();
  };
  auto take_bpf = [&](const char* v) {
    std::string when = v ? v : "on";
    if (when == "auto")
      o.bpf = Options::Bpf::kAuto;
    else if (when == "on")
      o.bpf = Options::Bpf::kOn;
    else if (when == "off")
      o.bpf = Options::Bpf::kOff;
    else
      return "--bpf=" + when + ": expected auto, on or off";
    return std::string();
  };
  int code = ParseCommandLine(
      "record", kHelp,
      {
          {"output", 'o', ArgKind::kRequired, Store(&o.output)},
          {"freq", 'F', ArgKind::kRequired, take_freq},
          {"count", 'c', ArgKind::kRequired, Unsigned("-c", 1, kMaxPeriod, &o.period)},
          {"call-graph", 'g', ArgKind::kNone, Set(&o.callchain)},
          {"event", 'e', ArgKind::kRequired, take_event},
          {"all-cpus", 'a', ArgKind::kNone, Set(&o.all_cpus)},
          {"pid", 'p', ArgKind::kRequired, take_pid},
          {"mmap-pages", 'm', ArgKind::kRequired, take_pages},
          {"quiet", 'q', ArgKind::kNone, Set(&o.quiet)},
          {"no-buildid-attr", 0, ArgKind::kNone, Set(&o.no_buildid_attr)},
          {"bpf", 0, ArgKind::kOptional, take_bpf},
          {"no-buildid-file", 0, ArgKind::kNone, Set(&o.no_buildid_file)},
      },
      argc, argv, &o.command);
  if (code != kParsed)
    return code;
  int targets = (o.all_cpus ? 1 : 0) + (o.pid > 0 ? 1 : 0) + (o.command.empty() ? 0 : 1);
  if (targets != 1) {
    return UsageError("record", "give exactly one of -a, -p PID or a command");
  }
  if (have_freq && o.period)
    return UsageError("record", "-F and -c exclude each other");
  if (!o.period) {
    std::string max = ReadLine("/proc/sys/kernel/perf_event_max_sample_rate");
    uint64_t m = strtoull(max.c_str(), nullptr, 10);
    if (m > 0 && o.freq > m) {
      Warn("-F %" PRIu64 " above the kernel's maximum, using %" PRIu64, o.freq, m);
      o.freq = m;
    }
  }
  Recorder rec(o, argc, argv);
  return rec.Run();
}
