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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include <sys/mman.h>
#include <sys/syscall.h>
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
#include "pbid/symbolize/live_archive.h"
#include "pbid/workload.h"
#include "record_options.h"

using namespace pbid;
using namespace pbid::cli;

namespace {

const char kHelp[] =
    "NAME\n"
    "    perf-buildid record - record a CPU profile with build ids in every mapping\n"
    "\n"
    "SYNOPSIS\n"
    "    perf-buildid record [-o FILE] [-F HZ | -c PERIOD] [-g | --call-graph MODE]\n"
    "                        [-e EVENT[,EVENT...]]... [-m PAGES] [-a | -C CPUS]\n"
    "                        [-p PID,... | -t TID,...] [[--] COMMAND [ARGS...]]\n"
    "\n"
    "DESCRIPTION\n"
    "    Opens one sampling event per CPU and -e event, the first with mmap, mmap2, build_id,\n"
    "    comm and task set, runs COMMAND (or watches PIDs or TIDs, or the whole system with\n"
    "    -a, or some CPUs with -C), and writes the kernel's records into a perf.data file that\n"
    "    perf report, perf script and perf buildid-list read. With -a, -C, -p or -t, COMMAND\n"
    "    only says how long to record (perf record -a -g -- sleep 10); without it, recording\n"
    "    goes on until SIGINT/SIGTERM, or until every -p process and -t thread has exited.\n"
    "\n"
    "    Every option of perf record is known: those not listed below are refused with\n"
    "    \"perf-buildid record: --OPTION is not supported\" (exit 2) before anything runs.\n"
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
    "    Every executable file mapping also gets the identities that do not depend on a GNU\n"
    "    build-ID note, read from the file the same way while it exists, each file once: its\n"
    "    file hash (the OpenTelemetry specification's htlhash: SHA-256 over the first and the\n"
    "    last 4 KiB and the length, 16 bytes) and, for a program linked by Go's own linker,\n"
    "    its Go build ID (the .note.go.buildid note, as go tool buildid prints it). They go\n"
    "    into a per-mapping section of their own, never into HEADER_BUILD_ID, where perf\n"
    "    would take them for GNU build IDs; a pipe-mode stream cannot carry that section,\n"
    "    and record says so. The hash cannot see a change that keeps the length and touches\n"
    "    neither end of the file.\n"
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
    "    -g                    record callchains: frame pointers, or the --call-graph mode\n"
    "                          given before\n"
    "        --call-graph MODE fp (frame pointers); dwarf[,SIZE] (user registers and SIZE\n"
    "                          bytes of user stack, default 8192, rounded up to 8, at most\n"
    "                          65528, which perf report/script unwind with the files' CFI;\n"
    "                          x86_64 and arm64); lbr (needs a CPU PMU with LBR)\n"
    "    -e, --event EVENTS    a comma-separated list, and -e may repeat: cpu-clock (the\n"
    "                          default), task-clock, page-faults, context-switches,\n"
    "                          cpu-migrations, cycles, instructions, cache-references,\n"
    "                          cache-misses, branches, branch-misses; :u counts user space\n"
    "                          only, :k the kernel only. An event this machine cannot count\n"
    "                          is an error naming those it can\n"
    "    -a, --all-cpus        every process on every CPU\n"
    "    -C, --cpu CPUS        every process on these CPUs only: 0,2-3\n"
    "    -p, --pid PID,...     the threads of each PID (and their future children)\n"
    "    -t, --tid TID,...     these threads only (not their children)\n"
    "    -i, --no-inherit      not the children created while recording either\n"
    "        --sample-cpu      the CPU in every sample (always with -a and -C)\n"
    "        --sample-identifier\n"
    "                          the event id first in every sample (PERF_SAMPLE_IDENTIFIER)\n"
    "        --all-user        user space only, for every event\n"
    "        --all-kernel      the kernel only, for every event\n"
    "        --user-callchains the user part of callchains only\n"
    "        --kernel-callchains\n"
    "                          the kernel part of callchains only\n"
    "    -T, -P, --buildid-mmap, -N\n"
    "                          accepted as perf takes them; every sample has a time and a\n"
    "                          period, mappings get build ids and no build-id cache is written\n"
    "    -m, --mmap-pages N    data pages per ring buffer, a power of two (default: 128)\n"
    "    -z, --compression-level[=N]\n"
    "                          compress the records with zstd at level N (1 to 22; 1 when N\n"
    "                          is not given), into PERF_RECORD_COMPRESSED records as perf\n"
    "                          record -z writes them, which perf 5.x and later reads. The\n"
    "                          value is attached: -z3, --compression-level=3\n"
    "        --bpf[=WHEN]      build ids from a BPF program at sample time: auto (the\n"
    "                          default: when the kernel rejects attr.build_id), on (always;\n"
    "                          an error if it cannot load) or off\n"
    "    -q, --quiet           no summary\n"
    "        --no-buildid-attr do not ask the kernel for build ids; use the fallback path\n"
    "                          (for comparing both paths on one kernel)\n"
    "        --no-buildid-file do not read build ids from the mapped files either: only\n"
    "                          the kernel's records and the BPF program give them (for\n"
    "                          measuring what each source reaches alone); no Go build\n"
    "                          ids or file hashes are read then\n"
    "    -h, --help            this text\n"
    "\n"
    "ARCHIVE\n"
    "    With --archive DIR, each executable file mapping with a build id has its file copied\n"
    "    into DIR as DIR/xx/yyyy (the .build-id layout that perf-buildid report --debug-dir,\n"
    "    debuginfod -F, gdb and perf read), once per build id. The file is opened as its MMAP2\n"
    "    record is read, through /proc/PID/map_files while the process runs, so deleted and\n"
    "    replaced files are copied too, and the open file keeps its bytes for a process that\n"
    "    exits before the copy is made; a thread of its own copies them. Opening map_files\n"
    "    needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE, Linux 5.9+); without it, a file is\n"
    "    taken from its path while it is still the file mapped. A copy must have the\n"
    "    recorded build id, or it is dropped. At the end, as perf-buildid archive does, each\n"
    "    build id gets its separate debug file (/usr/lib/debug/.build-id) where there is one,\n"
    "    and the files no mapping could give are looked for by build id (the recorded path\n"
    "    if its id still matches); debuginfod is not asked. Every mapping is archived, not\n"
    "    only those samples hit. The summary counts the copies and bytes and the build ids\n"
    "    missing. A file without a GNU build id is stored as DIR/file-hash/xx/yyyy by its\n"
    "    file hash (report finds it with --debug-dir DIR; debuginfod cannot serve it). A\n"
    "    directory that cannot be written stops record before COMMAND starts; a failure at\n"
    "    the end is reported (exit 1) after the recording is written.\n"
    "\n"
    "EXIT STATUS\n"
    "    With COMMAND, once the file is written: COMMAND's exit status (128+N if signal N\n"
    "    killed it, 0 if it died of the SIGINT/SIGTERM that stopped the recording), as perf.\n"
    "    0  the file was written (-a, -C, -p, -t without COMMAND)\n"
    "    1  recording failed: events could not be opened, COMMAND could not run, write error\n"
    "    2  bad command line\n"
    "\n"
    "EXAMPLES\n"
    "    perf-buildid record -F 999 -g -- ./server --port 8080\n"
    "    perf-buildid record -a -g -o system.data -- sleep 10\n"
    "    perf-buildid record --call-graph dwarf -e cpu-clock:u,page-faults -- ./app\n"
    "    perf-buildid record -p 1234,1240 -o server.data & sleep 10; kill -INT $!\n"
    "    perf-buildid record --archive /srv/buildids --archive-max 20G -- make -j8\n";

// perf's PERF_REGS_MASK: the user registers a sample carries for --call-graph dwarf.
#if defined(__x86_64__)
// The general registers, AX to R15, less the segment registers DS, ES, FS and GS (0xff0fff).
constexpr uint64_t kDwarfRegsUser =
    ((1ULL << PERF_REG_X86_64_MAX) - 1) & ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |
                                            (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS));
