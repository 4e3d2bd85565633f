// SPDX-License-Identifier: GPL-2.0
//
// Internal: the address-space model of a replay, as perf's machine.c keeps it. Each process
// has a table of the spans its mappings cover; FORK shares the parent's table, an exec starts
// a new one (the old one still answers where no new mapping reaches, as in perf), and a new
// mapping replaces whatever it overlaps. It knows nothing of records or build
// ids: the session parses records and decides each mapping's build id before adding it.
#ifndef PBID_LIB_ADDRESS_SPACE_H_
#define PBID_LIB_ADDRESS_SPACE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "pbid/session.h"

namespace pbid {
namespace internal {

// "[kernel.kallsyms]" and perf's "[kernel.kallsyms]_text".
inline bool IsKernelImage(const std::string& path) {
  return path.rfind(kKernelDsoName, 0) == 0;
}

class AddressSpace {
 public:
  static constexpr int32_t kKernelTable = -1;  // the kernel's table (Mapping::pid)
  static constexpr size_t kNoMapping = SIZE_MAX;

  // Adds m (already given its pid, build id and dso) and returns its index, or kNoMapping for
  // an empty range, which adds nothing.
  size_t Add(Mapping m);
  // FORK: pid shares ppid's table and comm, unless pid has a table already.
  void Fork(int32_t pid, int32_t ppid);
  // exec: pid's mappings start afresh. perf keeps a process's mappings across an exec until new
  // ones overlap them, and rightly so for the samples the exec itself takes after its COMM:
  // their user ip is still the old program's (in libc's execve). The old table therefore
  // answers for the addresses no mapping since the exec covers; it is not copied.
  void Exec(int32_t pid);
  // COMM: the process's name; `exec` or the main thread's replaces one it had.
  void SetComm(int32_t pid, bool main_thread_or_exec, std::string comm);
  std::string CommOf(int32_t pid) const;

  // The index of the mapping that contains ip in process pid (kernel: the kernel's mappings;
  // the kernel image map extends to the end of the address space, as in perf), or kNoMapping.
  // Inline: it runs once per sample. It remembers the last process it looked up: one thread at
  // a time.
  size_t FindIndex(int32_t pid, uint64_t ip, bool kernel) const {
    int32_t key = kernel ? kKernelTable : pid;
    SpanMemo& memo = MemoFor(key);
    if (memo.pid == key && ip >= memo.span.start && ip < memo.span.end)
      return memo.span.idx;
    return FindSlow(key, ip, kernel);
  }
  const Mapping* Find(int32_t pid, uint64_t ip, bool kernel) const {
    size_t idx = FindIndex(pid, ip, kernel);
    return idx == kNoMapping ? nullptr : &mappings_[idx];
  }

  Mapping& operator[](size_t idx) { return mappings_[idx]; }
  const std::deque<Mapping>& mappings() const { return mappings_; }
  // Forgets every process and mapping.
  void Clear();

 private:
  // [start, end) of a process's address space -> index into mappings_.
  struct Span {
    uint64_t start, end;
    size_t idx;
  };
  // A process's spans, sorted by start and disjoint, in blocks of at most kMaxBlock spans: the
  // blocks in address order, each a sorted array. Shared by a process and the children it
  // forked until one of them maps something: a FORK costs O(1), and the first change after it
  // copies the table, unless the child execs first (Exec drops its reference). Arrays, not a
  // tree, so that the copy of a usual process's table (one block) is two allocations and a
  // memcpy: a file holds tens of thousands of short processes, and copying trees node by node
  // was the largest single cost of replaying one. Blocks, not one array, because a process
  // that maps many files gets them from mmap top down, each below the last: in one sorted
  // array each would move every span above it, quadratic in their number. In a block it moves
  // at most a block's worth, whatever the order (rising, falling or random).
  class Table {
   public:
    // The span holding ip, or null.
    const Span* Find(uint64_t ip) const;
    // Puts [start, end) -> idx in place of whatever it overlaps; pieces of the old spans
    // outside it survive. Calls removed(span) for each span it takes out whole or cuts, then
    // added(span) for each span it puts in (the new one and the pieces), in address order.
    template <typename Removed, typename Added>
    void Assign(uint64_t start, uint64_t end, size_t idx, Removed&& removed, Added&& added);
    // A copy, for copy on write, with room in its blocks for a program's worth of spans.
    std::shared_ptr<Table> Copy() const;

   private:
    // The first mapping of a table is most often an exec's: the program, its interpreter and
    // its libraries follow, a span or two each. Room for them spares the block a doubling
    // (which most tables never fill) in each of a file's many short processes.
    static constexpr size_t kSpansOfAProgram = 16;
    // A full block splits in two halves; the cost of an insertion is at most a block's move.
    static constexpr size_t kMaxBlock = 256;
    using Block = std::vector<Span>;
    std::vector<Block> blocks_;
  };
  // FindIndex's memo, per process (direct-mapped by pid): the span its last lookup found.
  // Most samples of a process hit the mapping its previous one hit, while samples of a few
  // processes interleave. A process's entry is forgotten when its table changes (Add, Fork,
  // Exec); an empty span (end 0) matches nothing.
  struct SpanMemo {
    int32_t pid = 0;
    Span span{0, 0, 0};
  };
  SpanMemo& MemoFor(int32_t pid) const { return memo_[static_cast<uint32_t>(pid) % 256]; }
  void Forget(int32_t pid) { MemoFor(pid) = SpanMemo{}; }
  size_t FindSlow(int32_t key, uint64_t ip, bool kernel) const;

  // Every mapping, in the order they were added. A deque, because a stream learns their number
  // only at its end: a vector's doublings would move every mapping into fresh memory that must
  // be faulted in, holding both buffers meanwhile.
  std::deque<Mapping> mappings_;
  std::unordered_map<int32_t, std::shared_ptr<Table>> maps_;
  // Each exec'd process's table from before its last exec (see Exec).
  std::unordered_map<int32_t, std::shared_ptr<Table>> before_exec_;
  mutable SpanMemo memo_[256];
  // The spans of maps_[kKernelTable] whose mapping is the kernel image: start -> index into
  // mappings_.
  std::map<uint64_t, size_t> kernel_images_;
  std::unordered_map<int32_t, std::string> comms_;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_ADDRESS_SPACE_H_
