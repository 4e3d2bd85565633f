// SPDX-License-Identifier: GPL-2.0
//
// What `report` learns from a recording, as data: every sample's call stack, symbolized by build
// ID, aggregated into distinct stacks with their sample counts and periods. The views (perf's
// table, children and self, call graphs, folded stacks, flame graphs) are drawn from it by the
// renderers (tools/perf/render); the library itself prints nothing.
#ifndef PBID_SYMBOLIZE_PROFILE_H_
#define PBID_SYMBOLIZE_PROFILE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pbid/symbolize/id_table.h"

namespace pbid {

// What a frame is: the views mark kernel frames ("[k]"), and a flame graph colours frames by
// this, so that a reader sees where symbols or the build ID were missing.
enum class FrameKind : uint8_t {
  kUser,          // user code, named
  kKernel,        // kernel code (named, or [kernel] without trustworthy symbols)
  kUnsymbolized,  // user code that nothing named: no file with the build ID, or no symbol
  kNoBuildId,     // user code in a mapping without a build ID, or outside every mapping
};
const char* FrameKindName(FrameKind kind);  // "user", "kernel", "unsymbolized", "no-build-id"

// Texts kept once and named by an index, so that frames and stacks are compared as integers.
class NameTable {
 public:
  uint32_t Id(std::string_view text);
  const std::string& operator[](uint32_t id) const { return texts_[id]; }
  size_t size() const { return texts_.size(); }

 private:
  std::deque<std::string> texts_;  // a deque never moves them: ids_ keys point into it
  std::unordered_map<std::string_view, uint32_t> ids_;
};

// One frame, as perf's callchain key "function" compares them: the module and the function,
// or the module and the address when nothing named it. Inlined frames are frames of their own.
struct ProfileFrame {
  static constexpr uint32_t kNoName = UINT32_MAX;
  // NameTable id of the file's path ("/usr/lib/x86_64-linux-gnu/libc.so.6"), or
  // "[kernel.kallsyms]", "[unknown]": two copies of a program at two paths are two files.
  uint32_t dso = 0;
  uint32_t symbol = kNoName;  // NameTable id of the function; kNoName when nothing named it
  // Without a name, the address as perf shows it: in a call chain the sampled address, for a
  // sample's own entry the address within the mapping (perf's map-relative ip).
  uint64_t address = 0;
  FrameKind kind = FrameKind::kUser;
  bool inlined = false;  // a frame of code inlined into the next one (perf: "(inlined)")
  bool named() const { return symbol != kNoName; }
  bool operator==(const ProfileFrame& o) const {
    return dso == o.dso && symbol == o.symbol && address == o.address && kind == o.kind &&
           inlined == o.inlined;
  }
};

// Samples of one thread group with the same call stack.
struct ProfileStack {
  int32_t pid = 0;
  uint32_t comm = 0;   // NameTable id of the command
  uint32_t first = 0;  // its frames are Profile::stack_frames()[first, first + depth), leaf first
  uint32_t depth = 0;
  // The frame the sample's own entry shows: the leaf's function, or, unnamed, the leaf's
  // address within its mapping (perf's hist entry for the sample, apart from its call chain).
  uint32_t self = 0;
  uint64_t samples = 0;
  uint64_t period = 0;
};

struct EventProfile {
  std::string name;         // "cpu-clock", as perf names the event
  uint64_t samples = 0;     // every sample of the event
  uint64_t period = 0;      // their periods' sum: perf's "Event count"
  bool callchains = false;  // the event recorded callchains (or user stacks that were unwound)
  std::deque<ProfileStack> stacks;  // a deque: growing never holds two copies
};

class Profile {
 public:
  Profile() = default;
  // A profile is the largest thing a report keeps: it is not copied, only moved.
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;
  Profile(Profile&&) = default;
  Profile& operator=(Profile&&) = default;

  NameTable& names() { return names_; }
  const NameTable& names() const { return names_; }
  const std::string& Name(uint32_t id) const { return names_[id]; }

  uint32_t FrameId(const ProfileFrame& f);
  const ProfileFrame& Frame(uint32_t id) const { return frames_[id]; }
  size_t frame_count() const { return frames_.size(); }

  // Adds `samples` and `period` to the stack (frame ids, leaf first; self as ProfileStack's)
  // of pid/comm in event ev; returns its index in the event's stacks.
  uint32_t Add(size_t ev, int32_t pid, uint32_t comm, const std::vector<uint32_t>& frames,
               uint32_t self, uint64_t samples, uint64_t period);
  // Adds to the stack of event ev that Add returned, found again without its frames: for a
  // caller that knows which stack a sample is (the flat table's, by its one frame).
  void AddTo(size_t ev, uint32_t stack, uint64_t samples, uint64_t period) {
    EventProfile& e = events_[ev];
    e.samples += samples;
    e.period += period;
    ProfileStack& kept = e.stacks[stack];
    kept.samples += samples;
    kept.period += period;
  }

  // Frames that stood in for others, each with the frames that replace it (leaf first), one
  // list after another: a few bytes per frame, for the thousands a report replaces.
  struct Replacements {
    std::vector<uint32_t> frames;  // the stand-ins
    std::vector<uint32_t> ends;    // frames[i] is replaced by by[ends[i - 1] (0), ends[i])
    std::vector<uint32_t> by;
    void Add(uint32_t frame, const std::vector<uint32_t>& with) {
      frames.push_back(frame);
      by.insert(by.end(), with.begin(), with.end());
      ends.push_back(static_cast<uint32_t>(by.size()));
    }
  };
  // Gives the stand-ins their real frames, once known (report names kernel addresses after the
  // replay, while kallsyms is read beside it): in every stack, a stand-in becomes its frames,
  // and a stack whose self is one gets the last of them. Stacks that become equal are merged
  // into the first of them, the order of the others kept: the profile is then the one the real
  // frames would have built. A stand-in with no frames stays as it is.
  void ReplaceFrames(const Replacements& r);

  std::vector<EventProfile>& events() { return events_; }
  const std::vector<EventProfile>& events() const { return events_; }
  const uint32_t* StackFrames(const ProfileStack& s) const {
    return blocks_[s.first / kBlock].get() + s.first % kBlock;
  }

 private:
  static uint32_t HashFrame(const ProfileFrame& f);
  static uint32_t HashStack(uint32_t ev, int32_t pid, uint32_t comm, uint32_t self,
                            const std::vector<uint32_t>& frames);
  // The index of the stack of event ev equal to s (pid, comm, self) with these frames, else
  // `index`, added: (the index, whether it was added). Added, a stack is stored at `index`
  // of the event's stacks, which the caller has made room for.
  std::pair<uint32_t, bool> Intern(size_t ev, const ProfileStack& s,
                                   const std::vector<uint32_t>& frames, uint32_t index);

  NameTable names_;
  std::deque<ProfileFrame> frames_;  // a deque: growing never holds two copies
  IdTable frame_ids_;                // frames_ by value
  std::vector<EventProfile> events_;
  std::vector<IdTable> stack_ids_;  // each event's stacks, found again by their contents
  // The stacks' frames, in blocks that never move: a vector's doublings would hold the old
  // and the new buffer at once, the profile's largest peak. A stack never straddles two.
  static constexpr uint32_t kBlock = 1u << 18;  // frames per block (1 MiB)
  uint32_t* Reserve(size_t n, uint32_t* first);
  std::vector<std::unique_ptr<uint32_t[]>> blocks_;
  uint32_t used_ = 0;  // frames used in all blocks, counting the unused ends of full ones
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_PROFILE_H_
