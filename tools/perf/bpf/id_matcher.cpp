// SPDX-License-Identifier: GPL-2.0
#include "pbid/bpf/id_matcher.h"

#include <algorithm>
#include <cstring>

namespace pbid {

BuildId BpfFrameBuildId(const BpfFrame& frame) {
  size_t n = sizeof(frame.id);
  static const uint8_t kZeros[4] = {};
  if (memcmp(frame.id + 16, kZeros, sizeof(kZeros)) == 0)
    n = 16;
  auto id = BuildId::FromBytes(frame.id, n);
  return id.ok() ? *id : BuildId();
}

bool BpfFrameMatches(const BpfFrame& frame, const BuildId& id) {
  auto padded = id.Padded();
  return memcmp(padded.data(), frame.id, sizeof(frame.id)) == 0;
}

void BpfIdMatcher::AddMapping(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                              uint64_t t, uint64_t mapping_key) {
  std::vector<Mapping>& maps = by_pid_[pid];
  const uint64_t end = start + len;
  // What the new mapping covers was unmapped by then: end the older mappings there.
  for (Mapping& m : maps) {
    if (m.until > t && m.start < end && start < m.end)
      m.until = t;
  }
  maps.push_back(Mapping{start, end, pgoff, t, UINT64_MAX, mapping_key});
}

void BpfIdMatcher::KnownId(uint64_t mapping_key, const BuildId& id) {
  Id& e = ids_[mapping_key];
  if (e.conflict)
    return;
  if (e.id && *e.id != id) {
    e.conflict = true;
    e.id.reset();
    conflicts_++;
    return;
  }
  e.id = id;
  e.from_bpf = false;
}

void BpfIdMatcher::Exec(uint32_t pid, uint64_t t) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end())
    return;
  for (Mapping& m : it->second)
    m.until = std::min(m.until, t);
}

void BpfIdMatcher::Fork(uint32_t parent, uint32_t child, uint64_t t) {
  auto it = by_pid_.find(parent);
  if (it == by_pid_.end() || parent == child)
    return;
  std::vector<Mapping> inherited;
  for (const Mapping& m : it->second) {
    if (m.since <= t && t < m.until)
      inherited.push_back(Mapping{m.start, m.end, m.pgoff, t, UINT64_MAX, m.key});
  }
  std::vector<Mapping>& maps = by_pid_[child];
  maps.insert(maps.end(), inherited.begin(), inherited.end());
}

BpfIdMatcher::Verdict BpfIdMatcher::Offer(uint32_t pid, uint64_t t, const BpfFrame& frame) {
  if (!frame.has_id)
    return Verdict::kNoId;
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end())
    return Verdict::kNoMapping;
  const Mapping* found = nullptr;
  for (const Mapping& m : it->second) {
    if (frame.ip >= m.start && frame.ip < m.end && m.since <= t && t < m.until) {
      found = &m;
      break;
    }
  }
  if (found == nullptr)
    return Verdict::kNoMapping;
  if (frame.file_offset != frame.ip - found->start + found->pgoff)
    return Verdict::kOffsetMismatch;

  Id& e = ids_[found->key];
  if (e.conflict)
    return Verdict::kConflict;
  if (e.id) {
    if (BpfFrameMatches(frame, *e.id))
      return Verdict::kConfirmed;
    e.conflict = true;
    e.id.reset();
    conflicts_++;
    return Verdict::kConflict;
  }
  BuildId id = BpfFrameBuildId(frame);
  if (id.empty())
    return Verdict::kNoId;
  e.id = id;
  e.from_bpf = true;
  assigned_.push_back(found->key);
  return Verdict::kAssigned;
}

std::optional<BuildId> BpfIdMatcher::IdOf(uint64_t mapping_key) const {
  auto it = ids_.find(mapping_key);
  if (it == ids_.end() || it->second.conflict)
    return std::nullopt;
  return it->second.id;
}

bool BpfIdMatcher::Disputed(uint64_t mapping_key) const {
  auto it = ids_.find(mapping_key);
  return it != ids_.end() && it->second.conflict;
}

}  // namespace pbid
