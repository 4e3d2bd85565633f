// SPDX-License-Identifier: GPL-2.0
//
// BpfStackIds in a build without libbpf 0.7, clang or bpftool (Debian 11): Load() says so, and
// record goes on with the file path. Nothing else can be reached without a loaded object.
#include "pbid/bpf/stack_ids.h"

namespace pbid {

struct BpfStackIds::Impl {};

BpfStackIds::BpfStackIds(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfStackIds::~BpfStackIds() = default;

Result<std::unique_ptr<BpfStackIds>> BpfStackIds::Load() {
  return Error::Of(ErrorKind::kUnsupported, "bpf",
                   "this perf-buildid was built without its BPF program (needs libbpf >= 0.7, "
                   "clang and bpftool at build time)");
}

Status BpfStackIds::Attach(int) {
  return Error::Of(ErrorKind::kUnsupported, "bpf", "no BPF program");
}

Result<size_t> BpfStackIds::Drain(const std::function<void(const BpfUserStack&)>&) {
  return size_t{0};
}

int BpfStackIds::poll_fd() const {
  return -1;
}

Result<uint64_t> BpfStackIds::dropped() const {
  return uint64_t{0};
}

}  // namespace pbid