#elif defined(__aarch64__)
constexpr uint64_t kDwarfRegsUser = (1ULL << PERF_REG_ARM64_MAX) - 1;  // x0..x30, sp, pc
#else
constexpr uint64_t kDwarfRegsUser = 0;  // not known here: --call-graph dwarf is refused
#endif

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

class Recorder {
 public:
  Recorder(const RecordConfig& o, int argc, char** argv) : opt_(o), argc_(argc), argv_(argv) {}
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
  perf_event_attr BaseAttr();
  Status CannotOpen(const Error& e, const RecordEvent& ev);
  std::vector<int> Fds() const;
  bool TargetsGone() const;
  Status Synthesize(const std::vector<pid_t>& pids);
  Status SynthesizeKernel();
  Status SynthesizeModules();
  Status SynthesizeData(pid_t pid);
  Mmap2Record SynthMmap2(pid_t pid, const ProcMapping& pm) const;
  Status Drain(bool* wrote);
  Status HandleRecord(const uint8_t* rec, size_t size);
  Status WriteIdRecord(const std::string& filename, const BuildId& id);
  void NoteFileIds(const Mmap2Record& m, const std::string& path, const FileIdentity& ident,
                   bool has_gnu_id);
  void FinishFileIds(Features* f);
  Status OnMapping(Mmap2Record& m, const std::string& path, const FileIdentity& ident,
                   bool synthesized);
  void Remember(std::string_view name, const BuildId& id, bool kernel);
  Result<MaybeBuildId> MappingBuildId(pid_t pid, uint64_t start, uint64_t end,
                                      const std::string& path, const FileIdentity& ident);
  // How a mapping was counted when its record arrived; BPF may change it at the end.
  enum class Counted : uint8_t { kNone, kUnreadable, kKernelRecord, kSynthesized, kFile };
  Counted CountMapping(const std::string& path, const Result<MaybeBuildId>& id,
                       BuildIdSource found);
  Status FinishArchive();
  void SummarizeArchive();
  void Summary();
  SampleId SynthId(pid_t pid, pid_t tid) const;
  bool to_stdout() const { return opt_.output == "-"; }

