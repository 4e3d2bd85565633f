// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/report.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "pbid/build_id.h"
#include "pbid/elf_build_id.h"
#include "pbid/events.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/session.h"
#include "pbid/symbolize/kallsyms.h"
#include "pbid/symbolize/pprof_writer.h"

namespace pbid {

namespace {

constexpr size_t kMaxFrames = 512;  // PERF_MAX_STACK_DEPTH-like bound on corrupt chains

std::string_view Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
}

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

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

// The text of the table's cells, each kept once and named by its index: rows are keyed by
// these ids, so that a sample costs no string copies or comparisons.
class Names {
 public:
  uint32_t Id(std::string_view text) {
    auto it = ids_.find(text);
    if (it != ids_.end())
      return it->second;
    uint32_t id = static_cast<uint32_t>(texts_.size());
    texts_.emplace_back(text);
    ids_.emplace(texts_.back(), id);
    return id;
  }
  const std::string& operator[](uint32_t id) const { return texts_[id]; }

 private:
  std::deque<std::string> texts_;  // a deque never moves them: ids_ keys point into it
  std::unordered_map<std::string_view, uint32_t> ids_;
};

struct Frame {
  // Names of the dso and of the symbol ("[.] name" / "[k] name" as perf prints), set for the
  // leaf only: the table shows no other frame.
  uint32_t dso = 0;
  uint32_t sym = 0;
  uint64_t location = 0;
};

struct Row {
  uint64_t samples = 0;
  uint64_t period = 0;
};

struct RowKeyHash {
  size_t operator()(const std::vector<uint32_t>& key) const noexcept {
    size_t h = key.size();
    for (uint32_t id : key)
      h = h * 1000003 ^ id;
    return h;
  }
};

struct EventTable {
  std::string name;
  uint64_t samples = 0;
  uint64_t period = 0;
  std::unordered_map<std::vector<uint32_t>, Row, RowKeyHash> rows;  // cell ids -> row
};

// An address of a module, as symbolized once for every frame that has it.
struct SymKey {
  BuildId build_id;
  uint64_t addr;
  bool operator==(const SymKey& o) const { return addr == o.addr && build_id == o.build_id; }
};
struct SymKeyHash {
  size_t operator()(const SymKey& k) const noexcept {
    return k.build_id.Hash() ^ (k.addr * 0x9e3779b97f4a7c15ull);
  }
};
struct CachedSymbol {
  Symbolization s;
  std::optional<uint32_t> leaf_sym;  // the Names id of its table cell, once a leaf had it
};

}  // namespace

struct Report::Impl {
  const PerfDataReader* reader = nullptr;
  ReportOptions options;
  std::unique_ptr<Symbolizer> symbolizer;
  std::unique_ptr<Session> session;
  std::optional<Kallsyms> kallsyms;
  bool kallsyms_decided = false;
  std::vector<EventTable> events;
  std::unique_ptr<PprofBuilder> pprof;
  Names names;
  // Every address symbolized, by module: a few hundred bytes per distinct address of the
  // recording (its frames' names), for the whole report.
  std::unordered_map<SymKey, CachedSymbol, SymKeyHash> sym_cache;
  std::unordered_map<uint64_t, Frame> kernel_leaves;  // leaves kallsyms named, by address

  CachedSymbol& Symbolize(const BuildId& id, const std::string& path, uint64_t addr, bool vaddr);
  Frame ResolveUser(const Mapping& m, uint64_t ip, bool leaf);
  Frame ResolveKernel(uint64_t ip, bool leaf, SampleCoverage& cov);
  const std::vector<SourceFrame>* KernelFromVmlinux(const Mapping& km, uint64_t ip);
  std::map<BuildId, std::optional<int64_t>> kernel_shift;  // KASLR offset per kernel
  bool vmlinux_noted = false;
  void DecideKallsyms(SampleCoverage& cov, uint64_t kernel_ip);
  Status OnSample(const SampleContext& ctx, SampleCoverage& cov);
  std::vector<uint32_t> row_key;  // OnSample's, kept to spare an allocation per sample
};

namespace {

// Every sort key: its name on the command line and its column title.
struct SortKeyInfo {
  SortKey key;
  const char* name;
  const char* title;
};
constexpr SortKeyInfo kSortKeys[] = {
    {SortKey::kComm, "comm", "Command"},
    {SortKey::kPid, "pid", "Pid:Command"},
    {SortKey::kDso, "dso", "Shared Object"},
    {SortKey::kSym, "sym", "Symbol"},
};

const SortKeyInfo& InfoOf(SortKey key) {
  for (const SortKeyInfo& i : kSortKeys) {
    if (i.key == key)
      return i;
  }
  return kSortKeys[0];  // not reached: every enumerator has a row
}

}  // namespace

