// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/report.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cinttypes>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "pbid/build_id.h"
#include "pbid/elf_build_id.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/symbolize/kallsyms.h"
#include "pbid/symbolize/pprof_writer.h"
#include "process_maps.h"

namespace pbid {

namespace {

constexpr uint64_t kPerfContextKernel = static_cast<uint64_t>(-128);  // PERF_CONTEXT_KERNEL
constexpr uint64_t kPerfContextUser = static_cast<uint64_t>(-512);    // PERF_CONTEXT_USER
constexpr size_t kMaxFrames = 512;  // PERF_MAX_STACK_DEPTH-like bound on corrupt chains

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

// The pprof value type of an event: cpu-clock periods are nanoseconds.
PprofValueType EventValueType(const EventAttr& a) {
  const perf_event_attr& attr = a.attr;
  if (attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_CPU_CLOCK) {
    return {"cpu", "nanoseconds"};
  }
  if (attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_TASK_CLOCK) {
    return {"task-clock", "nanoseconds"};
  }
  if (attr.type == PERF_TYPE_HARDWARE && attr.config == PERF_COUNT_HW_CPU_CYCLES) {
    return {"cycles", "count"};
  }
  if (attr.type == PERF_TYPE_HARDWARE && attr.config == PERF_COUNT_HW_INSTRUCTIONS) {
    return {"instructions", "count"};
  }
  return {a.name.empty() ? "events" : a.name, "count"};
}

std::string EventName(const EventAttr& a) {
  if (!a.name.empty()) return a.name;
  PprofValueType t = EventValueType(a);
  return t.type == "cpu" ? "cpu-clock" : t.type;
}

// Records synthesized by a recorder (for processes that already ran) carry a zero sample id
// block: perf and perf-buildid both write them with id 0 and time 0, kernel records never do.
bool LooksSynthesized(const SampleId& sid, const EventAttr* attr) {
  if (attr == nullptr || !attr->attr.sample_id_all) return false;
  const uint64_t id_bits = PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER;
  if ((attr->attr.sample_type & id_bits) == 0 && (attr->attr.sample_type & PERF_SAMPLE_TIME) == 0) {
    return false;  // nothing to tell them apart by
  }
  bool id_zero = (attr->attr.sample_type & id_bits) == 0 || sid.id == 0;
  bool time_zero = (attr->attr.sample_type & PERF_SAMPLE_TIME) == 0 || sid.time == 0;
  return id_zero && time_zero;
}

struct Frame {
  std::string dso;
  std::string sym;  // "[.] name" / "[k] name" as perf prints
  uint64_t location = 0;
};

struct Row {
  uint64_t samples = 0;
  uint64_t period = 0;
};

struct EventTable {
  std::string name;
  uint64_t samples = 0;
  uint64_t period = 0;
  std::map<std::vector<std::string>, Row> rows;
};

}  // namespace

struct Report::Impl {
  ReportOptions options;
  std::unique_ptr<Symbolizer> symbolizer;
  std::optional<Kallsyms> kallsyms;
  ProcessMaps maps;
  std::unordered_map<uint32_t, std::string> comms;
  std::unordered_map<std::string, BuildId> table_ids;  // HEADER_BUILD_ID by filename
  std::vector<EventTable> events;
  std::unique_ptr<PprofBuilder> pprof;
  std::map<std::pair<BuildId, uint64_t>, Symbolization> sym_cache;
  uint64_t kernel_mapping = 0;  // pprof mapping id of the kernel, 0 if none seen

