// SPDX-License-Identifier: GPL-2.0
#include "pbid/render/flamegraph.h"

namespace pbid::render {

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUser: return "user";
    case FrameKind::kKernel: return "kernel";
    case FrameKind::kUnsymbolized: return "unsymbolized";
    case FrameKind::kNoBuildId: return "no-build-id";
  }
  return "user";
}

std::string FlameGraphSvg(const std::vector<FlameStack>&, const FlameGraphOptions&) {
  return std::string();  // drawn in the next change
}

}  // namespace pbid::render