Result<std::vector<SortKey>> ParseSortKeys(const std::string& list) {
  std::vector<SortKey> keys;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string name =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const SortKeyInfo* info = nullptr;
    std::string known;
    for (const SortKeyInfo& i : kSortKeys) {
      if (name == i.name)
        info = &i;
      known += std::string(known.empty() ? "" : ", ") + i.name;
    }
    if (info == nullptr) {
      return Error::Of(ErrorKind::kInvalidArgument, "--sort",
                       "unknown sort key '" + name + "' (known: " + known + ")");
    }
    keys.push_back(info->key);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return keys;
}

// A file offset (or, with vaddr, an ELF address) of the module, symbolized on its first frame.
// Every frame is looked up, not only the leaves the table shows: the coverage summary counts
// the modules that named something, callers included.
CachedSymbol& Report::Impl::Symbolize(const BuildId& id, const std::string& path, uint64_t addr,
                                      bool vaddr) {
  auto [it, added] = sym_cache.try_emplace(SymKey{id, addr});
  if (added) {
    // The table shows a function's name; pprof has room for inlined frames and lines.
    SymbolDetail detail = pprof ? SymbolDetail::kFull : SymbolDetail::kFunction;
    auto r = vaddr ? symbolizer->SymbolizeVaddr(id, path, addr, detail)
                   : symbolizer->SymbolizeOffset(id, path, addr, detail);
    // A corrupt debug file must not end the report: the frame stays unsymbolized.
    if (r.ok())
      it->second.s = std::move(*r);
  }
  return it->second;
}

Frame Report::Impl::ResolveUser(const Mapping& m, uint64_t ip, bool leaf) {
  Frame f;
  uint64_t offset = ip - m.start + m.pgoff;
  // A caller's address is the return address: the call instruction is just before it.
  uint64_t lookup = leaf || offset == 0 ? offset : offset - 1;
  CachedSymbol* c = m.build_id ? &Symbolize(*m.build_id, m.path, lookup, false) : nullptr;
  const bool ok = c != nullptr && c->s.status == SymbolizeStatus::kOk;
  if (leaf) {
    f.dso = names.Id(Basename(m.path));
    if (c == nullptr) {
      f.sym = names.Id("[.] " + Hex(offset));
    } else {
      // A leaf's lookup address is its offset: the cell is the same for every leaf here.
      if (!c->leaf_sym)
        c->leaf_sym = names.Id("[.] " + (ok ? c->s.frames.back().function : Hex(offset)));
      f.sym = *c->leaf_sym;
    }
  }
  if (pprof) {
    uint64_t mid =
        pprof->AddMapping({m.start, m.end, m.pgoff, m.path, m.build_id ? m.build_id->ToHex() : ""});
    f.location = pprof->AddLocation(mid, ip, ok ? c->s.frames : std::vector<SourceFrame>{});
  }
  return f;
}

// Kernel symbols are only trusted for the kernel that was recorded: the same build ID, or,
// when the file has none, the same release. Decided at the first kernel sample, when the
// kernel's mapping (and its build ID) is known.
void Report::Impl::DecideKallsyms(SampleCoverage& cov, uint64_t kernel_ip) {
  kallsyms_decided = true;
  std::optional<BuildId> recorded;
  if (const Mapping* km = session->Find(-1, kernel_ip, true); km != nullptr && km->build_id) {
    recorded = km->build_id;
  } else if (reader->features().build_ids) {
    for (const BuildIdEntry& e : *reader->features().build_ids) {
      if (e.filename == kKernelDsoName)
        recorded = e.build_id;
    }
  }
  auto ks = Kallsyms::Load(options.kallsyms_path);
  if (!ks.ok()) {
    cov.kallsyms_note = "kallsyms unreadable (" + ks.error().ToString() + ")";
    return;
  }
  if (!ks->usable()) {
    cov.kallsyms_note = "kallsyms addresses hidden (kptr_restrict; run as root)";
    return;
  }
  bool same = false;
  if (recorded) {
    auto running = KernelBuildId();
    same = running.ok() && running->has_value() && **running == *recorded;
    cov.kallsyms_note = same ? "kallsyms of the running kernel (build ID matches)"
                             : "recorded kernel build ID differs from the running kernel";
  } else if (reader->features().osrelease) {
    utsname u;
    same = uname(&u) == 0 && *reader->features().osrelease == u.release;
    cov.kallsyms_note =
        same ? "kallsyms of the running kernel (same release; no kernel build "
               "ID recorded)"
             : "recorded on another kernel release (" + *reader->features().osrelease + ")";
  } else {
    cov.kallsyms_note = "no kernel build ID or release recorded: kallsyms not used";
  }
  if (same) {
    kallsyms = std::move(*ks);
    cov.kallsyms_used = true;
  }
}

