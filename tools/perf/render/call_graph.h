// SPDX-License-Identifier: GPL-2.0
//
// The call graph under one entry of the report: the stacks through the entry, merged into a
// tree, then shown in perf's modes. Its shape is perf's: a branch is cut where stacks part or
// end, and perf's threshold drops branches below a share of the samples (graph, flat, folded:
// of all samples; fractal: of the parent branch).
#ifndef PBID_RENDER_CALL_GRAPH_H_
#define PBID_RENDER_CALL_GRAPH_H_

#include <cstdint>
#include <cstdio>
#include <vector>

#include "pbid/render/report_view.h"
#include "pbid/symbolize/profile.h"

namespace pbid::render {

class CallTree {
 public:
  // Adds one path, outermost node first: frames[0], frames[step], ... n frames in all.
  void Add(const uint32_t* frames, size_t n, ptrdiff_t step, uint64_t period);

  struct Print {
    const Profile* profile = nullptr;
    const CallGraphOptions* options = nullptr;
    uint64_t total = 0;            // the event's period: graph percentages are of it
    uint64_t callchain_total = 0;  // the periods of samples with callchains: the threshold's base
    uint64_t entry = 0;            // the entry's own period (children or self)
    bool skip_first = false;       // the entry's symbol opens the chain: do not repeat it
  };
  void Write(const Print& p, FILE* out) const;

 private:
  struct Node {
    uint32_t frame = 0;
    uint64_t hit = 0;    // period of the paths that end here
    uint64_t cumul = 0;  // period of the paths through here
    std::vector<uint32_t> children;
  };
  // A branch as perf shows it: the frames from a node down while nothing parts or ends.
  struct Branch {
    std::vector<uint32_t> frames;
    uint64_t hit = 0, cumul = 0;
    uint32_t last = 0;  // the tree node whose children follow the branch
  };
  Branch BranchFrom(uint32_t node) const;
  // The branches below node with at least min_hit, heaviest first; equal ones by their
  // frames' names.
  std::vector<Branch> Children(const Profile& profile, uint32_t node, uint64_t min_hit) const;
  uint64_t ChildrenHit(uint32_t node) const;

  void WriteGraph(const Print& p, FILE* out) const;
  size_t GraphLevel(const Print& p, uint32_t node, uint64_t total, int depth, uint64_t mask,
                    int margin, FILE* out) const;
  void CollectEnds(uint32_t node, uint64_t min_hit, std::vector<uint32_t>& path,
                   std::vector<std::pair<std::vector<uint32_t>, Branch>>& out) const;
  void WriteEnds(const Print& p, FILE* out) const;

  std::vector<Node> nodes_{Node{}};  // nodes_[0] is the root, above the outermost frames
};

}  // namespace pbid::render

#endif  // PBID_RENDER_CALL_GRAPH_H_
