// SPDX-License-Identifier: GPL-2.0
#include "call_graph.h"

#include "frame_names.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pbid::render {

namespace {

constexpr int kMaxDepthBits = 63;  // the pipe mask has a bit per level; deeper levels get none

double Percent(uint64_t part, uint64_t total) {
  return total == 0 ? 0.0 : static_cast<double>(part) * 100.0 / static_cast<double>(total);
}

bool MaskHas(uint64_t mask, int bit) {
  return bit < kMaxDepthBits && (mask >> bit) & 1;
}

// Frame lists in the order of their names, frame by frame: what orders equal branches, so
// that the output depends neither on the order samples came in nor on when a frame was named.
bool NamesBefore(const Profile& profile, const std::vector<uint32_t>& a,
                 const std::vector<uint32_t>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); i++) {
    if (a[i] == b[i])
      continue;
    const int c = ChainName(profile, a[i]).compare(ChainName(profile, b[i]));
    if (c != 0)
      return c < 0;
  }
  return a.size() < b.size();
}

// Twelve columns and the margin: where perf starts a call-graph line.
void Margin(int margin, FILE* out) {
  fprintf(out, "%*s", 12 + margin, "");
}

}  // namespace

void CallTree::Add(const uint32_t* frames, size_t n, ptrdiff_t step, uint64_t period) {
  uint32_t at = 0;
  nodes_[0].cumul += period;
  for (size_t i = 0; i < n; i++) {
    uint32_t frame = frames[static_cast<ptrdiff_t>(i) * step];
    uint32_t next = 0;
    for (uint32_t c : nodes_[at].children) {
      if (nodes_[c].frame == frame) {
        next = c;
        break;
      }
    }
    if (next == 0) {
      next = static_cast<uint32_t>(nodes_.size());
      Node node;
      node.frame = frame;
      nodes_.push_back(std::move(node));
      nodes_[at].children.push_back(next);
    }
    at = next;
    nodes_[at].cumul += period;
  }
  nodes_[at].hit += period;
}

CallTree::Branch CallTree::BranchFrom(uint32_t node) const {
  Branch b;
  b.cumul = nodes_[node].cumul;
  uint32_t at = node;
  b.frames.push_back(nodes_[at].frame);
  while (nodes_[at].hit == 0 && nodes_[at].children.size() == 1) {
    at = nodes_[at].children[0];
    b.frames.push_back(nodes_[at].frame);
  }
  b.hit = nodes_[at].hit;
  b.last = at;
  return b;
}

uint64_t CallTree::ChildrenHit(uint32_t node) const {
  return nodes_[node].cumul - nodes_[node].hit;
}

// The branches below a node with at least min_hit, heaviest first; equal ones by name, so that
// the output does not depend on the order samples came in.
std::vector<CallTree::Branch> CallTree::Children(const Profile& profile, uint32_t node,
                                                 uint64_t min_hit) const {
  std::vector<Branch> out;
  for (uint32_t c : nodes_[node].children) {
    if (nodes_[c].cumul >= min_hit)
      out.push_back(BranchFrom(c));
  }
  std::stable_sort(out.begin(), out.end(), [&](const Branch& a, const Branch& b) {
    if (a.cumul != b.cumul)
      return a.cumul > b.cumul;
    return NamesBefore(profile, a.frames, b.frames);
  });
  return out;
}

void CallTree::Write(const Print& p, FILE* out) const {
  switch (p.options->mode) {
    case GraphMode::kGraph:
    case GraphMode::kFractal: WriteGraph(p, out); break;
    case GraphMode::kFlat:
    case GraphMode::kFolded: WriteEnds(p, out); break;
    case GraphMode::kNone: break;
  }
}

// graph: percentages of all samples; fractal: of the parent branch, with "[...]" for what the
// threshold hid. Below a single branch that holds all of the entry, its frames come after "---"
// with no percentage.
void CallTree::WriteGraph(const Print& p, FILE* out) const {
  const bool fractal = p.options->mode == GraphMode::kFractal;
  const double share = p.options->threshold / 100.0;
  uint64_t min_hit =
      fractal ? static_cast<uint64_t>(std::ceil(static_cast<double>(ChildrenHit(0)) * share))
              : static_cast<uint64_t>(static_cast<double>(p.callchain_total) * share);
  std::vector<Branch> top = Children(*p.profile, 0, min_hit);
  size_t printed = 0;
  int margin = 0;
  uint32_t from = 0;
  if (top.size() == 1 && top[0].cumul == p.entry) {
    bool started = false;
    unsigned shown = 0;
    for (size_t i = 0; i < top[0].frames.size(); i++) {
      if (i == 0 && p.skip_first)
        continue;
      if (!started) {
        Margin(margin, out);
        fprintf(out, "|\n");
        Margin(margin, out);
        fprintf(out, "---");
        margin += 3;
        started = true;
      } else {
        Margin(margin, out);
      }
      fprintf(out, "%s\n", ChainName(*p.profile, top[0].frames[i]).c_str());
      printed++;
      if (++shown == p.options->print_limit)
        break;
    }
    from = top[0].last;
  }
  uint64_t total = fractal ? p.entry : p.total;
  printed += GraphLevel(p, from, total, 1, 1, margin, out);
  if (printed != 0)
    fprintf(out, "\n");
}