// Without kallsyms of the recorded kernel, the vmlinux with the kernel's build ID (a debug
// dir, /usr/lib/debug/.build-id, debuginfod) names kernel addresses. The KASLR offset is the
// distance between the kernel mapping's start and the symbol it is named after ("_text" for
// "[kernel.kallsyms]_text").
const std::vector<SourceFrame>* Report::Impl::KernelFromVmlinux(const Mapping& km, uint64_t ip) {
  if (!km.build_id)
    return nullptr;
  auto shift_it = kernel_shift.find(*km.build_id);
  if (shift_it == kernel_shift.end()) {
    std::string anchor = "_text";
    if (auto close = km.path.find(']'); close != std::string::npos && close + 1 < km.path.size())
      anchor = km.path.substr(close + 1);
    std::optional<int64_t> shift;
    auto addr = symbolizer->SymbolAddress(*km.build_id, km.path, anchor);
    if (addr.ok() && addr->has_value())
      shift = static_cast<int64_t>(km.start - **addr);
    shift_it = kernel_shift.emplace(*km.build_id, shift).first;
  }
  if (!shift_it->second)
    return nullptr;
  uint64_t vaddr = ip - static_cast<uint64_t>(*shift_it->second);
  const Symbolization& s = Symbolize(*km.build_id, km.path, vaddr, true).s;
  return s.status == SymbolizeStatus::kOk ? &s.frames : nullptr;
}

Frame Report::Impl::ResolveKernel(uint64_t ip, bool leaf, SampleCoverage& cov) {
  // A kernel address kallsyms names is named the same in every sample: a leaf's names are
  // kept, and a caller needs none unless for pprof.
  if (kallsyms && !pprof) {
    if (leaf) {
      if (auto it = kernel_leaves.find(ip); it != kernel_leaves.end())
        return it->second;
    } else if (kallsyms->Lookup(ip) != nullptr) {
      return Frame{};
    }
  }
  Frame f;
  std::vector<SourceFrame> frames;
  const Mapping* km = session->Find(-1, ip, true);
  const Kallsyms::Symbol* sym = kallsyms ? kallsyms->Lookup(ip) : nullptr;
  const std::vector<SourceFrame>* vm = nullptr;
  if (sym != nullptr) {
    f.dso = names.Id(sym->module.empty() ? kKernelDsoName : "[" + sym->module + "]");
    f.sym = names.Id("[k] " + sym->name);
    frames.push_back(SourceFrame{sym->name, "", "", 0, 0});
  } else if (km != nullptr && (vm = KernelFromVmlinux(*km, ip)) != nullptr) {
    f.dso = names.Id(kKernelDsoName);
    f.sym = names.Id("[k] " + vm->back().function);
    frames = *vm;
    if (!cov.kallsyms_used && !vmlinux_noted) {
      vmlinux_noted = true;
      cov.kallsyms_note += "; named from the vmlinux with the recorded kernel build ID (" +
                           std::string(SymbolSourceName(symbolizer->SourceOf(*km->build_id))) + ")";
    }
  } else {
    // No trustworthy kernel symbols: one [kernel] row; pprof keeps the addresses.
    f.dso = names.Id("[kernel]");
    f.sym = names.Id("[k] [kernel]");
  }
  if (pprof) {
    uint64_t mid = 0;
    if (km != nullptr) {
      mid = pprof->AddMapping(
          {km->start, km->end, km->pgoff, km->path, km->build_id ? km->build_id->ToHex() : ""});
    }
    f.location = pprof->AddLocation(mid, ip, frames);
  }
  if (leaf && sym != nullptr && !pprof)
    kernel_leaves.emplace(ip, f);
  return f;
}

