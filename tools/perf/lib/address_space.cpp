// SPDX-License-Identifier: GPL-2.0
#include "address_space.h"

#include <iterator>

namespace pbid {
namespace internal {

size_t AddressSpace::Add(Mapping m) {
  if (m.end <= m.start)
    return kNoMapping;
  mappings_.push_back(std::move(m));
  size_t idx = mappings_.size() - 1;
  const Mapping& added = mappings_[idx];
  Forget(added.pid);
  // A new mapping replaces whatever it overlaps; pieces of old mappings outside it survive.
  // The first mapping of a table is most often an exec's: the program, its interpreter and
  // its libraries follow, a span or two each. Room for them spares the table a doubling (which
  // most tables never fill) in each of a file's many short processes.
  constexpr size_t kSpansOfAProgram = 16;
  std::shared_ptr<Table>& slot = maps_[added.pid];
  if (!slot) {
    slot = std::make_shared<Table>();
    slot->reserve(kSpansOfAProgram);
  } else if (slot.use_count() > 1) {
    // Copy on write: a child that maps something before it execs, or its parent after the fork.
    auto copy = std::make_shared<Table>();
    copy->reserve(slot->size() + kSpansOfAProgram);
    copy->assign(slot->begin(), slot->end());
    slot = std::move(copy);
  }
  Table& table = *slot;
  // The kernel's table keeps its kernel-image spans indexed too, for Find's fallback.
  bool kernel_table = added.pid == kKernelTable;
  uint64_t start = added.start, end = added.end;
  // [first, last): the spans it overlaps. Only the span before the first one starting at or
  // after start can reach into it from below.
  auto first = std::lower_bound(table.begin(), table.end(), start,
                                [](const Span& s, uint64_t a) { return s.start < a; });
  if (first != table.begin() && std::prev(first)->end > start)
    --first;
  auto last = first;
  while (last != table.end() && last->start < end)
    ++last;
  // What replaces them, in address order: a piece of the first from below, the new mapping, a
  // piece of the last from above.
  Span pieces[3];
  size_t n = 0;
  if (first != last && first->start < start)
    pieces[n++] = Span{first->start, start, first->idx};
  pieces[n++] = Span{start, end, idx};
  if (first != last && std::prev(last)->end > end)
    pieces[n++] = Span{end, std::prev(last)->end, std::prev(last)->idx};
  if (kernel_table) {
    for (auto it = first; it != last; ++it)
      kernel_images_.erase(it->start);
    for (size_t i = 0; i < n; i++) {
      if (IsKernelImage(mappings_[pieces[i].idx].path))
        kernel_images_[pieces[i].start] = pieces[i].idx;
    }
  }
  // Overwrite the overlapped spans in place, then insert or erase the difference. The move of
  // the spans above is linear in the table's size: a process maps hundreds of files, not the
  // tens of thousands that would make a tree worth its per-node cost.
  size_t overlapped = static_cast<size_t>(last - first);
  size_t pos = static_cast<size_t>(first - table.begin());
  if (overlapped < n)
    table.insert(last, n - overlapped, Span{});
  else
    table.erase(first + static_cast<std::ptrdiff_t>(n), last);
  std::copy(pieces, pieces + n, table.begin() + static_cast<std::ptrdiff_t>(pos));
  return idx;
}

size_t AddressSpace::FindSlow(int32_t key, uint64_t ip, bool kernel) const {
  auto t = maps_.find(key);
  if (t == maps_.end())
    return kNoMapping;
  const Table& table = *t->second;
  auto it = std::upper_bound(table.begin(), table.end(), ip,
                             [](uint64_t a, const Span& s) { return a < s.start; });
  if (it != table.begin()) {
    --it;
    if (ip < it->end) {
      MemoFor(key) = SpanMemo{key, *it};
      return it->idx;
    }
  }
  if (!kernel)
    return kNoMapping;
  // perf extends the kernel image map up to the end of the address space (modules aside): the
  // kernel-image span with the highest start at or below ip, found in its own index so that a
  // sample outside every mapping does not walk them all.
  auto k = kernel_images_.upper_bound(ip);
  if (k == kernel_images_.begin())
    return kNoMapping;
  return std::prev(k)->second;
}

void AddressSpace::Fork(int32_t pid, int32_t ppid) {
  // The kernel's table is not a process a FORK could create.
  if (pid != ppid && pid != kKernelTable && maps_.find(pid) == maps_.end()) {
    Forget(pid);
    auto p = maps_.find(ppid);
    if (p != maps_.end())
      maps_[pid] = p->second;
    auto c = comms_.find(ppid);
    if (c != comms_.end() && comms_.find(pid) == comms_.end())
      comms_[pid] = c->second;
  }
}

void AddressSpace::Exec(int32_t pid) {
  if (pid == kKernelTable)
    return;
  maps_.erase(pid);
  Forget(pid);
}

void AddressSpace::SetComm(int32_t pid, bool main_thread_or_exec, std::string comm) {
  if (main_thread_or_exec || comms_.find(pid) == comms_.end())
    comms_[pid] = std::move(comm);
}

std::string AddressSpace::CommOf(int32_t pid) const {
  auto it = comms_.find(pid);
  if (it != comms_.end())
    return it->second;
  if (pid <= 0)
    return "swapper";  // perf's name for the idle task and kernel records
  return ":" + std::to_string(pid);
}

void AddressSpace::Clear() {
  mappings_.clear();
  maps_.clear();
  std::fill(std::begin(memo_), std::end(memo_), SpanMemo{});
  kernel_images_.clear();
  comms_.clear();
}

}  // namespace internal
}  // namespace pbid
