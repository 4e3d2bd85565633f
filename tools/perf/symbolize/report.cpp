// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/report.h"

#include <algorithm>
#include <cinttypes>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/events.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/session.h"
#include "pbid/symbolize/kernel_symbols.h"
#include "pbid/symbolize/pprof_writer.h"
#include "pbid/symbolize/unwinder.h"

namespace pbid {

namespace {

constexpr size_t kMaxFrames = 512;  // PERF_MAX_STACK_DEPTH-like bound on corrupt chains

// The pprof value type of an event: cpu-clock periods are nanoseconds.
PprofValueType EventValueType(const EventAttr& a) {
  if (const KnownEvent* e = FindEvent(a.attr.type, a.attr.config))
    return {std::string(e->pprof_type), std::string(e->unit)};
  return {a.name.empty() ? "events" : a.name, "count"};
}

std::string EventName(const EventAttr& a) {
  if (!a.name.empty())
    return a.name;
  if (const KnownEvent* e = FindEvent(a.attr.type, a.attr.config))
    return std::string(e->name);
  return "events";
}

// The flat table's count of one cached address (Impl::flat_by_self): its samples of one event,
// kept in the address's own cache entry, where the sample's lookup just was, and added to its
// stack once the replay is done.
struct FlatCount {
  uint32_t stack = IdTable::kNone;  // in event ev's stacks; kNone before the first sample
  uint32_t ev = 0;
  uint64_t samples = 0, period = 0;  // since that first one, which Profile::Add counted
  bool Counts(size_t event) const { return stack != IdTable::kNone && ev == event; }
};

// What an address of a file (the session's DSO: its path and build ID) became, worked out once
// for every frame that has it. The DSO's index stands for its build ID: hashing two integers is
// what a frame costs.
struct SymEntry {
  uint64_t offset = 0;
  uint32_t dso = 0;
  // Its profile frames (inlined ones first when they are shown), in Impl::named_frames;
  // count 0 when nothing named it.
  uint32_t first = 0, count = 0;
  // Unnamed, the frames perf keeps it apart by: the sample's own entry by the offset, and in a
  // call chain by the sampled address, which differs between two mappings of one file (the
  // last address seen, and its frame).
  uint32_t self = IdTable::kNone;
  uint32_t chain = IdTable::kNone;
  uint64_t chain_ip = 0;
  FlatCount flat;
};

uint32_t HashAddress(uint64_t dso, uint64_t addr) {
  return IdTable::Fold((dso * 0x9e3779b97f4a7c15ull) ^ (addr * 0xc2b2ae3d27d4eb4full));
}

}  // namespace

struct Report::Impl {
  const PerfDataReader* reader = nullptr;
  ReportOptions options;
  std::unique_ptr<Symbolizer> symbolizer;
  std::unique_ptr<Session> session;
  std::unique_ptr<KernelSymbols> kernel;
  std::unique_ptr<PprofBuilder> pprof;
  // For DWARF call graphs (user registers and a copy of the user stack in each sample): the
  // user frames come from unwinding that copy with the ELF found by build ID.
  std::unique_ptr<Unwinder> unwinder;
  Profile profile;
  SymbolDetail detail = SymbolDetail::kFunction;
  // Every user address symbolized, by module and file offset (sym_ids finds them), for the
  // whole report: a few dozen bytes per distinct address of the recording. pprof also keeps
  // each one's source frames (sym_sources, by the same index).
  std::deque<SymEntry> syms;
  IdTable sym_ids;
  std::deque<Symbolization> sym_sources;
  // Kernel addresses, named once each (kernel_ids finds them by address): their frames and
  // pprof location.
  struct KernelFrame {
    uint64_t ip = 0;
    uint32_t first = 0, count = 0;  // in named_frames
    uint64_t location = 0;
    FlatCount flat;
    const Mapping* map = nullptr;  // the kernel mapping of ip when it was sampled (the session's)
  };
  // Kernel addresses are named after the replay, which kallsyms is read beside
  // (KernelSymbols::Prefetch): each has a frame of its own until then, which NameKernelFrames
  // replaces by its named frames, merging the stacks that then become equal. Not for pprof,
  // whose locations are written as the samples come.
  bool name_kernel_later = false;
  uint32_t kernel_dso = 0;  // "[kernel.kallsyms]", the stand-ins' dso
  // The frames of kernel address k: appended to named_frames; k.count says how many.
  void NameKernel(KernelFrame& k);
  // After the replay: names every kernel address that stood in the profile unnamed.
  void NameKernelFrames();
  std::deque<KernelFrame> kernel_frames;
  IdTable kernel_ids;
  // The frames of every named address, user and kernel.
  std::deque<uint32_t> named_frames;
  // The last kernel address and its entry: samples in a loop or idle repeat it.
  uint64_t last_kernel_ip = 0;
  KernelFrame* last_kernel = nullptr;
  // Each DSO's path as a profile name, by the session's DSO index (kNone until first asked).
  std::vector<uint32_t> dso_names;
  uint32_t DsoName(const Mapping& m);
  uint32_t unknown_dso = 0;
  uint32_t empty_comm = 0;