Status Report::Impl::OnSample(const SampleContext& ctx, SampleCoverage& cov) {
  const SampleRecord& s = ctx.sample;
  const EventAttr* attr = &ctx.attr;
  const std::vector<EventAttr>& attrs = reader->attrs();
  // The event's index, for its table and its pprof value. The session hands out the reader's
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
  // following addresses are in; without one, the sample ip alone.
  std::vector<std::pair<uint64_t, bool>> ips;  // (address, kernel)
  if (s.callchain.size() > 0) {
    bool in_kernel = kernel_mode;
    for (uint64_t i = 0; i < s.callchain.size() && ips.size() < kMaxFrames; i++) {
      uint64_t a = s.callchain[i];
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
  if (ips.empty())
    ips.emplace_back(s.ip, kernel_mode);

  std::vector<uint64_t> locs;
  Frame leaf;
  for (size_t i = 0; i < ips.size(); i++) {
    auto [a, k] = ips[i];
    Frame f;
    if (k) {
      if (!kallsyms_decided)
        DecideKallsyms(cov, a);
      f = ResolveKernel(a, i == 0, cov);
    } else if (const Mapping* m = i == 0 ? ctx.mapping : session->Find(pid, a, false)) {
      f = ResolveUser(*m, a, i == 0);
    } else {
      if (i == 0) {
        f.dso = names.Id("[unknown]");
        f.sym = names.Id("[.] " + Hex(a));
      }
      if (pprof)
        f.location = pprof->AddLocation(0, a, {});
    }
    if (i == 0)
      leaf = f;
    if (pprof)
      locs.push_back(f.location);
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
      case BuildIdSource::kNone: cov.none++; break;
    }
  } else {
    cov.unmapped++;
  }

  EventTable& t = events[ev];
  row_key.clear();
  for (SortKey k : options.sort_keys) {
    switch (k) {
      case SortKey::kComm: row_key.push_back(names.Id(session->CommOf(pid))); break;
      case SortKey::kPid:
        row_key.push_back(names.Id(std::to_string(pid) + ":" + session->CommOf(pid)));
        break;
      case SortKey::kDso: row_key.push_back(leaf.dso); break;
      case SortKey::kSym: row_key.push_back(leaf.sym); break;
    }
  }
  Row& row = t.rows[row_key];  // copies the key only for a new row
  row.samples++;
  row.period += period;
  t.samples++;
  t.period += period;

  if (pprof) {
    std::vector<int64_t> values(attrs.size() + 1, 0);
    values[0] = 1;
    values[ev + 1] = static_cast<int64_t>(period);
    return pprof->AddSample(locs, values, {{"pid", pid}, {"tid", s.sample_id.tid}});
  }
  return Ok();
}

Report::~Report() = default;

Result<std::unique_ptr<Report>> Report::Build(const PerfDataReader& reader,
                                              const ReportOptions& options) {
  std::unique_ptr<Report> rep(new Report());
  rep->impl_ = std::make_unique<Impl>();
  Impl& im = *rep->impl_;
  im.reader = &reader;
  im.options = options;
  auto sym = Symbolizer::Create(options.symbolizer);
  if (!sym.ok())
    return sym.error();
  im.symbolizer = std::move(*sym);
  im.session = std::make_unique<Session>(reader);
  SampleCoverage& cov = rep->coverage_;
  cov.kallsyms_note = "no kernel samples";

  const std::vector<EventAttr>& attrs = reader.attrs();
  if (attrs.empty())
    return Error("attrs", "perf.data has no events");
  for (const EventAttr& a : attrs)
    im.events.push_back(EventTable{EventName(a), 0, 0, {}});
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

  uint64_t first_time = 0, last_time = 0;
  Status failed = Ok();
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
  });
  if (!st.ok())
    return st.error();
  if (!failed.ok())
    return failed.error();
  // perf's "Total Lost Samples" counts LOST_SAMPLES only; LOST records are ring-buffer
  // overruns, a count of events, not of samples.
  cov.lost = im.session->stats().lost_samples;
  if (im.pprof && last_time > first_time) {
    im.pprof->SetTime(0, static_cast<int64_t>(last_time - first_time));
  }
  rep->symbol_coverage_ = im.symbolizer->Coverage();
  return rep;
}

