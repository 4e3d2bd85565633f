// SPDX-License-Identifier: GPL-2.0
#include "pbid/render/report_view.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "call_graph.h"
#include "frame_names.h"
#include "pbid/symbolize/id_table.h"

namespace pbid::render {

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

// perf's names for the parts of -g.
struct GraphModeName {
  GraphMode mode;
  const char* name;
};
constexpr GraphModeName kGraphModes[] = {
    {GraphMode::kGraph, "graph"},   {GraphMode::kFractal, "fractal"}, {GraphMode::kFlat, "flat"},
    {GraphMode::kFolded, "folded"}, {GraphMode::kNone, "none"},
};

constexpr size_t kMaxKeys = 8;
using EntryKey = std::array<uint32_t, kMaxKeys>;
uint32_t HashKey(const EntryKey& k) {
  uint64_t h = 0;
  for (uint32_t v : k)
    h = (h * 1000003u) ^ v;
  return IdTable::Fold(h);
}

// One line of the table: a combination of sort-key values, its self and children periods and
// where its call graph comes from.
struct Entry {
  EntryKey key{};
  uint32_t frame = 0;  // the frame its dso and symbol cells show
  int32_t pid = 0;
  uint32_t comm = 0;
  // perf's --comms hides an entry when the sample that made it is of another command; the
  // samples that come later add to it whatever their command (perf filters samples, then
  // merges them into entries).
  bool hidden = false;
  // "[k]" or "[.]": for an address outside every mapping perf keeps the mark of the frame
  // it looked at before (it sets the mark only when a mapping is found).
  bool kernel_mark = false;
  uint64_t self = 0, self_samples = 0, acc = 0;
  // The stacks through it: (stack, position where its part starts); kWhole for the whole stack.
  std::vector<std::pair<uint32_t, uint32_t>> chains;
};
constexpr uint32_t kWhole = UINT32_MAX;

class EventView {
 public:
  EventView(const Profile& profile, const EventProfile& event, const ViewOptions& options,
            bool children, GraphOrder order, bool graph)
      : profile_(profile),
        event_(event),
        options_(options),
        children_(children),
        order_(order),
        graph_(graph) {}

  void Build();
  void Write(FILE* out);

 private:
  uint32_t EntryOf(const ProfileStack& s, uint32_t frame, bool kernel_mark);
  // Appends the cell of key k of entry e to out.
  void AppendCell(const Entry& e, SortKey k, std::string& out) const;
  void WriteGraph(const Entry& e, FILE* out) const;

