// SPDX-License-Identifier: GPL-2.0
#include "address_space.h"

#include <iterator>

namespace pbid {
namespace internal {

namespace {

// The first span at or after start in a sorted block, and the first after ip.
template <typename Spans>
auto FirstAtOrAfter(Spans& spans, uint64_t start) {
  return std::lower_bound(spans.begin(), spans.end(), start,
                          [](const auto& s, uint64_t a) { return s.start < a; });
}
template <typename Spans>
auto FirstAfter(Spans& spans, uint64_t ip) {
  return std::upper_bound(spans.begin(), spans.end(), ip,
                          [](uint64_t a, const auto& s) { return a < s.start; });
}

}  // namespace

const AddressSpace::Span* AddressSpace::Table::Find(uint64_t ip) const {
  // The last block starting at or below ip, then its last span starting at or below ip.
  auto block = std::upper_bound(blocks_.begin(), blocks_.end(), ip,
                                [](uint64_t a, const Block& b) { return a < b.front().start; });
  if (block == blocks_.begin())
    return nullptr;
  --block;
  auto it = std::prev(FirstAfter(*block, ip));
  return ip < it->end ? &*it : nullptr;
}

template <typename Removed, typename Added>
void AddressSpace::Table::Assign(uint64_t start, uint64_t end, size_t idx, Removed&& removed,
                                 Added&& added) {
  Span span{start, end, idx};
  if (blocks_.empty()) {
    blocks_.emplace_back();
    blocks_.back().reserve(kSpansOfAProgram);
    blocks_.back().push_back(span);
    added(span);
    return;
  }
  // The block that holds or would hold start: the last one starting at or below it, or the
  // first. In it, the first span it overlaps: only the span before the first one starting at
  // or after start can reach into it from below.
  auto found = std::upper_bound(blocks_.begin(), blocks_.end(), start,
                                [](uint64_t a, const Block& b) { return a < b.front().start; });
  size_t b = found == blocks_.begin() ? 0 : static_cast<size_t>(found - blocks_.begin()) - 1;
  size_t i = static_cast<size_t>(FirstAtOrAfter(blocks_[b], start) - blocks_[b].begin());
  if (i > 0 && blocks_[b][i - 1].end > start)
    --i;
  // The spans it overlaps: (b, i) and on, across blocks (i may be past the end of block b).
  size_t overlapped = 0;
  const Span* first = nullptr;
  const Span* last = nullptr;
  for (size_t bb = b, j = i; bb < blocks_.size(); bb++, j = 0) {
    const Block& block = blocks_[bb];
    for (; j < block.size() && block[j].start < end; j++, overlapped++) {
      last = &block[j];
      if (!first)
        first = last;
      removed(*last);
    }
    if (j < block.size())
      break;
  }
  // What replaces them, in address order: a piece of the first from below, the new mapping, a
  // piece of the last from above.
  Span pieces[3];
  size_t n = 0;
  if (first && first->start < start)
    pieces[n++] = Span{first->start, start, first->idx};
  pieces[n++] = span;
  if (last && last->end > end)
    pieces[n++] = Span{end, last->end, last->idx};
  for (size_t k = 0; k < n; k++)
    added(pieces[k]);
  // Take out the overlapped spans past block b (whole blocks, then the head of the next), so
  // that block b keeps them all: a block never empties, since it gets at least the new span.
  Block& block = blocks_[b];
  size_t here = std::min(overlapped, block.size() - i);
  size_t rest = overlapped - here, whole = 0;
  while (rest > 0 && rest >= blocks_[b + 1 + whole].size())
    rest -= blocks_[b + 1 + whole++].size();
  if (rest > 0) {
    Block& next = blocks_[b + 1 + whole];
    next.erase(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(rest));
  }
  // Overwrite the overlapped spans of block b in place, then insert or erase the difference:
  // a move of at most the block's spans.
  auto at = block.begin() + static_cast<std::ptrdiff_t>(i);
  if (here < n)
    block.insert(at + static_cast<std::ptrdiff_t>(here), n - here, Span{});
  else
    block.erase(at + static_cast<std::ptrdiff_t>(n), at + static_cast<std::ptrdiff_t>(here));
  std::copy(pieces, pieces + n, block.begin() + static_cast<std::ptrdiff_t>(i));
  if (block.size() > kMaxBlock) {
    Block upper(block.begin() + kMaxBlock / 2, block.end());
    block.resize(kMaxBlock / 2);
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b + 1), std::move(upper));
    b++;  // the whole blocks to erase now follow the new one
  }
  auto gone = blocks_.begin() + static_cast<std::ptrdiff_t>(b + 1);
  blocks_.erase(gone, gone + static_cast<std::ptrdiff_t>(whole));
}

std::shared_ptr<AddressSpace::Table> AddressSpace::Table::Copy() const {
  auto copy = std::make_shared<Table>();
  copy->blocks_.reserve(blocks_.size());
  for (const Block& from : blocks_) {
    Block& to = copy->blocks_.emplace_back();
    to.reserve(std::min(from.size() + kSpansOfAProgram, kMaxBlock + 1));
    to.assign(from.begin(), from.end());
  }
  return copy;
}

size_t AddressSpace::Add(Mapping m) {
  if (m.end <= m.start)
    return kNoMapping;
  mappings_.push_back(std::move(m));
  size_t idx = mappings_.size() - 1;
  const Mapping& added = mappings_[idx];
  Forget(added.pid);
  std::shared_ptr<Table>& slot = maps_[added.pid];
  if (!slot)
    slot = std::make_shared<Table>();
  else if (slot.use_count() > 1)
    slot = slot->Copy();  // a child that maps something before it execs, or its parent after
  // The kernel's table keeps its kernel-image spans indexed too, for Find's fallback.
  if (added.pid == kKernelTable) {
    slot->Assign(
        added.start, added.end, idx, [this](const Span& s) { kernel_images_.erase(s.start); },
        [this](const Span& s) {
          if (IsKernelImage(mappings_[s.idx].path))
            kernel_images_[s.start] = s.idx;
        });
  } else {
    slot->Assign(
        added.start, added.end, idx, [](const Span&) {}, [](const Span&) {});
  }
  return idx;
}

size_t AddressSpace::FindSlow(int32_t key, uint64_t ip, bool kernel) const {
  auto t = maps_.find(key);
  if (t != maps_.end()) {
    if (const Span* s = t->second->Find(ip)) {
      MemoFor(key) = SpanMemo{key, *s};
      return s->idx;
    }
  }
  if (!kernel) {
    auto old = before_exec_.find(key);
    if (old == before_exec_.end())
      return kNoMapping;
    const Span* s = old->second->Find(ip);
    return s ? s->idx : kNoMapping;
  }
  if (t == maps_.end())
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
  auto t = maps_.find(pid);
  if (t != maps_.end()) {
    before_exec_[pid] = std::move(t->second);
    maps_.erase(t);
  }
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
  before_exec_.clear();
  std::fill(std::begin(memo_), std::end(memo_), SpanMemo{});
  kernel_images_.clear();
  comms_.clear();
}

}  // namespace internal
}  // namespace pbid
