// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/profile.h"

#include <algorithm>

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

size_t Profile::HashStack(uint32_t ev, int32_t pid, uint32_t comm, uint32_t self,
                          const std::vector<uint32_t>& frames) {
  size_t h = (static_cast<size_t>(ev) << 48) ^ (static_cast<size_t>(comm) << 24) ^
             static_cast<uint32_t>(pid) ^ (static_cast<size_t>(self) << 32);
  for (uint32_t f : frames)
    h = (h * 1000003u) ^ f;
  return h;
}

bool Profile::StackRefEqual::operator()(const StackRef& a, const StackRef& b) const noexcept {
  if (a.ev != b.ev || a.hash != b.hash)
    return false;
  const auto& stacks = profile->events_[a.ev].stacks;
  const ProfileStack& x = stacks[a.index];
  const ProfileStack& y = stacks[b.index];
  if (x.pid != y.pid || x.comm != y.comm || x.self != y.self || x.depth != y.depth)
    return false;
  const uint32_t* fx = profile->StackFrames(x);
  const uint32_t* fy = profile->StackFrames(y);
  return std::equal(fx, fx + x.depth, fy);
}

// Room for n frames in one block; *first is where they start.
uint32_t* Profile::Reserve(size_t n, uint32_t* first) {
  uint32_t in_block = used_ % kBlock;
  if (blocks_.empty() || (in_block != 0 && in_block + n > kBlock) ||
      used_ / kBlock >= blocks_.size()) {
    if (!blocks_.empty() && in_block != 0)
      used_ += kBlock - in_block;  // the rest of this block stays unused
    blocks_.push_back(std::make_unique<uint32_t[]>(kBlock));
    used_ = static_cast<uint32_t>((blocks_.size() - 1) * kBlock);
  }
  *first = used_;
  used_ += static_cast<uint32_t>(n);
  return blocks_[*first / kBlock].get() + *first % kBlock;
}

void Profile::Add(size_t ev, int32_t pid, uint32_t comm, const std::vector<uint32_t>& frames,
                  uint32_t self, uint64_t samples, uint64_t period) {
  EventProfile& e = events_[ev];
  e.samples += samples;
  e.period += period;
  // The stack goes where a new one would go; if it is there already, it is taken back.
  ProfileStack s;
  s.pid = pid;
  s.comm = comm;
  s.self = self;
  s.depth = static_cast<uint32_t>(frames.size());
  const uint32_t before = used_;
  std::copy(frames.begin(), frames.end(), Reserve(frames.size(), &s.first));
  e.stacks.push_back(s);
  StackRef ref{static_cast<uint32_t>(ev), static_cast<uint32_t>(e.stacks.size() - 1),
               HashStack(static_cast<uint32_t>(ev), pid, comm, self, frames)};
  auto [it, added] = stack_ids_.insert(ref);
  if (!added) {
    e.stacks.pop_back();
    used_ = before;
  }
  ProfileStack& kept = e.stacks[it->index];
  kept.samples += samples;
  kept.period += period;
}

}  // namespace pbid