  RecordConfig opt_;
  int argc_;
  char** argv_;
  // One per -e event, in its order, with the ids of its events, as the file lists them.
  // attr_ is the first: its events also report mappings, comms and tasks, and its layout
  // (sample_type) is every event's, so that any record decodes with it.
  std::vector<EventAttr> attrs_;
  EventAttr attr_;
  bool fallback_ = false;
  std::unique_ptr<PerfDataWriter> writer_;
  HeldFile superseded_;  // the recording FILE.old held before this one (BackupOld)
  BuildIdCache cache_;
  // The Go build IDs and file hashes of mapped files (kFeatPbidFileIds), each file read once.
  FileIdsCache file_ids_cache_;
  MappingFileIds file_ids_;
  std::map<std::string, uint32_t> file_index_;  // a file's ids (FileIdsKey) -> index in files
  uint64_t by_go_id_ = 0, by_hash_only_ = 0;    // mappings without a GNU id named otherwise
  std::optional<MaybeBuildId> vdso_;
  std::vector<BuildIdEntry> table_;
  // The (name, id) pairs in table_, each as the name, a NUL and the id's bytes.
  std::unordered_set<std::string> in_table_;
  std::string table_key_;               // Remember's key, built in place: no allocation per MMAP2
  std::unique_ptr<Workload> workload_;  // the command, when record runs one
  bool child_done_ = false;             // the command has exited: child_status_ is its wait status
  int child_status_ = 0;
  std::unique_ptr<BpfMappingIds> bpf_;  // the BPF source of ids, when it is on
  // --archive: the executables mapped, copied by build ID while their processes run.
  std::unique_ptr<LiveArchive> archive_;
  std::optional<ArchiveSummary> archived_;  // what Finish() added; unset when it failed
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
  std::vector<std::unique_ptr<EventGroup>> events_;
  std::vector<pid_t> watched_;  // -p, -t without a command: recording ends when all are gone
};

SampleId Recorder::SynthId(pid_t pid, pid_t tid) const {
  SampleId id;
  id.pid = pid;
  id.tid = tid;
  id.id = attr_.ids.empty() ? 0 : attr_.ids[0];
  return id;
}