  void AddUser(const Mapping& m, uint64_t ip, bool leaf);
  uint32_t Unnamed(uint32_t dso, uint64_t address, FrameKind kind);
  uint32_t CommId(int32_t pid);
  void AddKernel(uint64_t ip, bool leaf);
  void AddUnmapped(uint64_t ip, bool leaf);
  // Appends the profile frames of src to named_frames; returns how many.
  uint32_t Frames(const std::vector<SourceFrame>& src, uint32_t dso, FrameKind kind);
  Status OnSample(const SampleContext& ctx, SampleCoverage& cov);
  // The profile and the caches as before the first sample: at the start, and again when the
  // replay starts over (Session::Process's on_restart). Each event's profile starts as its
  // entry in events.
  void Start();
  std::vector<EventProfile> events;
  // Forgets the caches of addresses, which only the building needs: of user addresses, which
  // only the replay needs, or all of them.
  void DropUserCaches();
  void DropCaches();

  // OnSample's, kept to spare allocations per sample.
  std::vector<std::pair<uint64_t, bool>> ips;
  std::vector<uint32_t> frames;
  std::vector<uint64_t> locs;
  uint32_t self_frame = 0;  // the sample's own entry (ProfileStack::self)
  // The flat table's stacks when neither pid nor command keeps them apart: a sample's stack is
  // then its own entry alone, so each event's stack index is kept by that frame's id (kNone
  // until its first sample), and a sample is counted without hashing its stack.
  bool flat_by_self = false;
  std::vector<std::vector<uint32_t>> flat_stacks;
  // The sample's event, and the count in the cache entry of its own address (nullptr when it
  // has none): once that count has the sample's stack, the sample is counted there and its
  // frame is not looked up again.
  size_t sample_ev = 0;
  FlatCount* leaf_count = nullptr;
  // Adds what the cache entries counted to their stacks.
  void AddFlatCounts();
};

void Report::Impl::Start() {
  profile = Profile();
  unknown_dso = profile.names().Id("[unknown]");
  kernel_dso = profile.names().Id(kKernelDsoName);
  empty_comm = profile.names().Id("");
  profile.events() = events;
  DropCaches();
}

void Report::Impl::DropUserCaches() {
  std::deque<SymEntry>().swap(syms);
  sym_ids = IdTable();
  std::deque<Symbolization>().swap(sym_sources);
  std::vector<uint32_t>().swap(dso_names);
  std::vector<std::vector<uint32_t>>().swap(flat_stacks);
}

void Report::Impl::DropCaches() {
  DropUserCaches();
  std::deque<KernelFrame>().swap(kernel_frames);
  kernel_ids = IdTable();
  last_kernel_ip = 0;
  last_kernel = nullptr;
  std::deque<uint32_t>().swap(named_frames);
}

void Report::Impl::AddFlatCounts() {
  auto add = [&](FlatCount& f) {
    if (f.stack != IdTable::kNone && f.samples != 0)
      profile.AddTo(f.ev, f.stack, f.samples, f.period);
    f.samples = f.period = 0;
  };
  for (SymEntry& e : syms)
    add(e.flat);
  for (KernelFrame& k : kernel_frames)
    add(k.flat);
}

// A sample of a task the kernel no longer gives a pid (it was exiting) has pid -1; perf's
// report names such a thread ":-1", as any thread it has no command for.
uint32_t Report::Impl::CommId(int32_t pid) {
  return profile.names().Id(pid < 0 ? ":" + std::to_string(pid) : session->CommOf(pid));
}

uint32_t Report::Impl::Unnamed(uint32_t dso, uint64_t address, FrameKind kind) {
  ProfileFrame f;
  f.dso = dso;
  f.address = address;
  f.kind = kind;
  return profile.FrameId(f);
}

uint32_t Report::Impl::DsoName(const Mapping& m) {
  if (m.dso >= dso_names.size())
    dso_names.resize(m.dso + 1, IdTable::kNone);
  uint32_t& id = dso_names[m.dso];
  if (id == IdTable::kNone)
    id = profile.names().Id(m.path);
  return id;
}

// The profile frames of a named address: the real function last, its inlined frames before it
// when they are shown.
uint32_t Report::Impl::Frames(const std::vector<SourceFrame>& src, uint32_t dso, FrameKind kind) {
  size_t first = options.inline_frames ? 0 : src.size() - 1;
  for (size_t i = first; i < src.size(); i++) {
    ProfileFrame f;
    f.dso = dso;
    f.symbol = profile.names().Id(src[i].function);
    f.kind = kind;
    f.inlined = i + 1 < src.size();
    named_frames.push_back(profile.FrameId(f));
  }
  return static_cast<uint32_t>(src.size() - first);
}

void Report::Impl::AddUser(const Mapping& m, uint64_t ip, bool leaf) {
  // The address as the chain gives it, as perf 6.1 looks it up: a frame-pointer chain's
  // callers are return addresses, taken as they are (a call that ends its function names the
  // next one there, in perf too); the DWARF unwinder's callers come already moved back into
  // the call instruction (below), as perf's libdw unwinder moves them.
  const uint64_t offset = ip - m.start + m.pgoff;
  const uint32_t dso = DsoName(m);
  const FrameKind kind =
      m.build_id || !m.file_ids.empty() ? FrameKind::kUnsymbolized : FrameKind::kNoBuildId;
  SymEntry none;  // no build ID: nothing is looked up, nothing is named
  SymEntry* c = &none;
  size_t index = 0;
  if (m.build_id || !m.file_ids.empty()) {
    const uint32_t h = HashAddress(m.dso, offset);
    auto [i, added] = sym_ids.Insert(h, static_cast<uint32_t>(syms.size()), [&](uint32_t j) {
      return syms[j].offset == offset && syms[j].dso == m.dso;
    });
    index = i;
    if (added) {
      syms.emplace_back();
      SymEntry& e = syms.back();
      e.offset = offset;
      e.dso = static_cast<uint32_t>(m.dso);
      // The DSO's index stands for its file identity as for a build ID: one cache.
      auto r = m.build_id
                   ? symbolizer->SymbolizeOffset(*m.build_id, m.path, offset, detail)
                   : symbolizer->SymbolizeOffsetByFile(m.file_ids, m.path, offset, detail);
      // A corrupt debug file must not end the report: the frame stays unsymbolized.
      Symbolization s;
      if (r.ok())
        s = std::move(*r);
      if (s.status == SymbolizeStatus::kOk && !s.frames.empty()) {
        e.first = static_cast<uint32_t>(named_frames.size());
        e.count = Frames(s.frames, dso, FrameKind::kUser);
      }
      // The names are in the profile now; only pprof needs the source frames again.
      if (pprof)
        sym_sources.push_back(std::move(s));
    }
    c = &syms[index];
  }
  if (leaf) {
    leaf_count = c == &none ? nullptr : &c->flat;
    if (leaf_count != nullptr && leaf_count->Counts(sample_ev))
      return;  // the flat table's, counted in its entry: nothing more to look up
  }
  const bool ok = c->count != 0;
  if (ok) {
    if (options.callchains) {
      auto from = named_frames.begin() + c->first;
      frames.insert(frames.end(), from, from + c->count);
    }
    if (leaf)
      self_frame = named_frames[c->first + c->count - 1];
  } else {
    // Unnamed, perf keeps each address apart: in a call chain the sampled address, and for
    // the sample's own entry the address within the mapping.
    // Without call chains the stack is the sample's own entry (below): no second frame.
    if (options.callchains) {
      if (c->chain == IdTable::kNone || c->chain_ip != ip) {
        c->chain = Unnamed(dso, ip, kind);
        c->chain_ip = ip;
      }
      frames.push_back(c->chain);
    }
    if (leaf) {
      if (c->self == IdTable::kNone)
        c->self = Unnamed(dso, offset, kind);
      self_frame = c->self;
    }
  }
  if (pprof) {
    // The best identity: GNU, else Go, else the file hash, its kind named (pprof_writer.h).
    const Identity best = BestIdentity(m.build_id, m.file_ids);
    uint64_t mid =
        pprof->AddMapping({m.start, m.end, m.pgoff, m.path, best.value,
                           best.kind == IdentityKind::kNone ? "" : IdentityKindName(best.kind)});
    locs.push_back(pprof->AddLocation(
        mid, ip, ok ? sym_sources[index].frames : std::vector<SourceFrame>{}));
  }
}

void Report::Impl::AddKernel(uint64_t ip, bool leaf) {
  if (last_kernel == nullptr || ip != last_kernel_ip) {
    auto [i, added] =
        kernel_ids.Insert(IdTable::Fold(ip * 0x9e3779b97f4a7c15ull),
                          static_cast<uint32_t>(kernel_frames.size()),
                          [&](uint32_t j) { return kernel_frames[j].ip == ip; });
    if (added) {
      kernel_frames.emplace_back();
      KernelFrame& k = kernel_frames.back();
      k.ip = ip;
      k.map = session->Find(-1, ip, true);
      if (name_kernel_later) {
        // Its own frame for now: a kernel frame without a name, which no named address has
        // (one nothing names is the [kernel] frame).
        ProfileFrame f;
        f.dso = kernel_dso;
        f.address = ip;
        f.kind = FrameKind::kKernel;
        k.first = static_cast<uint32_t>(named_frames.size());
        k.count = 1;
        named_frames.push_back(profile.FrameId(f));
      } else {
        NameKernel(k);
      }
    }
    last_kernel_ip = ip;
    last_kernel = &kernel_frames[i];  // deque elements do not move
  }
  KernelFrame& k = *last_kernel;
  if (leaf) {
    leaf_count = &k.flat;
    if (!k.flat.Counts(sample_ev))
      self_frame = named_frames[k.first + k.count - 1];
  }
  if (options.callchains) {
    auto from = named_frames.begin() + k.first;
    frames.insert(frames.end(), from, from + k.count);
  }
  if (pprof)
    locs.push_back(k.location);
}

void Report::Impl::NameKernel(KernelFrame& k) {
  k.first = static_cast<uint32_t>(named_frames.size());
  KernelSymbols::Named n = kernel->Lookup(k.map, k.ip, detail);
  if (n.frames.empty()) {
    // No trustworthy kernel symbols: one [kernel] frame; pprof keeps the addresses.
    ProfileFrame f;
    f.dso = profile.names().Id("[kernel]");
    f.symbol = f.dso;
    f.kind = FrameKind::kKernel;
    named_frames.push_back(profile.FrameId(f));
    k.count = 1;
  } else {
    uint32_t dso =
        profile.names().Id(n.module.empty() ? std::string(kKernelDsoName) : "[" + n.module + "]");
    k.count = Frames(n.frames, dso, FrameKind::kKernel);
  }
  if (pprof) {
    const Mapping* km = k.map;
    uint64_t mid = 0;
    if (km != nullptr) {
      mid =
          pprof->AddMapping({km->start, km->end, km->pgoff, km->path,
                             km->build_id ? km->build_id->ToHex() : "", km->build_id ? "gnu" : ""});
    }
    k.location = pprof->AddLocation(mid, k.ip, n.frames);
  }
}

void Report::Impl::NameKernelFrames() {
  if (!name_kernel_later)
    return;
  Profile::Replacements named;
  std::vector<uint32_t> with;
  for (KernelFrame& k : kernel_frames) {
    const uint32_t stand_in = named_frames[k.first];
    NameKernel(k);
    // Without call chains a stack is the sample's own entry: the function alone.
    auto from = named_frames.begin() + k.first + (options.callchains ? 0 : k.count - 1);
    with.assign(from, named_frames.begin() + k.first + k.count);
    named.Add(stand_in, with);
  }
  profile.ReplaceFrames(named);
}

void Report::Impl::AddUnmapped(uint64_t ip, bool leaf) {
  uint32_t id = Unnamed(unknown_dso, ip, FrameKind::kNoBuildId);
  if (leaf) {
    self_frame = id;
    leaf_count = nullptr;
  }
  frames.push_back(id);
  if (pprof)
    locs.push_back(pprof->AddLocation(0, ip, {}));
}

Status Report::Impl::OnSample(const SampleContext& ctx, SampleCoverage& cov) {
  const SampleRecord& s = ctx.sample;
  const EventAttr* attr = &ctx.attr;
  const std::vector<EventAttr>& attrs = reader->attrs();
  // The event's index, for its profile and its pprof value. The session hands out the reader's
  // own attrs, so the index is the pointer's offset; no search per sample.
  size_t ev = 0;
  if (!attrs.empty() && attr >= attrs.data() && attr < attrs.data() + attrs.size())
    ev = static_cast<size_t>(attr - attrs.data());
  uint64_t period = (attr->attr.sample_type & PERF_SAMPLE_PERIOD) ? s.period
                    : attr->attr.freq                             ? 1
                                                                  : attr->attr.sample_period;
  const int32_t pid = static_cast<int32_t>(s.sample_id.pid);
  const bool kernel_mode = IsKernelCpumode(s.cpumode);

  // The frames, leaf first. With a callchain its context markers say which space the
  // following addresses are in; without one, or with one perf drops as corrupt, the sample ip
  // alone.
  ips.clear();
  if (options.callchains && s.callchain.size() > 0) {
    bool in_kernel = kernel_mode;
    for (uint64_t i = 0; i < s.callchain.size() && ips.size() < kMaxFrames; i++) {
      uint64_t a = s.callchain[i];
      if (IsUnknownContext(a)) {
        ips.clear();  // as perf, which stops at the marker and drops what it took
        break;
      }
      if (a >= kContextMax) {
        if (a == PERF_CONTEXT_KERNEL)
          in_kernel = true;
        if (a == PERF_CONTEXT_USER)
          in_kernel = false;
        continue;
      }
      ips.emplace_back(a, in_kernel);
    }
  }
  if (unwinder && options.callchains &&
      (attr->attr.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) ==
          (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) {
    RegsView regs = s.regs_user(ctx.record, *attr);
    StackView stack = s.stack_user(ctx.record);
    if (regs.abi() != PERF_SAMPLE_REGS_ABI_NONE && regs.size() != 0) {
      UnwindResult u = unwinder->Unwind(pid, regs, stack,
                                        [&](uint64_t a) { return session->Find(pid, a, false); });
      if (!u.ips.empty()) {
        // The kernel's frames stay; the user part of the chain (its sampled ip, as the
        // kernel gives it with exclude_callchain_user) is what was unwound.
        while (!ips.empty() && !ips.back().second)
          ips.pop_back();
        for (size_t j = 0; j < u.ips.size() && ips.size() < kMaxFrames; j++) {
          // A caller's pc is its return address: pc - 1 is in the call instruction, the
          // address perf's libdw unwinder gives such a frame.
          uint64_t a = u.ips[j];
          ips.emplace_back(j == 0 || a == 0 ? a : a - 1, false);
        }
      }
    }
  }
  if (ips.empty())
    ips.emplace_back(s.ip, kernel_mode);

  frames.clear();
  locs.clear();
  sample_ev = ev;
  leaf_count = nullptr;
  for (size_t i = 0; i < ips.size(); i++) {
    auto [a, k] = ips[i];
    if (k) {
      AddKernel(a, i == 0);
    } else if (const Mapping* m = i == 0 ? ctx.mapping : session->Find(pid, a, false)) {
      AddUser(*m, a, i == 0);
    } else {
      AddUnmapped(a, i == 0);
    }
  }

  // Coverage is about the leaf: the mapping that got the sample.
  cov.total++;
  if (ips.front().second) {
    cov.kernel++;
  } else if (ctx.mapping != nullptr) {
    switch (ctx.mapping->source) {
      case BuildIdSource::kKernelRecord: cov.kernel_record++; break;
      case BuildIdSource::kSynthesized: cov.synthesized++; break;
      case BuildIdSource::kFile: cov.file++; break;
      case BuildIdSource::kBpf: cov.bpf++; break;
      case BuildIdSource::kNone:
        if (ctx.mapping->file_ids.go_build_id)
          cov.go_build_id++;
        else if (ctx.mapping->file_ids.file_hash)
          cov.file_hash_only++;
        else
          cov.none++;
        break;
    }
  } else {
    cov.unmapped++;
  }

  // Without call chains (a flat table) the stack is the frame the table shows.
  if (flat_by_self && leaf_count != nullptr && leaf_count->Counts(ev)) {
    leaf_count->samples++;
    leaf_count->period += period;
  } else if (flat_by_self) {
    if (flat_stacks.size() <= ev)
      flat_stacks.resize(ev + 1);
    std::vector<uint32_t>& by_self = flat_stacks[ev];
    if (by_self.size() <= self_frame)
      by_self.resize(std::max<size_t>(profile.frame_count(), self_frame + 1), IdTable::kNone);
    uint32_t& stack = by_self[self_frame];
    frames.assign(1, self_frame);
    if (stack == IdTable::kNone)
      stack = profile.Add(ev, 0, empty_comm, frames, self_frame, 1, period);
    else
      profile.AddTo(ev, stack, 1, period);
    if (leaf_count != nullptr && leaf_count->stack == IdTable::kNone) {
      leaf_count->stack = stack;
      leaf_count->ev = static_cast<uint32_t>(ev);
    }
  } else {
    if (!options.callchains)
      frames.assign(1, self_frame);
    profile.Add(ev, options.keep_pid ? pid : 0, options.keep_comm ? CommId(pid) : empty_comm,
                frames, self_frame, 1, period);
  }

  if (pprof) {
    std::vector<int64_t> values(attrs.size() + 1, 0);
    values[0] = 1;
    values[ev + 1] = static_cast<int64_t>(period);
    return pprof->AddSample(locs, values, {{"pid", pid}, {"tid", s.sample_id.tid}});
  }
  return Ok();
}

Report::~Report() = default;

const Profile& Report::profile() const {
  return impl_->profile;
}

Result<std::unique_ptr<Report>> Report::Build(const PerfDataReader& reader,
                                              const ReportOptions& options) {
  std::unique_ptr<Report> rep(new Report());
  rep->impl_ = std::make_unique<Impl>();
  Impl& im = *rep->impl_;
  im.reader = &reader;
  im.options = options;
  // Inlined frames and lines only where something shows them: they cost a DWARF walk.
  im.detail =
      options.want_pprof || options.inline_frames ? SymbolDetail::kFull : SymbolDetail::kFunction;
  auto sym = Symbolizer::Create(options.symbolizer);
  if (!sym.ok())
    return sym.error();
  im.symbolizer = std::move(*sym);
  im.session = std::make_unique<Session>(reader);
  im.kernel = std::make_unique<KernelSymbols>(reader, *im.symbolizer, options.kallsyms_path);
  im.flat_by_self =
      !options.callchains && !options.keep_pid && !options.keep_comm && !options.want_pprof;
  SampleCoverage& cov = rep->coverage_;

  const std::vector<EventAttr>& attrs = reader.attrs();
  if (attrs.empty())
    return Error("attrs", "perf.data has no events");
  const uint64_t kDwarf = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  for (const EventAttr& a : attrs) {
    EventProfile e;
    e.name = EventName(a);
    const bool dwarf = (a.attr.sample_type & kDwarf) == kDwarf;
    e.callchains =
        options.callchains && ((a.attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0 || dwarf);
    if (dwarf && options.callchains && !im.unwinder) {
      auto u = Unwinder::Create(im.symbolizer.get());
      if (!u.ok())
        return u.error();
      im.unwinder = std::move(*u);
    }
    im.events.push_back(std::move(e));
  }
  im.Start();
  if (options.want_pprof) {
    std::vector<PprofValueType> types = {{"samples", "count"}};
    for (const EventAttr& a : attrs)
      types.push_back(EventValueType(a));
    const EventAttr& first = attrs.front();
    int64_t period = 0;
    if (!first.attr.freq) {
      period = static_cast<int64_t>(first.attr.sample_period);
    } else if (first.attr.sample_freq != 0 && EventValueType(first).unit == "nanoseconds") {
      period = static_cast<int64_t>(1000000000ull / first.attr.sample_freq);
    }
    im.pprof = std::make_unique<PprofBuilder>(types, EventValueType(first), period);
    im.pprof->SetDefaultSampleType(EventValueType(first).type);
    im.pprof->AddComment("perf-buildid report");
  }

  // kallsyms is read beside the replay when samples may be in the kernel, and kernel addresses
  // are named after it.
  im.name_kernel_later = !im.pprof;
  if (im.name_kernel_later && std::any_of(attrs.begin(), attrs.end(), [](const EventAttr& a) {
        return !a.attr.exclude_kernel;
      }))
    im.kernel->Prefetch();

  // Debuginfod is asked for every module with samples at once, concurrently and within its
  // budget, rather than one module at a time as samples reach them: that needs the modules
  // first, from a pass over the records. Modules only in callchains are asked for as they come,
  // within what is left of the budget. A pass that fails here fails again below, and says so.
  if (im.symbolizer->UsesDebuginfod()) {
    Session survey(reader);
    (void)survey.Process();
    std::vector<std::pair<BuildId, std::string>> modules;
    for (const Dso& d : survey.dsos()) {
      if (d.samples != 0 && d.build_id && !d.kernel)
        modules.emplace_back(*d.build_id, d.path);
    }
    im.symbolizer->Prefetch(modules);
  }

  uint64_t first_time = 0, last_time = 0;
  Status failed = Ok();
  // The replay streams the file once, and starts over if it cannot keep to perf's order that
  // way: what the samples built is then forgotten. Not with pprof or the unwinder, whose
  // builders keep what they were given.
  Session::RestartCallback restart;
  if (!im.pprof && !im.unwinder) {
    restart = [&] {
      im.Start();
      cov = SampleCoverage();
      first_time = last_time = 0;
      failed = Ok();
    };
  }
  Status st = im.session->Process([&](const SampleContext& ctx) {
    if (!failed.ok())
      return;
    uint64_t t = ctx.sample.sample_id.time;
    if (t != 0) {
      if (first_time == 0 || t < first_time)
        first_time = t;
      last_time = std::max(last_time, t);
    }
    failed = im.OnSample(ctx, cov);
  }, nullptr, restart);
  if (!st.ok())
    return st.error();
  if (!failed.ok())
    return failed.error();
  im.AddFlatCounts();
  // perf's "Total Lost Samples" counts LOST_SAMPLES only; LOST records are ring-buffer
  // overruns, a count of events, not of samples.
  cov.lost = im.session->stats().lost_samples;
  if (im.unwinder) {
    const UnwindStats& u = im.unwinder->stats();
    cov.unwound = u.samples;
    for (size_t i = 0; i < kUnwindStops; i++)
      cov.unwind_stops[i] = u.by_stop[i];
  }
  // Naming the kernel's addresses adds to the profile at its largest: what only the replay of
  // user addresses needed goes first (the file's buffers, the unwinder, the caches of user
  // addresses). The session stays: the kernel's mappings are its.
  reader.ReleasePages();
  im.unwinder.reset();
  im.DropUserCaches();
  im.NameKernelFrames();
  cov.kallsyms_used = im.kernel->kallsyms_used();
  cov.kallsyms_note = im.kernel->note();
  if (im.pprof && last_time > first_time) {
    im.pprof->SetTime(0, static_cast<int64_t>(last_time - first_time));
  }
  rep->symbol_coverage_ = im.symbolizer->Coverage();
  // What only the building needed goes before the views are drawn, so that their memory and
  // this do not add up: the replay, the open modules and their symbol tables, kallsyms, and
  // the caches of addresses (pprof keeps its own copy of what it needs).
  im.kernel.reset();
  im.symbolizer.reset();
  im.session.reset();
  im.DropCaches();
  std::vector<EventProfile>().swap(im.events);
  return rep;
}

Status Report::WritePprof(const std::string& path) const {
  if (!impl_->pprof)
    return Error::Of(ErrorKind::kInvalidArgument, "--format pprof",
                     "report was built without pprof output");
  return impl_->pprof->WriteGzip(path);
}

}  // namespace pbid
