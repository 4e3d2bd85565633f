// SPDX-License-Identifier: GPL-2.0
//
// Flame graphs: one self-contained, interactive SVG from weighted stacks (hover details, click
// to zoom, search), with no network and no external script, in the manner of flamegraph.pl
// and inferno. The report's call-graph model gives the stacks; this module only draws them.
#ifndef PBID_RENDER_FLAMEGRAPH_H_
#define PBID_RENDER_FLAMEGRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pbid/symbolize/profile.h"

namespace pbid::render {

// Frames are coloured by their kind (pbid/symbolize/profile.h): a reader tells kernel from
// user code at a glance, and sees where symbols or the build ID were missing.
using pbid::FrameKind;
using pbid::FrameKindName;

struct FlameFrame {
  std::string name;
  FrameKind kind = FrameKind::kUser;
};

// One call stack, root (outermost caller) first, and its weight (samples or period).
struct FlameStack {
  std::vector<FlameFrame> frames;
  uint64_t weight = 0;
};

struct FlameGraphOptions {
  std::string title = "Flame Graph";
  std::string subtitle;          // e.g. the event and the file
  std::string unit = "samples";  // what a weight counts, shown on hover
  int width = 1200;              // pixels
};

// The SVG document. Stacks that share a prefix merge; children are ordered by name, as
// flamegraph.pl orders them, so the picture depends only on the stacks and weights.
std::string FlameGraphSvg(const std::vector<FlameStack>& stacks, const FlameGraphOptions& options);

}  // namespace pbid::render

#endif  // PBID_RENDER_FLAMEGRAPH_H_