// The fields every event of the recording shares.
perf_event_attr Recorder::BaseAttr() {
  perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  if (opt_.period) {
    a.sample_period = opt_.period;
  } else {
    a.freq = 1;
    a.sample_freq = opt_.freq;
  }
  // perf record's fields for a command; with -a, perf's less the ID it needs to tell its
  // tracking event from the sampling one: the records of one event need no id. Every field
  // counts: sample_id_all copies TID, TIME, CPU and the ids into every MMAP2, COMM and FORK as
  // well, where in an mmap storm each 8 bytes is 6% more ring.
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (opt_.system_wide() || opt_.sample_cpu)
    a.sample_type |= PERF_SAMPLE_CPU;
  // Several events: as perf, each record names its event by id (in samples after TIME, in the
  // other records' sample_id).
  if (opt_.events.size() > 1)
    a.sample_type |= PERF_SAMPLE_ID;
  if (opt_.sample_identifier)
    a.sample_type |= PERF_SAMPLE_IDENTIFIER;
  switch (opt_.call_graph) {
    case CallGraph::kNone: break;
    case CallGraph::kFp: a.sample_type |= PERF_SAMPLE_CALLCHAIN; break;
    case CallGraph::kDwarf:
      // perf's: the kernel's callchain for the kernel part, and for the user part the
      // registers and the top of the stack, which perf report/script unwind with the DWARF
      // CFI of the mapped files.
      a.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      a.sample_regs_user = kDwarfRegsUser;
      a.sample_stack_user = opt_.stack_dump;
      a.exclude_callchain_user = 1;
      break;
    case CallGraph::kLbr:
      // perf's: the user part from the CPU's call-stack LBR.
      a.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK;
      a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK |
                             PERF_SAMPLE_BRANCH_NO_CYCLES | PERF_SAMPLE_BRANCH_NO_FLAGS |
                             PERF_SAMPLE_BRANCH_HW_INDEX;
      break;
  }
  if (opt_.kernel_callchains)
    a.exclude_callchain_user = 1;
  if (opt_.user_callchains)
    a.exclude_callchain_kernel = 1;
  a.sample_id_all = 1;
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
  // perf: -t follows the threads named only, and every CPU is watched already system-wide.
  if (!opt_.system_wide() && opt_.tids.empty() && !opt_.no_inherit)
    a.inherit = 1;
  // Only the command's own events wait for its exec; with -a, -C or -p it runs while they
  // record.
  if (workload_ && !opt_.system_wide() && opt_.pids.empty() && opt_.tids.empty()) {
    a.disabled = 1;
    a.enable_on_exec = 1;
  }
  return a;
}

Status Recorder::OpenEvents(const std::vector<pid_t>& targets) {
  if (opt_.no_buildid_attr) {
    fallback_ = true;
    Warn(
        "attr.build_id not requested (--no-buildid-attr); "
        "reading build ids from /proc/PID/map_files as mappings are reported");
  }
  std::vector<int> cpus = OnlineCpus();
  if (!opt_.cpus.empty()) {
    for (int cpu : opt_.cpus) {
      if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end())
        return Error::Of(ErrorKind::kInvalidArgument, "-C",
                         "CPU " + std::to_string(cpu) + " is not online");
    }
    cpus = opt_.cpus;
  }
  for (size_t i = 0; i < opt_.events.size(); i++) {
    const RecordEvent& ev = opt_.events[i];
    perf_event_attr a = BaseAttr();
    a.type = ev.event->type;
    a.config = ev.event->config;
    a.exclude_kernel = ev.exclude_kernel || opt_.all_user;
    a.exclude_user = ev.exclude_user || opt_.all_kernel;
    // perf's :u and :k leave out the hypervisor with the kernel.
    a.exclude_hv = ev.exclude_kernel;
    if (i == 0) {
      // As perf, the first event alone reports what happens to processes and mappings.
      a.mmap = 1;
      a.mmap2 = 1;
      a.comm = 1;
      a.comm_exec = 1;
      a.task = 1;
      a.build_id = opt_.no_buildid_attr ? 0 : 1;
      // perf's for dwarf: the unwinder reads .eh_frame where the file maps it, and in most
      // files that is a segment without PROT_EXEC.
      a.mmap_data = opt_.call_graph == CallGraph::kDwarf;
    }
    EventGroupSpec spec;
    spec.attr = a;
    spec.name = ev.name;
    spec.cpus = cpus;
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
        Warn("not allowed to sample the kernel with %s; recording user space only",
             ev.name.c_str());
      }
    }
    if (!group.ok())
      return CannotOpen(group.error(), ev);
    EventAttr attr;
    attr.attr = (*group)->attr();
    attr.ids = (*group)->ids();
    attr.name = ev.name;
    attrs_.push_back(std::move(attr));
    events_.push_back(std::move(*group));
  }
  attr_ = attrs_[0];
  return Ok();
}

// Whether perf_event_open takes an event of this type and config on this thread, as perf
// probes what it can fall back to.
bool EventOpens(const KnownEvent& e) {
  perf_event_attr a{};
  a.size = sizeof(a);
  a.type = e.type;
  a.config = e.config;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  long fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return false;
  close(static_cast<int>(fd));
  return true;
}

// Why an event group did not open, in one line that says what to do instead: the call
// graph it needs, or the events this machine has.
Status Recorder::CannotOpen(const Error& e, const RecordEvent& ev) {
  if (opt_.call_graph == CallGraph::kLbr) {
    return Error::Of(ErrorKind::kUnsupported, "--call-graph lbr",
                     "needs a CPU PMU with last branch records (Intel LBR); the kernel did not "
                     "open '" +
                         ev.name + "' with a branch stack here (" + e.ToString() + ")");
  }
  if (e.kind != ErrorKind::kUnsupported)
    return e;
  std::vector<const KnownEvent*> usable;
  for (const KnownEvent& k : kKnownEvents) {
    if (EventOpens(k))
      usable.push_back(&k);
  }
  std::string instead = usable.empty() ? "none of perf's generic events opens here either"
                                       : "events that work here: " + JoinEventNames(usable);
  return Error::Of(ErrorKind::kUnsupported, "-e " + ev.name,
                   "this machine cannot count it (no PMU for it); " + instead);
}

