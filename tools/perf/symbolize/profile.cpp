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

uint32_t Profile::HashFrame(const ProfileFrame& f) {
  uint64_t h = (static_cast<uint64_t>(f.dso) << 32 | f.symbol) * 0x9e3779b97f4a7c15ull;
  h ^= f.address * 0xc2b2ae3d27d4eb4full;
  h ^= static_cast<uint64_t>(f.kind) << 8 | static_cast<uint64_t>(f.inlined);
  return IdTable::Fold(h);
}

uint32_t Profile::FrameId(const ProfileFrame& f) {
  auto [id, added] = frame_ids_.Insert(HashFrame(f), static_cast<uint32_t>(frames_.size()),
                                       [&](uint32_t i) { return frames_[i] == f; });
  if (added)
    frames_.push_back(f);
  return id;
}

uint32_t Profile::HashStack(uint32_t ev, int32_t pid, uint32_t comm, uint32_t self,
                            const std::vector<uint32_t>& frames) {
  uint64_t h = (static_cast<uint64_t>(ev) << 48) ^ (static_cast<uint64_t>(comm) << 24) ^
               static_cast<uint32_t>(pid) ^ (static_cast<uint64_t>(self) << 32);
  for (uint32_t f : frames)
    h = (h * 1000003u) ^ f;
  return IdTable::Fold(h);
}

// Room for n frames in one block; *first is where they start.
uint32_t* Profile::Reserve(size_t n, uint32_t* first) {
  uint32_t in_block = used_ % kBlock;
  if (blocks_.empty() || (in_block != 0 && in_block + n > kBlock) ||
      used_ / kBlock >= blocks_.size()) {
    if (!blocks_.empty() && in_block != 0)
      used_ += kBlock - in_block;  // the rest of this block stays unused
    // Not cleared: a block's pages are touched only as stacks fill it.
    blocks_.push_back(std::unique_ptr<uint32_t[]>(new uint32_t[kBlock]));
    used_ = static_cast<uint32_t>((blocks_.size() - 1) * kBlock);
  }
  *first = used_;
  used_ += static_cast<uint32_t>(n);
  return blocks_[*first / kBlock].get() + *first % kBlock;
}

std::pair<uint32_t, bool> Profile::Intern(size_t ev, const ProfileStack& s,
                                          const std::vector<uint32_t>& frames, uint32_t index) {
  EventProfile& e = events_[ev];
  const uint32_t depth = static_cast<uint32_t>(frames.size());
  auto same = [&](uint32_t i) {
    const ProfileStack& x = e.stacks[i];
    return x.pid == s.pid && x.comm == s.comm && x.self == s.self && x.depth == depth &&
           std::equal(frames.begin(), frames.end(), StackFrames(x));
  };
  return stack_ids_[ev].Insert(HashStack(static_cast<uint32_t>(ev), s.pid, s.comm, s.self, frames),
                               index, same);
}

uint32_t Profile::Add(size_t ev, int32_t pid, uint32_t comm, const std::vector<uint32_t>& frames,
                      uint32_t self, uint64_t samples, uint64_t period) {
  EventProfile& e = events_[ev];
  if (stack_ids_.size() < events_.size())
    stack_ids_.resize(events_.size());
  ProfileStack s;
  s.pid = pid;
  s.comm = comm;
  s.self = self;
  s.depth = static_cast<uint32_t>(frames.size());
  auto [index, added] = Intern(ev, s, frames, static_cast<uint32_t>(e.stacks.size()));
  if (added) {
    std::copy(frames.begin(), frames.end(), Reserve(frames.size(), &s.first));
    e.stacks.push_back(s);
  }
  AddTo(ev, index, samples, period);
  return index;
}

void Profile::ReplaceFrames(const Replacements& r) {
  // Each frame's entry in r, found by its id: kNone for the frames that stay.
  std::vector<uint32_t> entry(frames_.size(), IdTable::kNone);
  auto first_of = [&](size_t i) { return i == 0 ? 0 : r.ends[i - 1]; };
  bool any = false, grows = false;
  for (size_t i = 0; i < r.frames.size(); i++) {
    const uint32_t n = r.ends[i] - first_of(i);
    if (r.frames[i] < entry.size() && n != 0) {
      entry[r.frames[i]] = static_cast<uint32_t>(i);
      any = true;
      grows = grows || n > 1;
    }
  }
  if (!any)
    return;
  // Frames replaced one for one are rewritten where they are. A stack that grows is written
  // into new blocks, and the old ones go at the end; only inlined frames make one grow.
  std::vector<std::unique_ptr<uint32_t[]>> old_blocks;
  if (grows) {
    old_blocks.swap(blocks_);
    used_ = 0;
  }
  if (stack_ids_.size() < events_.size())
    stack_ids_.resize(events_.size());
  std::vector<uint32_t> frames;
  for (size_t ev = 0; ev < events_.size(); ev++) {
    EventProfile& e = events_[ev];
    // The stacks are interned again, in their order: a stack equal to one before it is added
    // to that one, the others move down into the room the merged ones leave.
    stack_ids_[ev] = IdTable();
    stack_ids_[ev].Reserve(e.stacks.size());
    uint32_t kept = 0;
    for (size_t i = 0; i < e.stacks.size(); i++) {
      ProfileStack s = e.stacks[i];
      const uint32_t* from =
          grows ? old_blocks[s.first / kBlock].get() + s.first % kBlock : StackFrames(s);
      frames.clear();
      for (uint32_t d = 0; d < s.depth; d++) {
        const uint32_t x = entry[from[d]];
        if (x == IdTable::kNone)
          frames.push_back(from[d]);
        else
          frames.insert(frames.end(), r.by.begin() + first_of(x), r.by.begin() + r.ends[x]);
      }
      if (const uint32_t x = entry[s.self]; x != IdTable::kNone)
        s.self = r.by[r.ends[x] - 1];
      s.depth = static_cast<uint32_t>(frames.size());
      auto [index, added] = Intern(ev, s, frames, kept);
      if (!added) {
        e.stacks[index].samples += s.samples;
        e.stacks[index].period += s.period;
        continue;
      }
      uint32_t* at = grows ? Reserve(frames.size(), &s.first)
                           : blocks_[s.first / kBlock].get() + s.first % kBlock;
      std::copy(frames.begin(), frames.end(), at);
      e.stacks[kept++] = s;
    }
    e.stacks.resize(kept);
  }
}

}  // namespace pbid
