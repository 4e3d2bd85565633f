// SPDX-License-Identifier: GPL-2.0
//
// pbid-craft: writes hostile perf.data files, for the seed corpus and for timing the commands
// on inputs that grow (a doubling series must show linear time).
//
//   pbid-craft KIND N OUT
//
//   kernel-miss N     N kernel module mappings and N kernel samples below all of them
//   many-events N     N events (one id each) and one sample per event
//   fork N            one process with N mappings, then N FORKs of it
//   unknown-id N      two events and N samples whose id neither owns
//   lost N            a LOST record of N lost events, no LOST_SAMPLES
//   user-records N    N HEADER_BUILD_ID records between mappings (dump must not decode a
//                     sample id in them)
//   fifo N            a mapping of the path in $PBID_CRAFT_PATH and N samples in it
//   id-all-mismatch N two events that disagree on sample_id_all
//   data-at-zero N    a data section at offset 0, over the header
//   data-size-zero N  a file whose header says 0 bytes of data (a killed recorder)
//   tail-fields N     N samples with every field after the callchain the decoder reads:
//                     raw data, a branch stack with its hw_idx, user registers as perf's
//                     --call-graph dwarf asks for them and a 256-byte stack copy
//   stragglers N      N rounds of perf's order (two CPUs, 1000 samples with callchains, a
//                     short process that forks, execs, maps and exits), and every 64th round
//                     a mapping and a sample whose times lie 200 to 600 rounds back (a task
//                     preempted between its timestamp and its record); seeded, so the same N
//                     gives the same file
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../tests/record_fixtures.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"