std::vector<int> Recorder::Fds() const {
  std::vector<int> fds;
  for (const auto& g : events_)
    fds.insert(fds.end(), g->fds().begin(), g->fds().end());
  return fds;
}

// -p and -t without a command: whether every process and thread watched has gone.
bool Recorder::TargetsGone() const {
  for (pid_t p : watched_) {
    if (kill(p, 0) == 0 || errno != ESRCH)
      return false;
  }
  return !watched_.empty();
}

// Decided before the events are opened: with BPF they use the program's clock.
Status Recorder::PrepareBpf() {
  using Bpf = RecordConfig::Bpf;
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
  std::vector<int> fds = Fds();
  for (int fd : fds) {
    Status s = bpf_->Attach(fd);
    if (s.ok()) {
      attached++;
      continue;
    }
    if (opt_.bpf == RecordConfig::Bpf::kOn)
      return Error(s.error()).Context("--bpf=on");
    if (attached > 0) {
      // Detaching would disable the events it is on: keep what runs, it only adds ids.
      Warn("BPF on %zu of %zu events only (%s)", attached, fds.size(),
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
    return cache_.Get(pid, start, end, StripDeleted(path), ident);
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
  if (archive_ && id && ((!path.empty() && path[0] == '/') || path == "[vdso]"))
    archive_->Add(*id, static_cast<pid_t>(m.pid), m.start, m.start + m.len, path, ident);
  Counted counted = CountMapping(name, got, found);
  NoteFileIds(m, path, ident, id.has_value());
  if (bpf_) {
    bpf_->OnMmap2(m, id, id ? found : BuildIdSource::kNone);
    bpf_counted_.push_back(counted);
  }
  return Ok();
}

// The key of a file's identities in file_index_: files with the same ones are one entry.
std::string FileIdsKey(const FileIds& ids) {
  return (ids.go_build_id ? "g" + *ids.go_build_id : std::string("-")) + '\0' +
         (ids.file_hash ? ids.file_hash->ToHex() : std::string("-"));
}

// The Go build ID and file hash of a file mapping, read now, while the file exists: the
// OpenTelemetry specification recommends the hash for every mapping, with a GNU build ID or
// not. A file that cannot be read gets no entry (its build id, if any, was counted already).
void Recorder::NoteFileIds(const Mmap2Record& m, const std::string& path, const FileIdentity& ident,
                           bool has_gnu_id) {
  if (opt_.no_buildid_file || path.empty() || path[0] != '/')
    return;
  const std::string p = StripDeleted(path);
  auto ids = file_ids_cache_.Get(static_cast<pid_t>(m.pid), m.start, m.start + m.len, p, ident);
  if (!ids.ok() || ids->empty())
    return;
  auto [it, added] = file_index_.emplace(FileIdsKey(*ids), file_ids_.files.size());
  if (added)
    file_ids_.files.push_back(*ids);
  file_ids_.mappings.push_back(
      MappingFileIds::Mapping{m.pid, m.start, m.pgoff, m.sample_id.time, it->second});
  if (!has_gnu_id && archive_) {
    archive_->AddByFileIds(*ids, static_cast<pid_t>(m.pid), m.start, m.start + m.len, p, ident);
  }
  if (!has_gnu_id) {
    if (ids->go_build_id)
      by_go_id_++;
    else
      by_hash_only_++;
  }
}

void Recorder::FinishFileIds(Features* f) {
  if (file_ids_.mappings.empty())
    return;
  // Mappings with a GNU build ID keep it in the stream; those without lose their only one.
  if (to_stdout() && by_go_id_ + by_hash_only_ > 0) {
    Warn(
        "%zu mappings without a GNU build id lose their Go build id or file hash: a pipe-mode "
        "stream cannot carry their per-mapping section (perf stops on feature records it does "
        "not know)",
        static_cast<size_t>(by_go_id_ + by_hash_only_));
  }
  f->file_ids = file_ids_;
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

// One kernel MMAP2 per loaded module, as perf writes them: the kernel reports no module load,
// so without these a sample in a module's code falls outside every mapping. Each is named
// "[name]" and carries the module's own build ID from sysfs (perf 6.17 gave every module the
// first one's).
Status Recorder::SynthesizeModules() {
  auto mods = ReadKernelModules();
  if (!mods.ok()) {
    Warn("kernel modules not recorded: %s", mods.error().ToString().c_str());
    return Ok();
  }
  for (const KernelModule& km : *mods) {
    Mmap2Record m;
    m.pid = static_cast<uint32_t>(-1);
    m.tid = 0;
    m.start = km.start;
    m.len = km.size;
    m.pgoff = 0;
    std::string name = "[" + km.name + "]";
    m.filename = name;
    auto id = KernelModuleBuildId(km.name);
    if (!id.ok()) {
      Warn("module %s recorded without its build id: %s", km.name.c_str(),
           id.error().ToString().c_str());
    } else if (*id) {
      Remember(name, **id, true);
      if (!fallback_) {
        m.has_build_id = true;
        m.build_id = **id;
      }
    }
    m.sample_id = SynthId(0, 0);
    PBID_RETURN_IF_ERROR(writer_->WriteRecord(BuildMmap2(m, PERF_RECORD_MISC_KERNEL, &attr_)));
  }
  return Ok();
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
      std::string path = pm.path.empty() ? "//anon" : pm.path;
      Mmap2Record m = SynthMmap2(pid, pm);
      m.filename = path;
      PBID_RETURN_IF_ERROR(
          OnMapping(m, pm.path, FileIdentity{pm.maj, pm.min, pm.ino}, /*synthesized=*/true));
    }
    if (opt_.call_graph == CallGraph::kDwarf)
      PBID_RETURN_IF_ERROR(SynthesizeData(pid));
  }
  return Ok();
}

// The MMAP2 record of a running process's mapping, as read from /proc/PID/maps: its file
// name is the mapping's path (a view into pm), the record sent by the process itself.
Mmap2Record Recorder::SynthMmap2(pid_t pid, const ProcMapping& pm) const {
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
  m.filename = pm.path;
  m.sample_id = SynthId(pid, pid);
  return m;
}

// For --call-graph dwarf, the file mappings of a running process without PROT_EXEC, as the
// kernel reports them with mmap_data (and perf synthesizes them): where its unwinder finds
// .eh_frame. Written as they are, without build ids: no sample is in them.
Status Recorder::SynthesizeData(pid_t pid) {
  auto maps = ReadProcMaps(pid);
  if (!maps.ok())
    return Ok();  // exited meanwhile
  for (const ProcMapping& pm : *maps) {
    if ((pm.prot & PROT_EXEC) || pm.path.empty() || pm.path[0] != '/')
      continue;
    Mmap2Record m = SynthMmap2(pid, pm);
    PBID_RETURN_IF_ERROR(writer_->WriteRecord(
        BuildMmap2(m, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA, &attr_)));
  }
  return Ok();
}

Status Recorder::HandleRecord(const uint8_t* data, size_t size) {
  RecordView r;
  r.data = data;
  memcpy(&r.header.type, data, 4);
  memcpy(&r.header.misc, data + 4, 2);
  r.header.size = static_cast<uint16_t>(size);
  Status s;
  if (r.header.type == PERF_RECORD_MMAP2 && (r.header.misc & kMiscMmapBuildId) &&
      !attr_.attr.build_id) {
    // The kernel leaked the build-id bit into a record of an event that did not ask for build
    // ids (upstream until b9d1fdc6f4ac; another consumer on the machine asking is enough):
    // the record holds maj/min/ino, and a reader trusting the bit takes them for an id (perf
    // 6.12 overflows its stack on the size byte). It is written with the bit cleared.
    std::vector<uint8_t> copy(data, data + size);
    const uint16_t misc = r.header.misc & ~kMiscMmapBuildId;
    memcpy(copy.data() + 4, &misc, sizeof(misc));
    s = writer_->WriteRecord(copy.data(), copy.size());
  } else {
    s = writer_->WriteRecord(data, size);
  }
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
      // A data mapping (--call-graph dwarf) is only for perf's unwinder: no samples land in
      // it, so it needs no build id and is not counted.
      if (r.header.misc & PERF_RECORD_MISC_MMAP_DATA)
        break;
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
  for (auto& group : events_) {
    for (EventGroup::Ring& ring : group->rings()) {
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
  if (writer_ && opt_.compression_level > 0)
    Note("compressed: %.3f MB of records, level %d", writer_->records_size() / 1e6,
         opt_.compression_level);
  Note("mappings with a build id: %" PRIu64 " kernel record, %" PRIu64 " synthesized, %" PRIu64
       " read from file, %" PRIu64 " bpf; %" PRIu64 " without, %" PRIu64 " unreadable",
       by_source_[BuildIdSource::kKernelRecord], by_source_[BuildIdSource::kSynthesized],
       by_source_[BuildIdSource::kFile], by_source_[BuildIdSource::kBpf],
       by_source_[BuildIdSource::kNone], unreadable_);
  if (by_go_id_ > 0 || by_hash_only_ > 0) {
    Note("mappings without a build id named otherwise: %" PRIu64 " by Go build id, %" PRIu64
         " by file hash only (%" PRIu64 " files hashed)",
         by_go_id_, by_hash_only_, file_ids_cache_.files_read());
  }
  if (unreadable_ > 0)
    Note("first unreadable mapping: %s", first_unreadable_.c_str());
  if (archive_)
    SummarizeArchive();
  if (bpf_stats_) {
    const BpfMappingIds::Stats& b = *bpf_stats_;
    Note("bpf: %" PRIu64 " stacks, %" PRIu64 " user frames (%" PRIu64 " with an id), %" PRIu64
         " mappings given an id, %" PRIu64 " frames at another offset, %" PRIu64
         " conflicts (%" PRIu64 " mappings left without an id), %" PRIu64 " stacks dropped",
         b.stacks, b.frames, b.frames_with_id, b.assigned, b.offset_mismatch, b.conflicts,
         disputed_, b.dropped);
  }
}

// --archive: the copies end, then the archive command's pass over every build ID seen adds the
// separate debug files and what could not be copied from a mapping, and holds the cap. The
// recording is on disk already: an archive that fails loses nothing recorded.
Status Recorder::FinishArchive() {
  if (!archive_)
    return Ok();
  SymbolizerOptions so;
  so.use_debuginfod = false;  // a recorder fetches nothing from servers
  auto summary = archive_->Finish(so, opt_.archive_max);
  if (!summary.ok())
    return Error(summary.error()).Context("archiving into " + opt_.archive_dir);
  archived_ = std::move(*summary);
  if (!archived_->within_cap) {
    Warn("the files this recording needs exceed --archive-max %" PRIu64
         " bytes; none of them was evicted (the archive holds %" PRIu64 " bytes)",
         opt_.archive_max, archived_->archive_bytes);
  }
  return Ok();
}

void Recorder::SummarizeArchive() {
  if (!archived_)
    return;  // the error said why
  const LiveArchive::Stats& live = archive_->stats();
  uint64_t missing = 0, debug = 0;
  const ArchiveEntry* first_missing = nullptr;
  for (const ArchiveEntry& e : archived_->entries) {
    debug += e.debug;
    if (e.outcome == ArchiveEntry::Outcome::kMissing && missing++ == 0)
      first_missing = &e;
  }
  Note("archive %s: %" PRIu64 " files by build id or file hash; copied %" PRIu64
       " files (%.3f MB) while recording and "
       "%" PRIu64 " (%.3f MB) after; %" PRIu64 " already there; %" PRIu64
       " with a debug file; %" PRIu64 " missing",
       archive_->dir().c_str(), live.ids, live.files_copied, live.bytes_copied / 1e6,
       archived_->files_copied, archived_->bytes_copied / 1e6, live.present, debug, missing);
  if (live.failed > 0) {
    Note("archive: %" PRIu64 " files not copied from their mapping (first: %s)", live.failed,
         live.first_failure.c_str());
  }
  if (first_missing != nullptr) {
    Note("first missing: %s %s: %s", first_missing->Key().c_str(),
         first_missing->recorded_path.c_str(), first_missing->reason.c_str());
  }
  if (opt_.archive_max > 0) {
    Note("archive cap %" PRIu64 " bytes: evicted %" PRIu64 " build ids (%" PRIu64
         " bytes); the archive holds %" PRIu64 " bytes",
         opt_.archive_max, archived_->ids_evicted, archived_->bytes_evicted,
         archived_->archive_bytes);
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

// The process a thread belongs to (the Tgid line of /proc/TID/status), or -1 if it is gone.
pid_t ProcessOf(pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 5, "Tgid:") == 0)
      return static_cast<pid_t>(strtol(line.c_str() + 5, nullptr, 10));
  }
  return -1;
}

// The processes the events follow (-1: all, with -a or -C); *synth: those already running,
// which get synthesized records. The command is started here but held until the events are
// open; with -a, -C, -p or -t it only says how long to record, as in perf.
Status Recorder::StartTargets(std::vector<pid_t>* targets, std::vector<pid_t>* synth) {
  if (!opt_.command.empty()) {
    PBID_ASSIGN_OR_RETURN(workload_, Workload::Start(opt_.command, to_stdout()));
  }
  if (opt_.system_wide()) {
    targets->push_back(-1);
    return Ok();
  }
  if (opt_.pids.empty() && opt_.tids.empty()) {
    targets->push_back(workload_->pid());
    return Ok();
  }
  for (pid_t pid : opt_.pids) {
    std::vector<pid_t> threads = ListPids("/proc/" + std::to_string(pid) + "/task");
    if (threads.empty())
      return Error::Sys("-p " + std::to_string(pid), ESRCH, "no such process");
    targets->insert(targets->end(), threads.begin(), threads.end());
    synth->push_back(pid);
    watched_.push_back(pid);
  }
  for (pid_t tid : opt_.tids) {
    pid_t pid = ProcessOf(tid);
    if (pid < 0)
      return Error::Sys("-t " + std::to_string(tid), ESRCH, "no such thread");
    if (std::find(targets->begin(), targets->end(), tid) == targets->end())
      targets->push_back(tid);
    // The thread's mappings are its process's.
    if (std::find(synth->begin(), synth->end(), pid) == synth->end())
      synth->push_back(pid);
    watched_.push_back(tid);
  }
  return Ok();
}

Status Recorder::Prepare() {
  InstallSignalHandlers();
  // Before the command starts: an archive directory that cannot be made stops nothing later.
  if (!opt_.archive_dir.empty()) {
    PBID_ASSIGN_OR_RETURN(archive_, LiveArchive::Create(opt_.archive_dir));
  }
  std::vector<pid_t> targets, synth;
  PBID_RETURN_IF_ERROR(StartTargets(&targets, &synth));
  if (archive_) {
    // The copies waiting hold descriptors beside the rings' and the build-ID reads': as many as
    // the hard limit allows. Only now, so that the command (forked above) keeps its own limit.
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = nofile.rlim_max;
      setrlimit(RLIMIT_NOFILE, &nofile);
    }
  }
  PBID_RETURN_IF_ERROR(PrepareBpf());
  PBID_RETURN_IF_ERROR(OpenEvents(targets));
  PBID_RETURN_IF_ERROR(AttachBpf());
  PBID_ASSIGN_OR_RETURN(
      writer_, to_stdout() ? PerfDataWriter::CreatePipe(STDOUT_FILENO, "standard output", attrs_)
                           : PerfDataWriter::Create(opt_.output, attrs_));
  if (opt_.compression_level > 0)
    PBID_RETURN_IF_ERROR(writer_->EnableCompression(opt_.compression_level));

  // Listed only now that the events are open: a process started earlier shows up here, a
  // later one in the kernel's records.
  if (opt_.system_wide())
    synth = ListPids("/proc");
  PBID_RETURN_IF_ERROR(SynthesizeKernel());
  PBID_RETURN_IF_ERROR(SynthesizeModules());
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
  for (const auto& group : events_) {
    for (const EventGroup::Ring& ring : group->rings())
      pfds.push_back(pollfd{ring.fd, POLLIN, 0});
  }
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
    if (!workload_ && TargetsGone())
      stopping = true;
    if (child_done_ || g_stop)
      stopping = true;
    if (stopping) {
      for (auto& group : events_)
        group->Disable();
      continue;
    }
    // The kernel wakes us when a ring is half full. With --archive, drain 200 times a second,
    // not 10: a mapping's file must be opened while its process runs, and a short-lived
    // process (40 ms in the churn workload) would often be gone between two drains.
    poll(pfds.data(), pfds.size(), archive_ ? 5 : 100);
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
  FinishFileIds(&f);
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
  // The file is written: its archive is finished even when the recording ended in an error.
  Status archived = fin.ok() ? FinishArchive() : Ok();
  if (!recorded.ok() || !fin.ok())
    return Fail("record", recorded.ok() ? fin.error() : recorded.error(), Stage::kSystem);
  Summary();
  if (!archived.ok())
    return Fail("record", archived.error(), Stage::kSystem);
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

}  // namespace

int pbid_cmd_record(int argc, char** argv) {
  RecordConfig o;
  int code = ParseRecordCommandLine(kHelp, argc, argv, &o);
  if (code != kParsed)
    return code;
  if (o.call_graph == CallGraph::kDwarf && kDwarfRegsUser == 0)
    return UsageError("record", "--call-graph dwarf is not supported on this architecture");
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
