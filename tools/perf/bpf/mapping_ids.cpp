// SPDX-License-Identifier: GPL-2.0
#include "pbid/bpf/mapping_ids.h"

namespace pbid {

Result<std::unique_ptr<BpfMappingIds>> BpfMappingIds::Load() {
  PBID_ASSIGN_OR_RETURN(std::unique_ptr<BpfStackIds> program, BpfStackIds::Load());
  auto ids = std::make_unique<BpfMappingIds>();
  ids->program_ = std::move(program);
  return ids;
}

Status BpfMappingIds::Attach(int perf_fd) {
  if (!program_)
    return Error::Of(ErrorKind::kInvalidArgument, "bpf", "no BPF program loaded");
  return program_->Attach(perf_fd);
}

int BpfMappingIds::poll_fd() const {
  return program_ ? program_->poll_fd() : -1;
}

void BpfMappingIds::OnMmap2(const Mmap2Record& m, const std::optional<BuildId>& known,
                            BuildIdSource known_from) {
  const uint64_t key = mappings_.size();
  mappings_.push_back(
      MappingInfo{m.pid, m.start, m.pgoff, m.sample_id.time, std::string(m.filename), known_from});
  matcher_.AddMapping(m.pid, m.start, m.len, m.pgoff, m.sample_id.time, key);
  if (known)
    matcher_.KnownId(key, *known);
}

void BpfMappingIds::OnExec(uint32_t pid, uint64_t t) {
  matcher_.Exec(pid, t);
}

void BpfMappingIds::OnFork(uint32_t parent, uint32_t child, uint64_t t) {
  matcher_.Fork(parent, child, t);
}

Status BpfMappingIds::Collect() {
  if (!program_)
    return Ok();
  auto n = program_->Drain([this](const BpfUserStack& s) { pending_.push_back(s); });
  if (!n.ok())
    return n.error();
  return Ok();
}

void BpfMappingIds::Match() {
  for (const BpfUserStack& s : pending_)
    Offer(s);
  pending_.clear();
}

void BpfMappingIds::Offer(const BpfUserStack& stack) {
  stats_.stacks++;
  for (const BpfFrame& f : stack.frames) {
    stats_.frames++;
    if (f.has_id)
      stats_.frames_with_id++;
    switch (matcher_.Offer(stack.pid, stack.time_ns, f)) {
      case BpfIdMatcher::Verdict::kConfirmed: stats_.confirmed++; break;
      case BpfIdMatcher::Verdict::kOffsetMismatch: stats_.offset_mismatch++; break;
      case BpfIdMatcher::Verdict::kAssigned:  // counted by mapping in stats()
      case BpfIdMatcher::Verdict::kNoId:
      case BpfIdMatcher::Verdict::kNoMapping:
      case BpfIdMatcher::Verdict::kConflict: break;
    }
  }
}

std::vector<BpfMappingIds::Decided> BpfMappingIds::Decisions() const {
  std::vector<Decided> out;
  for (uint64_t key = 0; key < mappings_.size(); key++) {
    const MappingInfo& m = mappings_[key];
    MappingIdEntry e;
    e.pid = m.pid;
    e.start = m.start;
    e.pgoff = m.pgoff;
    e.time = m.time;
    if (matcher_.Disputed(key)) {
      if (m.known_from == BuildIdSource::kKernelRecord)
        continue;
      e.kind = MappingIdEntry::Kind::kDisputed;
    } else if (m.known_from == BuildIdSource::kNone) {
      auto id = matcher_.IdOf(key);
      if (!id)
        continue;
      e.kind = MappingIdEntry::Kind::kBpf;
      e.build_id = *id;
    } else {
      continue;  // known otherwise, and BPF agreed or said nothing
    }
    out.push_back(Decided{e, m.path, key});
  }
  return out;
}

BpfMappingIds::Stats BpfMappingIds::stats() const {
  Stats s = stats_;
  s.conflicts = matcher_.conflicts();
  s.assigned = 0;
  for (uint64_t key = 0; key < mappings_.size(); key++) {
    if (mappings_[key].known_from == BuildIdSource::kNone && matcher_.IdOf(key))
      s.assigned++;
  }
  if (program_) {
    auto d = program_->dropped();
    if (d.ok())
      s.dropped = *d;
  }
  return s;
}

}  // namespace pbid