namespace pbid {
namespace {

constexpr uint64_t kKernelBase = 0xffffffffc0000000ULL;

EventAttr MakeAttr(uint64_t first_id, size_t nr_ids) {
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < nr_ids; i++)
    ids.push_back(first_id + i);
  return fixtures::SampleAttr(std::move(ids));
}

using fixtures::Sample;

Mmap2Record Map(uint32_t pid, uint64_t start, uint64_t len, const std::string& path, uint64_t id,
                uint64_t time) {
  return fixtures::Mmap2(static_cast<int32_t>(pid), start, len, path, id, time);
}

using Emit = std::function<bool(const RecordBytes&)>;

bool Write(const std::string& out, const std::vector<EventAttr>& attrs,
           const std::function<bool(const Emit&)>& body) {
  auto w = PerfDataWriter::Create(out, attrs);
  if (!w.ok()) {
    fprintf(stderr, "pbid-craft: %s\n", w.error().ToString().c_str());
    return false;
  }
  Status failed;
  Emit emit = [&](const RecordBytes& r) {
    Status s = (*w)->WriteRecord(r);
    if (!s.ok())
      failed = s;
    return s.ok();
  };
  if (!body(emit) || !failed.ok()) {
    fprintf(stderr, "pbid-craft: %s\n",
            failed.ok() ? "cannot build" : failed.error().ToString().c_str());
    return false;
  }
  Status s = (*w)->Finish(Features());
  if (!s.ok()) {
    fprintf(stderr, "pbid-craft: %s\n", s.error().ToString().c_str());
    return false;
  }
  return true;
}

// Overwrites one u64 of the file header (the writer never produces these files).
bool PatchU64(const std::string& out, off_t off, uint64_t v) {
  int fd = open(out.c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && pwrite(fd, &v, 8, off) == 8;
  if (fd >= 0)
    close(fd);
  return ok;
}

// N rounds of perf's order, every 64th followed by records that lag far behind: see the top.
bool Stragglers(const std::string& out, uint64_t n) {
  EventAttr g = MakeAttr(1, 1);  // with callchains, so that records have the size of perf's
  g.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  return Write(out, {g}, [&](const Emit& emit) {
    std::mt19937_64 rng(n);
    const std::vector<uint64_t> chain(12, 0x400100);
    constexpr uint64_t kPerCpu = 500, kRoundTime = 2 * kPerCpu;
    auto map = [&](uint32_t pid, const std::string& path, uint64_t time) {
      return emit(
          *BuildMmap2(Map(pid, 0x400000, 0x1000, path, 1, time), PERF_RECORD_MISC_USER, &g));
    };
    auto sample = [&](uint32_t pid, uint64_t time) {
      return emit(*BuildSample(
          Sample(PERF_RECORD_MISC_USER, 0x400100, static_cast<int32_t>(pid), 1, time), chain, g));
    };
    if (!map(10, "/bin/worker", 1))
      return false;
    for (uint64_t round = 0; round < n; round++) {
      uint64_t base = 100 + round * kRoundTime;
      uint32_t child = static_cast<uint32_t>(100 + round);
      TaskRecord t;
      t.pid = t.tid = child;
      t.ppid = t.ptid = 10;
      t.time = t.sample_id.time = base;
      t.sample_id.pid = t.sample_id.tid = child;
      t.sample_id.id = 1;
      if (!emit(BuildTask(PERF_RECORD_FORK, t, &g)) ||
          !map(child, "/bin/tool" + std::to_string(round % 8), base))
        return false;
      for (uint64_t cpu = 0; cpu < 2; cpu++) {
        for (uint64_t i = 0; i < kPerCpu; i++) {
          if (!sample(cpu == 0 ? 10 : child, base + 2 * i + cpu))
            return false;
        }
      }
      t.time = t.sample_id.time = base + kRoundTime - 1;
      if (!emit(BuildTask(PERF_RECORD_EXIT, t, &g)))
        return false;
      if (round % 64 == 63) {
        uint64_t back = std::min<uint64_t>(round, 200 + rng() % 400);
        uint64_t time = base - back * kRoundTime + rng() % kRoundTime;
        if (!map(10, "/bin/worker", time) || !sample(10, time))
          return false;
      }
      if (!emit(BuildEmptyRecord(kRecordFinishedRound)))
        return false;
    }
    return true;
  });
}

bool Craft(const std::string& kind, uint64_t n, const std::string& out) {
  EventAttr a = MakeAttr(1, 1);
  if (kind == "kernel-miss") {
    return Write(out, {a}, [&](const Emit& emit) {
      for (uint64_t i = 0; i < n; i++) {
        Mmap2Record m = Map(static_cast<uint32_t>(-1), kKernelBase + 0x10000 * (i + 1), 0x1000,
                            "/lib/modules/m" + std::to_string(i) + ".ko", 1, 1 + i);
        if (!emit(*BuildMmap2(m, PERF_RECORD_MISC_KERNEL, &a)))
          return false;
      }
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_KERNEL, kKernelBase + i, 0, 1, n + 1 + i),
                               {}, a)))
          return false;
      }
      return true;
    });
  }
  if (kind == "many-events") {
    std::vector<EventAttr> attrs;
    for (uint64_t i = 0; i < n; i++)
      attrs.push_back(MakeAttr(i + 1, 1));
    return Write(out, attrs, [&](const Emit& emit) {
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400000 + i, 10, i + 1, i + 1), {},
                               attrs[i])))
          return false;
      }
      return true;
    });
  }
  if (kind == "fork") {
    return Write(out, {a}, [&](const Emit& emit) {
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildMmap2(Map(10, 0x400000 + 0x2000 * i, 0x1000, "/lib/x.so", 1, 1 + i),
                              PERF_RECORD_MISC_USER, &a)))
          return false;
      }
      for (uint64_t i = 0; i < n; i++) {
        TaskRecord t;
        t.pid = t.tid = static_cast<uint32_t>(100 + i);
        t.ppid = t.ptid = 10;
        t.time = n + 1 + i;
        t.sample_id.pid = t.sample_id.tid = t.pid;
        t.sample_id.id = 1;
        t.sample_id.time = t.time;
        if (!emit(BuildTask(PERF_RECORD_FORK, t, &a)))
          return false;
      }
      return true;
    });
  }
  if (kind == "unknown-id") {
    EventAttr b = MakeAttr(2, 1);
    return Write(out, {a, b}, [&](const Emit& emit) {
      if (!emit(
              *BuildMmap2(Map(10, 0x400000, 0x1000, "/lib/x.so", 1, 1), PERF_RECORD_MISC_USER, &a)))
        return false;
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 7, 2 + i), {}, a)))
          return false;
      }
      return true;
    });
  }
  if (kind == "lost") {
    return Write(out, {a}, [&](const Emit& emit) {
      LostRecord l;
      l.id = 1;
      l.lost = n;
      l.sample_id.id = 1;
      return emit(BuildLost(l, &a)) &&
             emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, 2), {}, a));
    });
  }
  if (kind == "user-records") {
    return Write(out, {a}, [&](const Emit& emit) {
      for (uint64_t i = 0; i < n; i++) {
        // Names long enough to fill the tail where a sample_id block would be.
        std::string path = "/lib/u" + std::to_string(i) + "-" + std::string(116, 'a') + ".so";
        Mmap2Record m = Map(10, 0x400000 + 0x2000 * i, 0x1000, path, 1, 1 + i);
        m.has_build_id = false;
        if (!emit(*BuildMmap2(m, PERF_RECORD_MISC_USER, &a)) ||
            !emit(*BuildHeaderBuildId(-1, PERF_RECORD_MISC_USER,
                                      *BuildId::FromHex("2222222222222222222222222222222222222222"),
                                      path)) ||
            !emit(BuildEmptyRecord(kRecordFinishedRound)))
          return false;
      }
      return true;
    });
  }
  if (kind == "fifo") {
    const char* path = getenv("PBID_CRAFT_PATH");
    std::string p = path ? path : "/tmp/pbid.fifo";
    return Write(out, {a}, [&](const Emit& emit) {
      if (!emit(*BuildMmap2(Map(10, 0x400000, 0x1000, p, 1, 1), PERF_RECORD_MISC_USER, &a)))
        return false;
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, 2 + i), {}, a)))
          return false;
      }
      return true;
    });
  }
  if (kind == "tail-fields") {
    EventAttr t = a;
    t.attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |
                          PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    t.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
    t.attr.sample_regs_user = 0xff0fff;  // perf's x86_64 choice: all but the segment registers
    t.attr.sample_stack_user = 256;
    return Write(out, {t}, [&](const Emit& emit) {
      if (!emit(*BuildMmap2(Map(10, 0x400000, 0x1000, "/bin/worker", 1, 1), PERF_RECORD_MISC_USER,
                            &t)))
        return false;
      for (uint64_t i = 0; i < n; i++) {
        SampleTail tail;
        tail.raw = {1, 2, 3, 4};
        tail.branch_hw_idx = i;
        tail.branches = {{0x400100, 0x400200, 0}, {0x400200, 0x400100, 0}};
        tail.regs.assign(20, 0x7ffc0000);
        tail.stack.assign(256, 0x5a);
        tail.stack_dyn_size = 128;
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, 2 + i), {0x400100},
                               tail, t)))
          return false;
      }
      return true;
    });
  }
  if (kind == "stragglers")
    return Stragglers(out, n);
  auto small = [&](const std::vector<EventAttr>& attrs) {
    return Write(out, attrs, [&](const Emit& emit) {
      for (uint64_t i = 0; i < n; i++) {
        if (!emit(*BuildSample(Sample(PERF_RECORD_MISC_USER, 0x400100, 10, 1, 1 + i), {}, a)))
          return false;
      }
      return true;
    });
  };
  if (kind == "id-all-mismatch") {
    EventAttr b = MakeAttr(2, 1);
    b.attr.sample_id_all = 0;
    return small({a, b});
  }
  if (kind == "data-at-zero")
    return small({a}) && PatchU64(out, 40, 0);  // header.data.offset
  if (kind == "data-size-zero")
    return small({a}) && PatchU64(out, 48, 0);  // header.data.size
  fprintf(stderr, "pbid-craft: unknown kind '%s'\n", kind.c_str());
  return false;
}

}  // namespace
}  // namespace pbid

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: pbid-craft KIND N OUT (see the comment at the top of craft.cpp)\n");
    return 2;
  }
  char* end;
  unsigned long long n = strtoull(argv[2], &end, 10);
  if (*end || argv[2][0] == '-' || argv[2][0] == 0) {
    fprintf(stderr, "pbid-craft: bad N '%s'\n", argv[2]);
    return 2;
  }
  return pbid::Craft(argv[1], n, argv[3]) ? 0 : 1;
}