size_t CallTree::GraphLevel(const Print& p, uint32_t node, uint64_t total, int depth, uint64_t mask,
                            int margin, FILE* out) const {
  const bool fractal = p.options->mode == GraphMode::kFractal;
  const double share = p.options->threshold / 100.0;
  uint64_t min_hit =
      fractal ? static_cast<uint64_t>(std::ceil(static_cast<double>(ChildrenHit(node)) * share))
              : static_cast<uint64_t>(static_cast<double>(p.callchain_total) * share);
  std::vector<Branch> kids = Children(*p.profile, node, min_hit);
  size_t lines = 0;
  uint64_t remaining = total;
  uint64_t new_mask = mask;
  unsigned shown = 0;
  auto line = [&](uint64_t m, const Branch* b, uint64_t value, const std::string& text,
                  bool first) {
    Margin(margin, out);
    for (int i = 0; i < depth; i++) {
      fputc(MaskHas(m, i) ? '|' : ' ', out);
      if (first && i == depth - 1) {
        fprintf(out, "--%.2f%%--", Percent(value, total));
      } else {
        fputs("          ", out);
      }
    }
    (void)b;
    fprintf(out, "%s\n", text.c_str());
    lines++;
  };
  for (size_t k = 0; k < kids.size(); k++) {
    const Branch& b = kids[k];
    remaining -= b.cumul;
    // The pipe of this level ends at its last branch, unless "[...]" follows it.
    if (k + 1 == kids.size() && (!fractal || remaining == 0) && depth - 1 < kMaxDepthBits)
      new_mask &= ~(uint64_t{1} << (depth - 1));
    // The separator keeps the old mask: the level's pipe reaches down to this branch.
    Margin(margin, out);
    for (int i = 0; i < depth; i++)
      fputs(MaskHas(mask, i) ? "|          " : "           ", out);
    fputc('\n', out);
    for (size_t i = 0; i < b.frames.size(); i++)
      line(new_mask, &b, b.cumul, ChainName(*p.profile, b.frames[i]), i == 0);
    uint64_t below = fractal ? ChildrenHit(b.last) : total;
    uint64_t child_mask = depth < kMaxDepthBits ? new_mask | (uint64_t{1} << depth) : new_mask;
    lines += GraphLevel(p, b.last, below, depth + 1, child_mask, margin, out);
    if (++shown == p.options->print_limit)
      break;
  }
  if (fractal && remaining != 0 && remaining != total) {
    if (depth - 1 < kMaxDepthBits)
      new_mask &= ~(uint64_t{1} << (depth - 1));
    line(new_mask, nullptr, remaining, "[...]", true);
  }
  return lines;
}

void CallTree::CollectEnds(uint32_t node, uint64_t min_hit, std::vector<uint32_t>& path,
                           std::vector<std::pair<std::vector<uint32_t>, Branch>>& out) const {
  for (uint32_t c : nodes_[node].children) {
    Branch b = BranchFrom(c);
    size_t mark = path.size();
    path.insert(path.end(), b.frames.begin(), b.frames.end());
    CollectEnds(b.last, min_hit, path, out);
    if (b.hit != 0 && b.hit >= min_hit)
      out.emplace_back(path, b);
    path.resize(mark);
  }
}

// flat and folded: one line per place where stacks end, heaviest first. flat shows the
// branch's whole weight, folded the weight of the stacks that end there.
void CallTree::WriteEnds(const Print& p, FILE* out) const {
  const bool folded = p.options->mode == GraphMode::kFolded;
  uint64_t min_hit = static_cast<uint64_t>(static_cast<double>(p.callchain_total) *
                                           (p.options->threshold / 100.0));
  std::vector<uint32_t> path;
  std::vector<std::pair<std::vector<uint32_t>, Branch>> ends;
  CollectEnds(0, min_hit, path, ends);
  std::stable_sort(ends.begin(), ends.end(), [&](const auto& a, const auto& b) {
    if (a.second.hit != b.second.hit)
      return a.second.hit > b.second.hit;
    return NamesBefore(*p.profile, a.first, b.first);
  });
  unsigned shown = 0;
  for (const auto& [frames, b] : ends) {
    if (folded) {
      fprintf(out, "%.2f%% ", Percent(b.hit, p.total));
      for (size_t i = 0; i < frames.size(); i++)
        fprintf(out, "%s%s", i == 0 ? "" : ";", ChainName(*p.profile, frames[i]).c_str());
      fputc('\n', out);
    } else {
      fprintf(out, "           %.2f%%\n", Percent(b.cumul, p.total));
      for (uint32_t f : frames)
        fprintf(out, "                %s\n", ChainName(*p.profile, f).c_str());
      fputc('\n', out);
    }
    if (++shown == p.options->print_limit)
      break;
  }
}

}  // namespace pbid::render
