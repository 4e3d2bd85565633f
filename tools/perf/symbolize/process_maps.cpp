// SPDX-License-Identifier: GPL-2.0
#include "process_maps.h"

namespace pbid {

void ProcessMaps::Add(uint32_t pid, const MappedFile& m) {
  if (m.len == 0 || m.start + m.len < m.start) return;  // empty or wrapping: nothing to map
  Space& space = procs_[pid];
  const uint64_t new_end = m.start + m.len;
  // Split or drop every mapping that overlaps [start, end).
  auto it = space.lower_bound(m.start);
  if (it != space.begin()) {
    auto prev = std::prev(it);
    if (prev->second->end() > m.start) it = prev;
  }
  std::vector<std::shared_ptr<const MappedFile>> keep;
  while (it != space.end() && it->second->start < new_end) {
    const MappedFile& old = *it->second;
    if (old.start < m.start) {  // head survives
      MappedFile head = old;
      head.len = m.start - old.start;
      keep.push_back(std::make_shared<const MappedFile>(head));
    }
    if (old.end() > new_end) {  // tail survives, its file offset moves with it
      MappedFile tail = old;
      tail.start = new_end;
      tail.len = old.end() - new_end;
      tail.pgoff = old.pgoff + (new_end - old.start);
      keep.push_back(std::make_shared<const MappedFile>(tail));
    }
    it = space.erase(it);
  }
  for (auto& k : keep) space.emplace(k->start, std::move(k));
  space[m.start] = std::make_shared<const MappedFile>(m);
}

void ProcessMaps::Fork(uint32_t parent, uint32_t child) {
  if (parent == child) return;
  auto it = procs_.find(parent);
  if (it == procs_.end()) return;
  Space copy = it->second;
  procs_[child] = std::move(copy);
}

const MappedFile* ProcessMaps::Find(uint32_t pid, uint64_t ip) const {
  auto p = procs_.find(pid);
  if (p == procs_.end()) return nullptr;
  auto it = p->second.upper_bound(ip);
  if (it == p->second.begin()) return nullptr;
  --it;
  return ip < it->second->end() ? it->second.get() : nullptr;
}

}  // namespace pbid
