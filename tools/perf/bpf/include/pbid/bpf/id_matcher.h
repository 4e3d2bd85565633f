// SPDX-License-Identifier: GPL-2.0
//
// Which mapping a BPF frame's build id belongs to, and whether to trust it.
//
// A frame from bpf_get_stack(BPF_F_USER_BUILD_ID) carries an id and a file offset, but not
// which mapping it came from. The recorder knows the mappings from the MMAP2 records. A frame's
// id is given to a mapping only when its IP lies in that mapping of that process at the
// sample's time, and the kernel's file offset equals ip - start + pgoff: the frame then comes
// from that very mapping, not from another file that has since been mapped at the same place.
// An id that disagrees with another one for the same mapping (read from the file, or from an
// earlier frame) is a conflict: the mapping gets neither, because a wrong id is worse than none.
//
// Times are in the clock of the records and of bpf_ktime_get_ns (CLOCK_MONOTONIC: the recorder
// sets attr.use_clockid when it uses BPF).
#ifndef PBID_BPF_ID_MATCHER_H_
#define PBID_BPF_ID_MATCHER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pbid/bpf/stack_ids.h"
#include "pbid/build_id.h"

namespace pbid {

class BpfIdMatcher {
 public:
  // What became of one frame.
  enum class Verdict {
    kAssigned,        // the mapping had no id and now has this one
    kConfirmed,       // the mapping already had this id
    kNoId,            // the kernel gave only the IP (no file, unreadable page, lock busy)
    kNoMapping,       // no mapping of that process held the IP at that time
    kOffsetMismatch,  // the kernel's offset is not this mapping's: another file, or stale
    kConflict,        // a different id than the mapping's: neither is kept
  };

  // A mapping from an MMAP2 record at time t; mapping_key is the caller's handle for it. It
  // replaces whatever that process had mapped over the same addresses from t on.
  void AddMapping(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, uint64_t t,
                  uint64_t mapping_key);
  // An id the recorder found otherwise (kernel record, file): BPF frames must agree with it.
  void KnownId(uint64_t mapping_key, const BuildId& id);
  // exec at time t: the process's earlier mappings end there.
  void Exec(uint32_t pid, uint64_t t);
  // fork at time t: the child has the parent's mappings from then on, under the same keys
  // (they are the records the child's samples resolve to).
  void Fork(uint32_t parent, uint32_t child, uint64_t t);

  Verdict Offer(uint32_t pid, uint64_t t, const BpfFrame& frame);

  // The id of a mapping as decided so far; nullopt when none, or after a conflict.
  std::optional<BuildId> IdOf(uint64_t mapping_key) const;
  // Whether two sources gave this mapping different ids.
  bool Disputed(uint64_t mapping_key) const;
  // Mappings whose id came from a BPF frame, in the order they got it. A later conflict can
  // still take the id away: write those whose IdOf() is still set.
  const std::vector<uint64_t>& assigned() const { return assigned_; }
  size_t conflicts() const { return conflicts_; }

 private:
  struct Mapping {
    uint64_t start, end, pgoff, since, until, key;
  };
  struct Id {
    std::optional<BuildId> id;
    bool from_bpf = false;
    bool conflict = false;
  };

  std::unordered_map<uint32_t, std::vector<Mapping>> by_pid_;
  std::unordered_map<uint64_t, Id> ids_;
  std::vector<uint64_t> assigned_;
  size_t conflicts_ = 0;
};

// The id in a BPF frame. The kernel sends 20 bytes, zero-padded, and not the length: a 16-byte
// (md5, uuid) id arrives as 16 bytes and four zeros. Compared with a known id, the padding is
// matched exactly; alone, trailing zero bytes are taken as padding down to 16 bytes. A 20-byte
// id that really ends in four zero bytes (one in 2^32) then loses them, which is why an id that
// disagrees with one read from the file is dropped.
BuildId BpfFrameBuildId(const BpfFrame& frame);
bool BpfFrameMatches(const BpfFrame& frame, const BuildId& id);

}  // namespace pbid

#endif  // PBID_BPF_ID_MATCHER_H_
