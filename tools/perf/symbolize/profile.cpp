// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/profile.h"

namespace pbid {

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUser: return "user";
    case FrameKind::kKernel: return "kernel";
    case FrameKind::kUnsymbolized: return "unsymbolized";
    case FrameKind::kNoBuildId: return "no-build-id";
  }
  return "user";
}

uint32_t NameTable::Id(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end())
    return it->second;
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  ids_.emplace(texts_.back(), id);
  return id;
}

uint32_t Profile::FrameId(const ProfileFrame& f) {
  auto [it, added] = frame_ids_.try_emplace(f, static_cast<uint32_t>(frames_.size()));
  if (added)
    frames_.push_back(f);
  return it->second;
}

size_t Profile::StackKeyHash::operator()(const StackKey& k) const noexcept {
  size_t h = (static_cast<size_t>(k.ev) << 48) ^ (static_cast<size_t>(k.comm) << 24) ^
             static_cast<uint32_t>(k.pid) ^ (static_cast<size_t>(k.self) << 32);
  for (uint32_t f : k.frames)
    h = (h * 1000003u) ^ f;
  return h;
}

void Profile::Add(size_t ev, int32_t pid, uint32_t comm, const std::vector<uint32_t>& frames,
                  uint32_t self, uint64_t samples, uint64_t period) {
  EventProfile& e = events_[ev];
  e.samples += samples;
  e.period += period;
  probe_.ev = static_cast<uint32_t>(ev);
  probe_.comm = comm;
  probe_.pid = pid;
  probe_.self = self;
  probe_.frames.assign(frames.begin(), frames.end());
  auto it = stack_ids_.find(probe_);
  if (it == stack_ids_.end()) {
    ProfileStack s;
    s.pid = pid;
    s.comm = comm;
    s.first = static_cast<uint32_t>(stack_frames_.size());
    s.depth = static_cast<uint32_t>(frames.size());
    s.self = self;
    stack_frames_.insert(stack_frames_.end(), frames.begin(), frames.end());
    it = stack_ids_.emplace(probe_, static_cast<uint32_t>(e.stacks.size())).first;
    e.stacks.push_back(s);
  }
  ProfileStack& s = e.stacks[it->second];
  s.samples += samples;
  s.period += period;
}

}  // namespace pbid
