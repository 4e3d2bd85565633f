// SPDX-License-Identifier: GPL-2.0
//
// DWARF call graphs: the user frames of a sample recorded with `perf record --call-graph
// dwarf`, unwound from its user registers (PERF_SAMPLE_REGS_USER) and its copy of the user
// stack (PERF_SAMPLE_STACK_USER) with the unwind tables (.eh_frame, .debug_frame) of the ELF
// files the process had mapped, each found by build ID through the Symbolizer: never a file
// that merely sits at the recorded path.
//
//   auto unwinder = pbid::Unwinder::Create(symbolizer);
//   session.Process([&](const pbid::SampleContext& c) {
//     pbid::UnwindResult u = (*unwinder)->Unwind(
//         c.sample.sample_id.pid, c.sample.regs_user(c.record, c.attr),
//         c.sample.stack_user(c.record),
//         [&](uint64_t a) { return session.Find(c.sample.sample_id.pid, a, false); });
//     ...  // u.ips: the sampled ip, then return addresses
//   });
//
// x86_64 only (the registers are read in perf's x86_64 numbering). One thread at a time, as
// for the Symbolizer it asks.
#ifndef PBID_SYMBOLIZE_UNWINDER_H_
#define PBID_SYMBOLIZE_UNWINDER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "pbid/records.h"
#include "pbid/result.h"
#include "pbid/session.h"
#include "pbid/symbolize/symbolizer.h"

namespace pbid {

namespace internal {
struct UnwinderState;
}

// Why an unwind ended.
enum class UnwindStop : uint8_t {
  kComplete,       // the outermost frame (its unwind table says so), or kMaxUnwindFrames
  kNoCfi,          // a frame's module has no unwind table entry for its address
  kNoElf,          // a frame's mapping has no build ID, or no ELF with its build ID was found
  kStackTooShort,  // the unwinder needed stack above the copy the sample holds
  kOther,          // no user registers, an address in no mapping, a corrupt table, ...
};
inline constexpr size_t kUnwindStops = 5;
const char* UnwindStopName(UnwindStop s);  // "complete", "no CFI", ...

struct UnwindResult {
  // Leaf first: the sampled ip, then each caller's return address, as in a callchain (a
  // caller's call instruction is just before its address). Empty without user registers.
  std::vector<uint64_t> ips;
  UnwindStop stop = UnwindStop::kOther;
};

struct UnwindStats {
  uint64_t samples = 0;
  std::array<uint64_t, kUnwindStops> by_stop{};  // indexed by UnwindStop
  uint64_t Count(UnwindStop s) const { return by_stop[static_cast<size_t>(s)]; }
};

inline constexpr size_t kMaxUnwindFrames = 256;

// The mapping of the sampled process that holds an address, as the session knew it at the
// sample's time (Session::Find(pid, addr, false)); nullptr when none does.
using UnwindFindMapping = std::function<const Mapping*(uint64_t addr)>;

class Unwinder {
 public:
  // symbolizer finds the ELF of each build ID; it must outlive the Unwinder.
  static Result<std::unique_ptr<Unwinder>> Create(Symbolizer* symbolizer);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // One sample of process pid. What was learnt of pid's address space (modules, their unwind
  // tables) is kept for its next samples, and dropped when a mapping turns out changed.
  UnwindResult Unwind(int32_t pid, const RegsView& regs, const StackView& stack,
                      const UnwindFindMapping& find_mapping);

  const UnwindStats& stats() const { return stats_; }

 private:
  explicit Unwinder(Symbolizer* symbolizer);

  std::unique_ptr<internal::UnwinderState> impl_;
  UnwindStats stats_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_UNWINDER_H_
