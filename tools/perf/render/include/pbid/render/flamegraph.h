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

namespace pbid::render {

// What a frame is, for its colour: a reader tells kernel from user code at a glance, and sees
// where symbols or the build ID were missing.
enum class FrameKind : uint8_t {
  kUser,          // user code, named
  kKernel,        // kernel code
  kUnsymbolized,  // a module was found (or had a build ID) but nothing named the address
  kNoBuildId,     // the mapping had no build ID: nothing could be verified or named
};
const char* FrameKindName(FrameKind kind);  // "user", "kernel", "unsymbolized", "no-build-id"

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
  std::string subtitle;           // e.g. the event and the file
  std::string unit = "samples";   // what a weight counts, shown on hover
  int width = 1200;               // pixels
};

// The SVG document. Stacks that share a prefix merge; children are ordered by name, as
// flamegraph.pl orders them, so the picture depends only on the stacks and weights.
std::string FlameGraphSvg(const std::vector<FlameStack>& stacks, const FlameGraphOptions& options);

}  // namespace pbid::render

#endif  // PBID_RENDER_FLAMEGRAPH_H_