  Frame ResolveUser(const MappedFile* m, uint64_t ip, bool leaf);
  Frame ResolveKernel(uint64_t ip);
  Status AddMmap(uint32_t pid, MappedFile mf);
};

Result<std::vector<std::string>> ParseSortKeys(const std::string& list) {
  static const std::set<std::string> kKnown = {"comm", "pid", "dso", "sym"};
  std::vector<std::string> keys;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string key = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (kKnown.count(key) == 0) {
      return Error("--sort", "unknown sort key '" + key + "' (known: comm, pid, dso, sym)");
    }
    keys.push_back(key);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return keys;
}

Frame Report::Impl::ResolveUser(const MappedFile* m, uint64_t ip, bool leaf) {
  Frame f;
  f.dso = Basename(m->filename);
  uint64_t offset = m->FileOffset(ip);
  // A caller's address is the return address: the call instruction is just before it.
  uint64_t lookup = leaf || offset == 0 ? offset : offset - 1;
  Symbolization s;
  if (m->build_id) {
    auto key = std::make_pair(*m->build_id, lookup);
    auto it = sym_cache.find(key);
    if (it == sym_cache.end()) {
      auto r = symbolizer->SymbolizeOffset(m->build_id, m->filename, lookup);
      // A corrupt debug file must not end the report: the frame stays unsymbolized.
      if (r.ok()) s = *r;
      it = sym_cache.emplace(key, s).first;
    }
    s = it->second;
  } else {
    s.status = SymbolizeStatus::kNoBuildId;
  }
  if (s.status == SymbolizeStatus::kOk) {
    f.sym = "[.] " + s.frames.back().function;
  } else {
    f.sym = "[.] " + Hex(offset);
  }
  if (pprof) {
    uint64_t mid = pprof->AddMapping({m->start, m->end(), m->pgoff, m->filename,
                                      m->build_id ? m->build_id->ToHex() : ""});
    f.location = pprof->AddLocation(mid, ip, s.status == SymbolizeStatus::kOk
                                                 ? s.frames
                                                 : std::vector<SourceFrame>{});
  }
  return f;
}

Frame Report::Impl::ResolveKernel(uint64_t ip) {
  Frame f;
  std::optional<Kallsyms::Symbol> sym;
  if (kallsyms) sym = kallsyms->Lookup(ip);
  if (sym) {
    f.dso = sym->module.empty() ? "[kernel.kallsyms]" : "[" + sym->module + "]";
    f.sym = "[k] " + sym->name;
  } else {
    // No trustworthy kernel symbols: one [kernel] row; pprof keeps the addresses.
    f.dso = "[kernel]";
    f.sym = "[k] [kernel]";
  }
  if (pprof) {
    std::vector<SourceFrame> frames;
    if (sym) frames.push_back(SourceFrame{sym->name, "", "", 0, 0});
    const MappedFile* km = maps.Find(ProcessMaps::kKernelPid, ip);
    uint64_t mid = 0;
    if (km != nullptr) {
      mid = pprof->AddMapping({km->start, km->end(), km->pgoff, km->filename,
                               km->build_id ? km->build_id->ToHex() : ""});
    }
    f.location = pprof->AddLocation(mid, ip, frames);
  }
  return f;
}

Report::~Report() = default;

Result<std::unique_ptr<Report>> Report::Build(const PerfDataReader& reader,
                                              const ReportOptions& options) {
  std::unique_ptr<Report> rep(new Report());
  rep->impl_ = std::make_unique<Impl>();
  Impl& im = *rep->impl_;
  im.options = options;
  auto sym = Symbolizer::Create(options.symbolizer);
  if (!sym.ok()) return sym.error();
  im.symbolizer = std::move(*sym);

  // Build IDs the recorder (or perf) put into the HEADER_BUILD_ID table, by file name.
  std::optional<BuildId> recorded_kernel_id;
  if (reader.features().build_ids) {
    for (const BuildIdEntry& e : *reader.features().build_ids) {
      im.table_ids.emplace(e.filename, e.build_id);
      if ((e.misc & kMiscCpumodeMask) == PERF_RECORD_MISC_KERNEL &&
          e.filename == "[kernel.kallsyms]") {
        recorded_kernel_id = e.build_id;
      }
    }
  }

  SampleCoverage& cov = rep->coverage_;
  const std::vector<EventAttr>& attrs = reader.attrs();
  if (attrs.empty()) return Error("attrs", "perf.data has no events");
  for (const EventAttr& a : attrs) im.events.push_back(EventTable{EventName(a), 0, 0, {}});
  if (options.want_pprof) {
    std::vector<PprofValueType> types = {{"samples", "count"}};
    for (const EventAttr& a : attrs) types.push_back(EventValueType(a));
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

  // perf.data holds each CPU's buffer in turn, so a sample can precede, in the file, the MMAP2
  // of its mapping recorded on another CPU. Process records in time order, as perf does;
  // records without a time (synthesized, or no PERF_SAMPLE_TIME) keep their file order first.
  std::vector<std::pair<uint64_t, RecordView>> ordered;
  ordered.reserve(reader.record_count());
  for (const RecordView& rv : reader.records()) {
    const EventAttr* attr = reader.AttrForRecord(rv);
    uint64_t t = 0;
    if (attr != nullptr && (attr->attr.sample_type & PERF_SAMPLE_TIME) != 0) {
      if (rv.header.type == PERF_RECORD_SAMPLE) {
        auto s = ParseSample(rv, *attr);
        if (!s.ok()) return s.error();
        t = s->sample_id.time;
      } else if (rv.header.type < PERF_RECORD_MAX && attr->attr.sample_id_all) {
        auto sid = ParseSampleId(rv, attr);
        if (sid.ok()) t = sid->time;
      }
    }
    if (rv.header.type == PERF_RECORD_MMAP2 && !recorded_kernel_id) {
      auto m = ParseMmap2(rv, attr);
      if (m.ok() && m->has_build_id && m->pid == ProcessMaps::kKernelPid &&
          m->filename.substr(0, 17) == "[kernel.kallsyms]") {
        recorded_kernel_id = m->build_id;
      }
    }
    ordered.emplace_back(t, rv);
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  // Kernel symbols are only trusted for the kernel that was recorded: the same build ID, or,
  // when the file has none, the same release string.
  auto ks = Kallsyms::Load(options.kallsyms_path);
  if (!ks.ok()) {
    cov.kallsyms_note = "kallsyms unreadable (" + ks.error().ToString() + ")";
  } else if (!ks->usable()) {
    cov.kallsyms_note = "kallsyms addresses hidden (kptr_restrict; run as root)";
  } else {
    auto running = KernelBuildId();
    bool same = false;
    if (recorded_kernel_id) {
      same = running.ok() && running->has_value() && **running == *recorded_kernel_id;
      cov.kallsyms_note = same ? "kallsyms of the running kernel (build ID matches)"
                               : "recorded kernel build ID differs from the running kernel";
    } else if (reader.features().osrelease) {
      utsname u;
      same = uname(&u) == 0 && *reader.features().osrelease == u.release;
      cov.kallsyms_note = same ? "kallsyms of the running kernel (same release, no kernel build ID recorded)"
                               : "recorded on another kernel release (" +
                                     *reader.features().osrelease + ")";
    } else {
      cov.kallsyms_note = "no kernel build ID or release recorded: kallsyms not used";
    }
    if (same) {
      im.kallsyms = std::move(*ks);
      cov.kallsyms_used = true;
    }
  }


  uint64_t first_time = 0, last_time = 0;
  for (const auto& [time, rv] : ordered) {
    const EventAttr* attr = reader.AttrForRecord(rv);
    switch (rv.header.type) {
      case PERF_RECORD_MMAP: {
        auto r = ParseMmap(rv, attr);
        if (!r.ok()) return r.error();
        MappedFile mf{r->start, r->len, r->pgoff, 0, std::string(r->filename), std::nullopt,
                      BuildIdSource::kNone};
        if (auto it = im.table_ids.find(mf.filename); it != im.table_ids.end()) {
          mf.build_id = it->second;
          mf.source = BuildIdSource::kFile;
        }
        im.maps.Add(r->pid, mf);
        break;
      }
      case PERF_RECORD_MMAP2: {
        auto r = ParseMmap2(rv, attr);
        if (!r.ok()) return r.error();
        MappedFile mf{r->start, r->len, r->pgoff, r->prot, std::string(r->filename),
                      std::nullopt, BuildIdSource::kNone};
        if (r->has_build_id) {
          mf.build_id = r->build_id;
          mf.source = LooksSynthesized(r->sample_id, attr) ? BuildIdSource::kSynthesized
                                                           : BuildIdSource::kKernelRecord;
        } else if (auto it = im.table_ids.find(mf.filename); it != im.table_ids.end()) {
          mf.build_id = it->second;
          mf.source = BuildIdSource::kFile;
        }
        im.maps.Add(r->pid, mf);
        break;
      }
      case PERF_RECORD_COMM: {
        auto r = ParseComm(rv, attr);
        if (!r.ok()) return r.error();
        im.comms[r->pid] = std::string(r->comm);
        break;
      }
      case PERF_RECORD_FORK: {
        auto r = ParseTask(rv, attr);
        if (!r.ok()) return r.error();
        im.maps.Fork(r->ppid, r->pid);
        if (im.comms.count(r->pid) == 0 && im.comms.count(r->ppid) != 0) {
          im.comms[r->pid] = im.comms[r->ppid];
        }
        break;
      }
      case PERF_RECORD_LOST: {
        auto r = ParseLost(rv, attr);
        if (!r.ok()) return r.error();
        cov.lost += r->lost;
        break;
      }
      case PERF_RECORD_LOST_SAMPLES: {
        auto r = ParseLostSamples(rv, attr);
        if (!r.ok()) return r.error();
        cov.lost += r->lost;
        break;
      }
      case kRecordHeaderBuildId: {  // pipe mode carries the table in the stream
        auto r = ParseHeaderBuildId(rv);
        if (!r.ok()) return r.error();
        im.table_ids.emplace(std::string(r->filename), r->build_id);
        break;
      }
      case PERF_RECORD_SAMPLE: {
        if (attr == nullptr) return Error("sample", rv.offset, "sample of an unknown event");
        auto r = ParseSample(rv, *attr);
        if (!r.ok()) return r.error();
        const SampleRecord& s = *r;
        size_t ev = static_cast<size_t>(attr - attrs.data());
        uint64_t period = (attr->attr.sample_type & PERF_SAMPLE_PERIOD) ? s.period
                          : attr->attr.freq                            ? 1
                                                                       : attr->attr.sample_period;
        if (s.sample_id.time != 0) {
          if (first_time == 0 || s.sample_id.time < first_time) first_time = s.sample_id.time;
          last_time = std::max(last_time, s.sample_id.time);
        }
        const uint32_t pid = s.sample_id.pid;
        const bool kernel_mode = s.cpumode == PERF_RECORD_MISC_KERNEL;

        // The frames: leaf first. With a callchain its context markers say which space the
        // following addresses are in; without one, the sample ip alone.
        std::vector<std::pair<uint64_t, bool>> ips;  // (address, kernel)
        if (s.callchain.size() > 0) {
          bool in_kernel = kernel_mode;
          for (uint64_t i = 0; i < s.callchain.size() && ips.size() < kMaxFrames; i++) {
            uint64_t a = s.callchain[i];
            if (a >= kContextMax) {
              if (a == kPerfContextKernel) in_kernel = true;
              else if (a == kPerfContextUser) in_kernel = false;
              continue;
            }
            ips.emplace_back(a, in_kernel);
          }
        }
        if (ips.empty()) ips.emplace_back(s.ip, kernel_mode);

        std::vector<uint64_t> locs;
        Frame leaf;
        for (size_t i = 0; i < ips.size(); i++) {
          auto [a, k] = ips[i];
          Frame f;
          if (k) {
            f = im.ResolveKernel(a);
          } else if (const MappedFile* m = im.maps.Find(pid, a)) {
            f = im.ResolveUser(m, a, i == 0);
          } else {
            f.dso = "[unknown]";
            f.sym = "[.] " + Hex(a);
            if (im.pprof) f.location = im.pprof->AddLocation(0, a, {});
          }
          if (i == 0) leaf = f;
          if (im.pprof) locs.push_back(f.location);
        }

        // Coverage is about the leaf: the mapping that got the sample.
        cov.total++;
        if (ips.front().second) {
          cov.kernel++;
        } else if (const MappedFile* m = im.maps.Find(pid, ips.front().first)) {
          switch (m->source) {
            case BuildIdSource::kKernelRecord: cov.kernel_record++; break;
            case BuildIdSource::kSynthesized: cov.synthesized++; break;
            case BuildIdSource::kFile: cov.file++; break;
            case BuildIdSource::kNone: cov.none++; break;
          }
        } else {
          cov.unmapped++;
        }

        EventTable& t = im.events[ev];
        std::vector<std::string> key;
        for (const std::string& k : options.sort_keys) {
          if (k == "dso") key.push_back(leaf.dso);
          else if (k == "sym") key.push_back(leaf.sym);
          else if (k == "pid") {
            auto c = im.comms.find(pid);
            key.push_back(std::to_string(pid) + ":" + (c == im.comms.end() ? "" : c->second));
          } else if (k == "comm") {
            auto c = im.comms.find(pid);
            key.push_back(c == im.comms.end() ? std::to_string(pid) : c->second);
          }
        }
        Row& row = t.rows[key];
        row.samples++;
        row.period += period;
        t.samples++;
        t.period += period;

        if (im.pprof) {
          std::vector<int64_t> values(attrs.size() + 1, 0);
          values[0] = 1;
          values[ev + 1] = static_cast<int64_t>(period);
          Status st = im.pprof->AddSample(locs, values,
                                          {{"pid", pid}, {"tid", s.sample_id.tid}});
          if (!st.ok()) return st.error();
        }
        break;
      }
      default:
        break;
    }
  }
  if (im.pprof && last_time > first_time) {
    im.pprof->SetTime(0, static_cast<int64_t>(last_time - first_time));
  }
  rep->symbol_coverage_ = im.symbolizer->Coverage();
  return rep;
}

void Report::PrintTable(FILE* out) const {
  const Impl& im = *impl_;
  static const std::map<std::string, std::string> kTitles = {
      {"dso", "Shared Object"}, {"sym", "Symbol"}, {"pid", "Pid:Command"}, {"comm", "Command"}};
  fprintf(out, "# Total Lost Samples: %" PRIu64 "\n#\n", coverage_.lost);
  for (const EventTable& t : im.events) {
    if (t.samples == 0 && im.events.size() > 1) continue;
    fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", t.samples, t.name.c_str());
    fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", t.period);

    std::vector<size_t> widths;
    for (const std::string& k : im.options.sort_keys) widths.push_back(kTitles.at(k).size());
    std::vector<std::pair<const std::vector<std::string>*, const Row*>> rows;
    for (const auto& [key, row] : t.rows) {
      rows.emplace_back(&key, &row);
      for (size_t i = 0; i < key.size(); i++) widths[i] = std::max(widths[i], key[i].size());
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second->period > b.second->period;
    });
    fprintf(out, "# Overhead  Samples");
    for (size_t i = 0; i < widths.size(); i++) {
      fprintf(out, "  %-*s", static_cast<int>(widths[i]), kTitles.at(im.options.sort_keys[i]).c_str());
    }
    fprintf(out, "\n# ........  .......");
    for (size_t w : widths) fprintf(out, "  %s", std::string(w, '.').c_str());
    fprintf(out, "\n#\n");
    for (const auto& [key, row] : rows) {
      double pct = t.period == 0 ? 0.0 : 100.0 * static_cast<double>(row->period) /
                                             static_cast<double>(t.period);
      fprintf(out, "  %7.2f%%  %7" PRIu64, pct, row->samples);
      for (size_t i = 0; i < key->size(); i++) {
        bool last = i + 1 == key->size();
        fprintf(out, "  %-*s", last ? 0 : static_cast<int>(widths[i]), (*key)[i].c_str());
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
      {"none", c.none},
      {"kernel samples", c.kernel},
      {"outside any mapping", c.unmapped},
  };
  for (const auto& [name, n] : rows) {
    fprintf(out, "#   %-28s %8" PRIu64 " %7.2f%%\n", name, n, pct(n));
  }
  uint64_t user = c.total - c.kernel;
  uint64_t with_id = c.kernel_record + c.synthesized + c.file;
  fprintf(out, "#   user samples with a build ID: %.2f%%\n",
          user == 0 ? 0.0 : 100.0 * static_cast<double>(with_id) / static_cast<double>(user));
  fprintf(out, "#   kernel symbols: %s\n", c.kallsyms_note.c_str());
  const SymbolizerCoverage& s = symbol_coverage_;
  auto mods = [&](SymbolSource src) {
    auto it = s.modules_by_source.find(src);
    return it == s.modules_by_source.end() ? 0 : it->second;
  };
  fprintf(out, "#\n# Symbols by build ID (modules): path %d, .build-id dir %d, debug-dir %d, "
               "debuginfod %d, not found %d\n",
          mods(SymbolSource::kPath), mods(SymbolSource::kBuildIdDir),
          mods(SymbolSource::kDebugDir), mods(SymbolSource::kDebuginfod),
          mods(SymbolSource::kNone));
  fprintf(out, "#   recorded path with another build ID (mismatch, not used): %d\n",
          s.path_mismatches);
  fprintf(out, "#   recorded path missing: %d\n", s.path_missing);
  fprintf(out, "#   debuginfod queries: %d%s%s\n", s.debuginfod_queries,
          s.debuginfod_error.empty() ? "" : ", last error: ", s.debuginfod_error.c_str());
}

Status Report::WritePprof(const std::string& path) const {
  if (!impl_->pprof) return Error("--format pprof", "report was built without pprof output");
  return impl_->pprof->WriteGzip(path);
}

}  // namespace pbid
