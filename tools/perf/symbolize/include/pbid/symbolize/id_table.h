// SPDX-License-Identifier: GPL-2.0
//
// A hash set of 32-bit ids whose keys are kept elsewhere, by their owner (the profile's frames
// and stacks, report's symbolized addresses): open addressing, 8 bytes a slot, nothing
// allocated per entry. Every sample of a report looks up its frames and its stack: a node per
// entry cost a cache miss and an allocation each, and most of the memory of a profile.
#ifndef PBID_SYMBOLIZE_ID_TABLE_H_
#define PBID_SYMBOLIZE_ID_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pbid {

class IdTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // A 64-bit hash folded to the 32 bits a slot keeps, mixed so that the low bits index well.
  static uint32_t Fold(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<uint32_t>(h);
  }

  // The id whose key has hash h and is equal by eq(id), or kNone.
  template <typename Eq>
  uint32_t Find(uint32_t h, Eq eq) const {
    if (slots_.empty())
      return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kNone)
        return kNone;
      if (s.hash == h && eq(s.id))
        return s.id;
    }
  }

  // The id found as Find finds it, else `id`, added: (the id, whether it was added).
  template <typename Eq>
  std::pair<uint32_t, bool> Insert(uint32_t h, uint32_t id, Eq eq) {
    if ((size_ + 1) * 4 > slots_.size() * 3)
      Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id == kNone) {
        s = Slot{id, h};
        size_++;
        return {id, true};
      }
      if (s.hash == h && eq(s.id))
        return {s.id, false};
    }
  }

  size_t size() const { return size_; }

  // Room for n ids before the table grows again: a caller that knows how many it will hold
  // spares the doublings that would copy the table on the way.
  void Reserve(size_t n) {
    size_t want = slots_.empty() ? 64 : slots_.size();
    while (n * 4 > want * 3)
      want *= 2;
    if (want > slots_.size())
      Rehash(want);
  }

 private:
  struct Slot {
    uint32_t id = kNone;
    uint32_t hash = 0;
  };
  void Grow() { Rehash(slots_.empty() ? 64 : slots_.size() * 2); }
  void Rehash(size_t slots) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(slots, Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id == kNone)
        continue;
      size_t i = s.hash & mask;
      while (slots_[i].id != kNone)
        i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_ID_TABLE_H_