  const Profile& profile_;
  const EventProfile& event_;
  const ViewOptions& options_;
  const bool children_;
  const GraphOrder order_;
  const bool graph_;
  std::vector<Entry> entries_;
  IdTable ids_;  // entries_ by key
  uint32_t unknown_dso_ = UINT32_MAX;
};

uint32_t EventView::EntryOf(const ProfileStack& s, uint32_t frame, bool kernel_mark) {
  EntryKey key{};
  const ProfileFrame& f = profile_.Frame(frame);
  for (size_t i = 0; i < options_.sort_keys.size() && i < kMaxKeys; i++) {
    switch (options_.sort_keys[i]) {
      case SortKey::kComm: key[i] = s.comm; break;
      case SortKey::kPid: key[i] = static_cast<uint32_t>(s.pid); break;
      case SortKey::kDso: key[i] = f.dso; break;
      case SortKey::kSym: key[i] = frame; break;
    }
  }
  auto [id, added] = ids_.Insert(HashKey(key), static_cast<uint32_t>(entries_.size()),
                                 [&](uint32_t i) { return entries_[i].key == key; });
  if (added) {
    Entry e;
    e.key = key;
    e.frame = frame;
    e.pid = s.pid;
    e.comm = s.comm;
    e.kernel_mark = kernel_mark;
    e.hidden = !options_.comms.empty() && std::find(options_.comms.begin(), options_.comms.end(),
                                                    profile_.Name(s.comm)) == options_.comms.end();
    entries_.push_back(std::move(e));
  }
  return id;
}

// perf's hist entries: the sample's own function gets the self period and, with children, the
// entries of every other function on the stack get it once each (a recursion counts once, where
// the walk in the graph's order meets it first).
void EventView::Build() {
  for (uint32_t i = 0; i < profile_.names().size(); i++) {
    if (profile_.Name(i) == "[unknown]") {
      unknown_dso_ = i;
      break;
    }
  }
  // Without children an entry is a stack's own entry: at most one each.
  if (!children_) {
    entries_.reserve(event_.stacks.size());
    ids_.Reserve(event_.stacks.size());
  }
  std::vector<uint32_t> seen;
  for (uint32_t si = 0; si < event_.stacks.size(); si++) {
    const ProfileStack& s = event_.stacks[si];
    const uint32_t* f = profile_.StackFrames(s);
    bool mark = profile_.Frame(s.self).kind == FrameKind::kKernel;
    uint32_t self = EntryOf(s, s.self, mark);
    {
      Entry& e = entries_[self];
      e.self += s.period;
      e.self_samples += s.samples;
      if (children_)
        e.acc += s.period;
      if (graph_)
        e.chains.emplace_back(si, kWhole);
    }
    if (!children_)
      continue;
    seen.assign(1, self);
    for (uint32_t n = 0; n < s.depth; n++) {
      uint32_t pos = order_ == GraphOrder::kCaller ? s.depth - 1 - n : n;
      const ProfileFrame& fr = profile_.Frame(f[pos]);
      if (fr.named() || fr.dso != unknown_dso_)
        mark = fr.kind == FrameKind::kKernel;
      uint32_t id = EntryOf(s, f[pos], mark);
      if (std::find(seen.begin(), seen.end(), id) != seen.end())
        continue;
      seen.push_back(id);
      Entry& e = entries_[id];
      e.acc += s.period;
      if (graph_)
        e.chains.emplace_back(si, pos);
    }
  }
}

void EventView::AppendCell(const Entry& e, SortKey k, std::string& out) const {
  const ProfileFrame& f = profile_.Frame(e.frame);
  switch (k) {
    case SortKey::kComm: out += profile_.Name(e.comm); return;
    case SortKey::kPid:
      out += std::to_string(e.pid);
      out += ':';
      out += profile_.Name(e.comm);
      return;
    case SortKey::kDso: {
      // The file by its path, as perf keeps files apart; shown by its name, as perf shows it.
      const std::string& path = profile_.Name(f.dso);
      out.append(path, path.rfind('/') + 1, std::string::npos);
      return;
    }
    case SortKey::kSym: AppendSymbolCell(profile_, e.frame, e.kernel_mark, out); return;
  }
}

void EventView::WriteGraph(const Entry& e, FILE* out) const {
  CallTree tree;
  for (auto [si, pos] : e.chains) {
    const ProfileStack& s = event_.stacks[si];
    const uint32_t* f = profile_.StackFrames(s);
    if (order_ == GraphOrder::kCaller) {
      // From the root (the last frame) toward the leaf, ending at the leaf.
      uint32_t start = pos == kWhole ? s.depth - 1 : pos;
      tree.Add(f + start, start + 1, -1, s.period);
    } else {
      uint32_t start = pos == kWhole ? 0 : pos;
      tree.Add(f + start, s.depth - start, 1, s.period);
    }
  }
  CallTree::Print p;
  p.profile = &profile_;
  p.options = &options_.call_graph;
  p.total = event_.period;
  p.callchain_total = event_.period;
  p.entry = children_ ? e.acc : e.self;
  // perf leaves out the chain's first frame when the table is sorted by symbol first: the
  // entry's line already names it.
  p.skip_first = !options_.sort_keys.empty() && options_.sort_keys[0] == SortKey::kSym;
  tree.Write(p, out);
}

void EventView::Write(FILE* out) {
  const double total = static_cast<double>(event_.period);
  auto pct = [&](uint64_t v) { return total == 0 ? 0.0 : 100.0 * static_cast<double>(v) / total; };
  // The rows shown, each with its weights and its cells, which the sort below, the widths and
  // the lines read: the cells of all rows one after the other in one text, row r's cell of key
  // i from ends[r.first + i - 1] (0 for the very first) to ends[r.first + i].
  const size_t keys = options_.sort_keys.size();
  struct Row {
    uint64_t acc, self;
    const Entry* e;
    size_t first;  // index in ends of its first cell
  };
  // Room for every entry's row and cells, and for cells of a typical length, reserved at once:
  // only the part written is ever touched, and nothing is copied (nor held twice) as they grow.
  std::vector<Row> sorted;
  sorted.reserve(entries_.size());
  std::string text;
  text.reserve(entries_.size() * keys * 64);
  std::vector<size_t> ends;
  ends.reserve(entries_.size() * keys);
  std::vector<size_t> widths;
  for (SortKey k : options_.sort_keys)
    widths.push_back(strlen(InfoOf(k).title));
  for (const Entry& e : entries_) {
    if (e.hidden || pct(children_ ? e.acc : e.self) < options_.percent_limit)
      continue;
    sorted.push_back(Row{e.acc, e.self, &e, ends.size()});
    for (size_t i = 0; i < keys; i++) {
      size_t start = text.size();
      AppendCell(e, options_.sort_keys[i], text);
      ends.push_back(text.size());
      widths[i] = std::max(widths[i], text.size() - start);
    }
  }
  auto cell = [&](const Row& r, size_t i) {
    size_t at = r.first + i;
    size_t start = at == 0 ? 0 : ends[at - 1];
    return std::string_view(text).substr(start, ends[at] - start);
  };
  // Heaviest first; rows of equal weight in the order of their cells' text.
  std::sort(sorted.begin(), sorted.end(), [&](const Row& a, const Row& b) {
    if (children_ && a.acc != b.acc)
      return a.acc > b.acc;
    if (a.self != b.self)
      return a.self > b.self;
    for (size_t i = 0; i < keys; i++) {
      int c = cell(a, i).compare(cell(b, i));
      if (c != 0)
        return c < 0;
    }
    return false;
  });
  fprintf(out, children_ ? "# Children      Self  Samples" : "# Overhead  Samples");
  for (size_t i = 0; i < widths.size(); i++)
    fprintf(out, "  %-*s", static_cast<int>(widths[i]), InfoOf(options_.sort_keys[i]).title);
  fprintf(out, children_ ? "\n# ........  ........  ......." : "\n# ........  .......");
  for (size_t w : widths)
    fprintf(out, "  %s", std::string(w, '.').c_str());
  fprintf(out, "\n#\n");
  std::string line;
  for (const Row& r : sorted) {
    const Entry* e = r.e;
    char head[96];
    int n = children_ ? snprintf(head, sizeof(head), "  %8.2f%%  %7.2f%%  %7" PRIu64, pct(e->acc),
                                 pct(e->self), e->self_samples)
                      : snprintf(head, sizeof(head), "  %7.2f%%  %7" PRIu64, pct(e->self),
                                 e->self_samples);
    line.assign(head, static_cast<size_t>(n));
    // Each cell as "  %-*s" writes it: padded to its column's width, but for the last.
    for (size_t i = 0; i < keys; i++) {
      std::string_view c = cell(r, i);
      line += "  ";
      line += c;
      if (i + 1 != keys && c.size() < widths[i])
        line.append(widths[i] - c.size(), ' ');
    }
    line += '\n';
    fwrite(line.data(), 1, line.size(), out);
    if (graph_)
      WriteGraph(*e, out);
  }
  fprintf(out, "\n");
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
    if (keys.size() == kMaxKeys)
      return Error::Of(ErrorKind::kInvalidArgument, "--sort", "more than 8 sort keys");
    keys.push_back(info->key);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return keys;
}

Result<CallGraphOptions> ParseCallGraph(const std::string& spec, CallGraphOptions base) {
  CallGraphOptions o = base;
  bool threshold_seen = false;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string part =
        spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    bool known = false;
    for (const GraphModeName& m : kGraphModes) {
      if (part == m.name) {
        o.mode = m.mode;
        known = true;
      }
    }
    if (part == "caller" || part == "callee") {
      o.order = part == "caller" ? GraphOrder::kCaller : GraphOrder::kCallee;
      known = true;
    } else if (part == "function" || part == "percent") {
      known = true;  // the only key and value this report shows
    } else if (!known && !part.empty() &&
               (std::isdigit(static_cast<unsigned char>(part[0])) || part[0] == '.')) {
      char* end = nullptr;
      double v = strtod(part.c_str(), &end);
      if (end == part.c_str() || *end != '\0' || v < 0) {
        return Error::Of(ErrorKind::kInvalidArgument, "--call-graph", "bad number '" + part + "'");
      }
      if (!threshold_seen) {
        o.threshold = v;
        threshold_seen = true;
      } else {
        o.print_limit = static_cast<unsigned>(v);
      }
      known = true;
    }
    if (!known) {
      return Error::Of(ErrorKind::kInvalidArgument, "--call-graph",
                       "'" + part +
                           "' is not understood (graph, fractal, flat, folded, none; a "
                           "threshold; caller or callee; function; percent)");
    }
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return o;
}

void WriteReport(const Profile& profile, const SampleCoverage& coverage, const ViewOptions& options,
                 FILE* out) {
  fprintf(out, "# Total Lost Samples: %" PRIu64 "\n#\n", coverage.lost);
  const auto& events = profile.events();
  for (const EventProfile& ev : events) {
    if (ev.samples == 0 && events.size() > 1)
      continue;
    const bool children = options.children.value_or(ev.callchains) && ev.callchains;
    const GraphOrder order =
        options.call_graph.order.value_or(children ? GraphOrder::kCaller : GraphOrder::kCallee);
    const bool graph = ev.callchains && options.call_graph.mode != GraphMode::kNone;
    fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", ev.samples, ev.name.c_str());
    fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", ev.period);
    EventView view(profile, ev, options, children, order, graph);
    view.Build();
    view.Write(out);
  }
}

void WriteCoverage(const SampleCoverage& c, const SymbolizerCoverage& s, FILE* out) {
  auto pct = [&](uint64_t n) {
    return c.total == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(c.total);
  };
  fprintf(out, "# Build-ID coverage: %" PRIu64 " samples\n", c.total);
  fprintf(out, "#   %-42s %8s %8s\n", "mapping's build ID from", "samples", "percent");
  const std::pair<const char*, uint64_t> rows[] = {
      {"kernel record (MMAP2)", c.kernel_record},
      {"synthesized (MMAP2)", c.synthesized},
      {"file fallback (ID table)", c.file},
      {"bpf (at sample time)", c.bpf},
      {"no GNU build ID, identified by Go build ID", c.go_build_id},
      {"identified by file hash only", c.file_hash_only},
      {"none", c.none},
      {"kernel samples", c.kernel},
      {"outside any mapping", c.unmapped},
  };
  for (const auto& [name, n] : rows) {
    fprintf(out, "#   %-42s %8" PRIu64 " %7.2f%%\n", name, n, pct(n));
  }
  uint64_t user = c.total - c.kernel;
  uint64_t with_id = c.kernel_record + c.synthesized + c.file + c.bpf;
  fprintf(out, "#   user samples with a build ID: %.2f%%\n",
          user == 0 ? 0.0 : 100.0 * static_cast<double>(with_id) / static_cast<double>(user));
  fprintf(out, "#   kernel symbols: %s\n", c.kallsyms_note.c_str());
  if (c.unwound != 0) {
    // Where the unwinding of each sample's user stack stopped: only "complete" reached the
    // outermost frame.
    fprintf(out,
            "#   DWARF unwinding: %" PRIu64 " samples; complete %" PRIu64 ", no CFI %" PRIu64
            ", no ELF for the build ID %" PRIu64 ", stack copy too short %" PRIu64
            ", other %" PRIu64 "\n",
            c.unwound, c.unwind_stops[0], c.unwind_stops[1], c.unwind_stops[2], c.unwind_stops[3],
            c.unwind_stops[4]);
  }
  auto mods = [&](SymbolSource src) {
    auto it = s.modules_by_source.find(src);
    return it == s.modules_by_source.end() ? 0 : it->second;
  };
  fprintf(out,
          "#\n# Symbols by build ID (modules): path %d, .build-id dir %d, debug-dir %d, "
          "debuginfod %d, running vdso %d, unsymbolized %d\n",
          mods(SymbolSource::kPath), mods(SymbolSource::kBuildIdDir), mods(SymbolSource::kDebugDir),
          mods(SymbolSource::kDebuginfod), mods(SymbolSource::kRunningVdso),
          mods(SymbolSource::kNone));
  fprintf(out, "#   recorded path with another build ID (mismatch, not used): %d\n",
          s.path_mismatches);
  fprintf(out, "#   recorded path missing: %d\n", s.path_missing);
  fprintf(out, "#   debuginfod queries: %d%s%s", s.debuginfod_queries,
          s.debuginfod_error.empty() ? "" : ", last error: ", s.debuginfod_error.c_str());
  if (s.debuginfod_skipped != 0)
    fprintf(out, "; skipped %d (%s)", s.debuginfod_skipped, s.debuginfod_skip_reason.c_str());
  fputc('\n', out);
}

void WriteFolded(const Profile& profile, FILE* out) {
  for (const EventProfile& ev : profile.events()) {
    if (ev.samples == 0)
      continue;
    std::string line;  // one buffer for every line
    for (const ProfileStack& s : ev.stacks) {
      const uint32_t* f = profile.StackFrames(s);
      line = profile.Name(s.comm);
      for (uint32_t i = s.depth; i-- > 0;) {
        line += ';';
        AppendChainName(profile, f[i], line);
      }
      char count[24];
      int n = snprintf(count, sizeof(count), " %" PRIu64 "\n", s.samples);
      line.append(count, static_cast<size_t>(n));
      fwrite(line.data(), 1, line.size(), out);
    }
    break;  // the first event with samples, as flamegraph.pl takes one
  }
}

namespace {
const EventProfile* FirstWithSamples(const Profile& profile) {
  for (const EventProfile& ev : profile.events()) {
    if (ev.samples != 0)
      return &ev;
  }
  return nullptr;
}
}  // namespace

std::vector<FlameStack> FlameStacks(const Profile& profile) {
  std::vector<FlameStack> out;
  const EventProfile* ev = FirstWithSamples(profile);
  if (ev == nullptr)
    return out;
  for (const ProfileStack& s : ev->stacks) {
    FlameStack fs;
    fs.weight = s.samples;
    fs.frames.push_back(FlameFrame{profile.Name(s.comm), FrameKind::kUser});
    const uint32_t* f = profile.StackFrames(s);
    for (uint32_t i = s.depth; i-- > 0;) {
      fs.frames.push_back(FlameFrame{ChainName(profile, f[i]), profile.Frame(f[i]).kind});
    }
    out.push_back(std::move(fs));
  }
  return out;
}

FlameGraphOptions FlameOptionsFor(const Profile& profile, const std::string& input) {
  FlameGraphOptions o;
  const EventProfile* ev = FirstWithSamples(profile);
  o.title = "perf-buildid report";
  o.subtitle = (ev != nullptr ? ev->name : std::string("no samples")) + " of " + input;
  return o;
}

}  // namespace pbid::render
