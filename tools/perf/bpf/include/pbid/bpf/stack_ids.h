// SPDX-License-Identifier: GPL-2.0
//
// User stacks with build ids, from a BPF program on the sampling events (libbpf).
//
// On kernels without attr.build_id, bpf_get_stack(BPF_F_USER_BUILD_ID) is the other way to
// learn a mapping's id at sample time, inside the kernel, while the mapping still exists
// (kernels since 4.17; the ring buffer needs 5.8). Each sample yields its user frames as IPs and
// as (build id, file offset) pairs from the same walk. What the frames may be trusted for is
// decided elsewhere (BpfIdMatcher); this class only loads, attaches and drains.
#ifndef PBID_BPF_STACK_IDS_H_
#define PBID_BPF_STACK_IDS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "pbid/result.h"

namespace pbid {

struct BpfFrame {
  uint64_t ip = 0;
  // The kernel's (id, file offset) for this frame, when it could read them.
  bool has_id = false;
  uint8_t id[20] = {};  // 20 bytes, zero-padded by the kernel: the id's length is not sent
  uint64_t file_offset = 0;
};

struct BpfUserStack {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC, as bpf_ktime_get_ns
  // Both walks of one sample; a frame whose two entries disagree in number is dropped.
  std::vector<BpfFrame> frames;
};

class BpfStackIds {
 public:
  // Loads and verifies the program and its maps. The error says why BPF cannot be used here
  // (no bpf() system call, no permission, no perf_event programs, verifier refusal), in one
  // line that record prints before going on without it.
  static Result<std::unique_ptr<BpfStackIds>> Load();
  ~BpfStackIds();
  BpfStackIds(const BpfStackIds&) = delete;
  BpfStackIds& operator=(const BpfStackIds&) = delete;

  // Runs the program on every sample of the perf event perf_fd (a sampling event), until this
  // object goes; perf_fd stays the caller's. When the object goes, those events are disabled.
  Status Attach(int perf_fd);

  // Hands every stack waiting in the ring buffer to fn; returns how many.
  Result<size_t> Drain(const std::function<void(const BpfUserStack&)>& fn);

  // A descriptor that polls readable when stacks wait (the ring buffer's epoll fd).
  int poll_fd() const;

  // Samples the program could not send because the ring buffer was full.
  Result<uint64_t> dropped() const;

 private:
  struct Impl;
  explicit BpfStackIds(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbid

#endif  // PBID_BPF_STACK_IDS_H_