void Report::PrintTable(FILE* out) const {
  const Impl& im = *impl_;
  fprintf(out, "# Total Lost Samples: %" PRIu64 "\n#\n", coverage_.lost);
  for (const EventTable& t : im.events) {
    if (t.samples == 0 && im.events.size() > 1)
      continue;
    fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", t.samples, t.name.c_str());
    fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", t.period);

    std::vector<size_t> widths;
    for (SortKey k : im.options.sort_keys)
      widths.push_back(strlen(InfoOf(k).title));
    std::vector<std::pair<std::vector<std::string_view>, const Row*>> rows;
    for (const auto& [ids, row] : t.rows) {
      std::vector<std::string_view> key;
      for (size_t i = 0; i < ids.size(); i++) {
        key.push_back(im.names[ids[i]]);
        widths[i] = std::max(widths[i], key[i].size());
      }
      rows.emplace_back(std::move(key), &row);
    }
    // Heaviest first; rows of equal weight in the order of their cells' text.
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      if (a.second->period != b.second->period)
        return a.second->period > b.second->period;
      return a.first < b.first;
    });
    fprintf(out, "# Overhead  Samples");
    for (size_t i = 0; i < widths.size(); i++) {
      fprintf(out, "  %-*s", static_cast<int>(widths[i]), InfoOf(im.options.sort_keys[i]).title);
    }
    fprintf(out, "\n# ........  .......");
    for (size_t w : widths)
      fprintf(out, "  %s", std::string(w, '.').c_str());
    fprintf(out, "\n#\n");
    for (const auto& [key, row] : rows) {
      double pct = t.period == 0
                       ? 0.0
                       : 100.0 * static_cast<double>(row->period) / static_cast<double>(t.period);
      fprintf(out, "  %7.2f%%  %7" PRIu64, pct, row->samples);
      for (size_t i = 0; i < key.size(); i++) {
        bool last = i + 1 == key.size();
        fprintf(out, "  %-*.*s", last ? 0 : static_cast<int>(widths[i]),
                static_cast<int>(key[i].size()), key[i].data());
      }
      fprintf(out, "\n");
    }
    fprintf(out, "\n");
  }
}

void Report::PrintCoverage(FILE* out) const {
  const SampleCoverage& c = coverage_;
  auto pct = [&](uint64_t n) {
    return c.total == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(c.total);
  };
  fprintf(out, "# Build-ID coverage: %" PRIu64 " samples\n", c.total);
  fprintf(out, "#   %-28s %8s %8s\n", "mapping's build ID from", "samples", "percent");
  const std::pair<const char*, uint64_t> rows[] = {
      {"kernel record (MMAP2)", c.kernel_record},
      {"synthesized (MMAP2)", c.synthesized},
      {"file fallback (ID table)", c.file},
      {"bpf (at sample time)", c.bpf},
      {"none", c.none},
      {"kernel samples", c.kernel},
      {"outside any mapping", c.unmapped},
  };
  for (const auto& [name, n] : rows) {
    fprintf(out, "#   %-28s %8" PRIu64 " %7.2f%%\n", name, n, pct(n));
  }
  uint64_t user = c.total - c.kernel;
  uint64_t with_id = c.kernel_record + c.synthesized + c.file + c.bpf;
  fprintf(out, "#   user samples with a build ID: %.2f%%\n",
          user == 0 ? 0.0 : 100.0 * static_cast<double>(with_id) / static_cast<double>(user));
  fprintf(out, "#   kernel symbols: %s\n", c.kallsyms_note.c_str());
  const SymbolizerCoverage& s = symbol_coverage_;
  auto mods = [&](SymbolSource src) {
    auto it = s.modules_by_source.find(src);
    return it == s.modules_by_source.end() ? 0 : it->second;
  };
  fprintf(out,
          "#\n# Symbols by build ID (modules): path %d, .build-id dir %d, debug-dir %d, "
          "debuginfod %d, unsymbolized %d\n",
          mods(SymbolSource::kPath), mods(SymbolSource::kBuildIdDir), mods(SymbolSource::kDebugDir),
          mods(SymbolSource::kDebuginfod), mods(SymbolSource::kNone));
  fprintf(out, "#   recorded path with another build ID (mismatch, not used): %d\n",
          s.path_mismatches);
  fprintf(out, "#   recorded path missing: %d\n", s.path_missing);
  fprintf(out, "#   debuginfod queries: %d%s%s\n", s.debuginfod_queries,
          s.debuginfod_error.empty() ? "" : ", last error: ", s.debuginfod_error.c_str());
}

Status Report::WritePprof(const std::string& path) const {
  if (!impl_->pprof)
    return Error::Of(ErrorKind::kInvalidArgument, "--format pprof",
                     "report was built without pprof output");
  return impl_->pprof->WriteGzip(path);
}

}  // namespace pbid
