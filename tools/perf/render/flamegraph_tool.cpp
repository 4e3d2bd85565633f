// SPDX-License-Identifier: GPL-2.0
//
// pbid-flamegraph: the flame graph of folded stacks, for developers and the browser test.
// Reads lines "KIND:name;KIND:name;... WEIGHT" from stdin, root first (KIND is user, kernel,
// unsymbolized or no-build-id; a frame without one is user code) and writes the SVG that
// `perf-buildid report --format flamegraph` draws to stdout. Blank lines and lines starting
// with '#' are skipped.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "pbid/render/flamegraph.h"

namespace {

using pbid::render::FlameFrame;
using pbid::render::FlameStack;
using pbid::render::FrameKind;

FlameFrame ParseFrame(const std::string& text) {
  static const std::pair<const char*, FrameKind> kKinds[] = {
      {"user:", FrameKind::kUser},
      {"kernel:", FrameKind::kKernel},
      {"unsymbolized:", FrameKind::kUnsymbolized},
      {"no-build-id:", FrameKind::kNoBuildId},
  };
  for (const auto& [prefix, kind] : kKinds) {
    const size_t n = std::strlen(prefix);
    if (text.compare(0, n, prefix) == 0) {
      return FlameFrame{text.substr(n), kind};
    }
  }
  // "std::vector<int>::size" is a user frame named so, not a frame of kind "std".
  return FlameFrame{text, FrameKind::kUser};
}

// Names may hold spaces ("operator new(unsigned long)"), so the weight is the last field.
bool ParseLine(const std::string& line, FlameStack* stack, std::string* why) {
  const size_t space = line.find_last_of(' ');
  if (space == std::string::npos || space == 0) {
    *why = "expected \"frames WEIGHT\"";
    return false;
  }
  const std::string weight = line.substr(space + 1);
  char* end = nullptr;
  errno = 0;
  const unsigned long long w = std::strtoull(weight.c_str(), &end, 10);
  if (weight.empty() || weight[0] == '-' || *end != '\0' || errno == ERANGE) {
    *why = "bad weight \"" + weight + "\"";
    return false;
  }
  stack->weight = w;
  const std::string frames = line.substr(0, space);
  size_t start = 0;
  while (start <= frames.size()) {
    size_t semi = frames.find(';', start);
    if (semi == std::string::npos) {
      semi = frames.size();
    }
    if (semi == start) {
      *why = "empty frame name";
      return false;
    }
    stack->frames.push_back(ParseFrame(frames.substr(start, semi - start)));
    start = semi + 1;
  }
  return true;
}

int Usage() {
  std::cerr << "usage: pbid-flamegraph [--title TEXT] [--subtitle TEXT] [--unit TEXT]"
               " [--width PIXELS] < folded-stacks > graph.svg\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  pbid::render::FlameGraphOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      return Usage();
    }
    const std::string value = argv[++i];
    if (arg == "--title") {
      options.title = value;
    } else if (arg == "--subtitle") {
      options.subtitle = value;
    } else if (arg == "--unit") {
      options.unit = value;
    } else if (arg == "--width") {
      char* end = nullptr;
      const long w = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || w < 200 || w > 100000) {
        std::cerr << "pbid-flamegraph: --width must be 200 to 100000 pixels\n";
        return 2;
      }
      options.width = static_cast<int>(w);
    } else {
      return Usage();
    }
  }

  std::vector<FlameStack> stacks;
  std::string line;
  for (int number = 1; std::getline(std::cin, line); ++number) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty() || line[0] == '#') {
      continue;
    }
    FlameStack stack;
    std::string why;
    if (!ParseLine(line, &stack, &why)) {
      std::cerr << "pbid-flamegraph: stdin:" << number << ": " << why << "\n";
      return 1;
    }
    stacks.push_back(std::move(stack));
  }
  std::cout << pbid::render::FlameGraphSvg(stacks, options);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "pbid-flamegraph: writing stdout: " << std::strerror(errno) << "\n";
    return 1;
  }
  return 0;
}
