// SPDX-License-Identifier: GPL-2.0
#include "pbid/bpf/stack_ids.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "user_stack_ids.h"
#include "user_stack_ids.skel.h"

namespace pbid {

namespace {

// libbpf prints its diagnostics; the verifier log is long and the caller gets one line
// anyway, so only the last warning is kept for the error message.
thread_local std::string g_last_libbpf_warning;

int KeepLastWarning(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG)
    return 0;
  char buf[512];
  int n = vsnprintf(buf, sizeof(buf), fmt, args);
  std::string line(buf, n < 0 ? 0 : std::min<size_t>(n, sizeof(buf) - 1));
  while (!line.empty() && line.back() == '\n')
    line.pop_back();
  if (!line.empty())
    g_last_libbpf_warning = line;
  return 0;
}

std::string Why(int err, const char* what) {
  std::string s = what;
  if (err == EPERM || err == EACCES)
    s += ": not permitted (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)";
  else if (err == ENOSYS)
    s += ": the kernel has no bpf() system call (CONFIG_BPF_SYSCALL)";
  else if (err == EINVAL && !g_last_libbpf_warning.empty())
    s += ": " + g_last_libbpf_warning;
  else
    s += std::string(": ") + strerror(err);
  return s;
}

}  // namespace

struct BpfStackIds::Impl {
  user_stack_ids* skel = nullptr;
  ring_buffer* rb = nullptr;
  std::vector<bpf_link*> links;
  const std::function<void(const BpfUserStack&)>* sink = nullptr;

  ~Impl() {
    for (bpf_link* l : links)
      bpf_link__destroy(l);
    ring_buffer__free(rb);
    user_stack_ids__destroy(skel);
  }

  static int OnSample(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    if (size < sizeof(pbid_bpf_stack) || self->sink == nullptr)
      return 0;
    const auto* s = static_cast<const pbid_bpf_stack*>(data);
    BpfUserStack out;
    out.pid = s->pid;
    out.tid = s->tid;
    out.time_ns = s->time;
    size_t nips = std::min<size_t>(s->ips_size / sizeof(s->ips[0]), PBID_BPF_MAX_FRAMES);
    size_t nids = std::min<size_t>(s->ids_size / sizeof(s->ids[0]), PBID_BPF_MAX_FRAMES);
    // Two walks of one sample agree in length; if they do not, nothing pairs them safely.
    if (nips != nids)
      return 0;
    out.frames.resize(nips);
    for (size_t i = 0; i < nips; i++) {
      BpfFrame& f = out.frames[i];
      f.ip = s->ips[i];
      if (s->ids[i].status == BPF_STACK_BUILD_ID_VALID) {
        f.has_id = true;
        memcpy(f.id, s->ids[i].build_id, sizeof(f.id));
        f.file_offset = s->ids[i].offset;
      }
    }
    (*self->sink)(out);
    return 0;
  }
};

BpfStackIds::BpfStackIds(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfStackIds::~BpfStackIds() = default;

Result<std::unique_ptr<BpfStackIds>> BpfStackIds::Load() {
  libbpf_set_print(KeepLastWarning);
  g_last_libbpf_warning.clear();
  auto impl = std::make_unique<Impl>();
  impl->skel = user_stack_ids__open();
  if (impl->skel == nullptr)
    return Error::Sys("bpf", errno, Why(errno, "cannot open the BPF object"));
  if (int err = user_stack_ids__load(impl->skel); err != 0)
    return Error::Sys("bpf", -err, Why(-err, "cannot load the BPF program"));
  impl->rb =
      ring_buffer__new(bpf_map__fd(impl->skel->maps.stacks), Impl::OnSample, impl.get(), nullptr);
  if (impl->rb == nullptr)
    return Error::Sys("bpf", errno, Why(errno, "cannot map the BPF ring buffer"));
  return std::unique_ptr<BpfStackIds>(new BpfStackIds(std::move(impl)));
}

Status BpfStackIds::Attach(int perf_fd) {
  // libbpf's link owns the descriptor it is given: it disables the event and closes the
  // descriptor when the link goes. It gets a duplicate, so that the recorder's descriptor stays
  // the recorder's to close, whichever of the two goes first.
  int own = fcntl(perf_fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0)
    return Error::Sys("bpf", errno, "cannot duplicate the perf event descriptor");
  bpf_link* link = bpf_program__attach_perf_event(impl_->skel->progs.user_stack_ids, own);
  if (link == nullptr) {
    int err = errno;
    close(own);
    // EINVAL here: perf_event programs are missing (CONFIG_BPF_EVENTS).
    return Error::Sys("bpf", err,
                      err == EINVAL
                          ? "cannot attach to the perf event: the kernel runs no BPF on perf "
                            "events (CONFIG_BPF_EVENTS)"
                          : Why(err, "cannot attach to the perf event"));
  }
  impl_->links.push_back(link);
  return Ok();
}

Result<size_t> BpfStackIds::Drain(const std::function<void(const BpfUserStack&)>& fn) {
  impl_->sink = &fn;
  int n = ring_buffer__consume(impl_->rb);
  impl_->sink = nullptr;
  if (n < 0)
    return Error::Sys("bpf", -n, "cannot read the BPF ring buffer");
  return static_cast<size_t>(n);
}

int BpfStackIds::poll_fd() const {
  return ring_buffer__epoll_fd(impl_->rb);
}

Result<uint64_t> BpfStackIds::dropped() const {
  uint32_t zero = 0;
  uint64_t v = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.dropped), &zero, &v) != 0)
    return Error::Sys("bpf", errno, "cannot read the BPF drop counter");
  return v;
}

}  // namespace pbid
