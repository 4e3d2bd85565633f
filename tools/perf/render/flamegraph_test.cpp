// SPDX-License-Identifier: GPL-2.0
#include "pbid/render/flamegraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "util/test_util.h"

namespace pbid::render {
namespace {

// One drawn frame as the document has it, read back from its <g>, <title>, <rect> and <text>.
struct Drawn {
  std::string id, parent, name, kind, title, label, fill;
  uint64_t weight = 0;
  int depth = 0;
  double x = 0, width = 0;
};

std::string Unescape(const std::string& s) {
  static const std::pair<const char*, const char*> kEntities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                                  {"&quot;", "\""}, {"&apos;", "'"},
                                                                  {"&#9;", "\t"},   {"&amp;", "&"}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    for (const auto& [entity, ch] : kEntities) {
      if (s.compare(i, std::char_traits<char>::length(entity), entity) == 0) {
        out += ch;
        i += std::char_traits<char>::length(entity);
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      out += s[i++];
    }
  }
  return out;
}

// The value of attribute `name` in the tag that starts at `from`, or "" when it has none.
std::string Attr(const std::string& doc, size_t from, const std::string& name) {
  const size_t end = doc.find('>', from);
  const std::string key = " " + name + "=\"";
  const size_t at = doc.find(key, from);
  if (at == std::string::npos || at > end) {
    return std::string();
  }
  const size_t value = at + key.size();
  return Unescape(doc.substr(value, doc.find('"', value) - value));
}

std::string Between(const std::string& doc, size_t from, const std::string& open,
                    const std::string& close) {
  const size_t a = doc.find(open, from) + open.size();
  return Unescape(doc.substr(a, doc.find(close, a) - a));
}

std::vector<Drawn> Frames(const std::string& doc) {
  std::vector<Drawn> out;
  for (size_t at = doc.find("<g class=\"f\""); at != std::string::npos;
       at = doc.find("<g class=\"f\"", at + 1)) {
    Drawn d;
    d.id = Attr(doc, at, "id");
    d.parent = Attr(doc, at, "data-parent");
    d.name = Attr(doc, at, "data-name");
    d.kind = Attr(doc, at, "data-kind");
    d.weight = std::strtoull(Attr(doc, at, "data-weight").c_str(), nullptr, 10);
    d.depth = std::atoi(Attr(doc, at, "data-depth").c_str());
    d.title = Between(doc, at, "<title>", "</title>");
    const size_t rect = doc.find("<rect", at);
    d.x = std::atof(Attr(doc, rect, "x").c_str());
    d.width = std::atof(Attr(doc, rect, "width").c_str());
    d.fill = Attr(doc, rect, "fill");
    const size_t text = doc.find("<text", rect);
    d.label = Between(doc, text, ">", "</text>");
    out.push_back(d);
  }
  return out;
}

const Drawn* Find(const std::vector<Drawn>& frames, const std::string& name,
                  const std::string& kind = "") {
  for (const Drawn& d : frames) {
    if (d.name == name && (kind.empty() || d.kind == kind)) {
      return &d;
    }
  }
  return nullptr;
}

// Folded stacks as pbid-flamegraph reads them, to keep the cases short: "a;kernel:b 3".
std::vector<FlameStack> Stacks(const std::vector<std::pair<std::string, uint64_t>>& folded) {
  std::vector<FlameStack> out;
  for (const auto& [line, weight] : folded) {
    FlameStack stack;
    stack.weight = weight;
    size_t start = 0;
    while (start <= line.size()) {
      size_t semi = line.find(';', start);
      if (semi == std::string::npos) {
        semi = line.size();
      }
      std::string frame = line.substr(start, semi - start);
      FrameKind kind = FrameKind::kUser;
      if (frame.rfind("kernel:", 0) == 0) {
        kind = FrameKind::kKernel;
        frame = frame.substr(7);
      } else if (frame.rfind("unsym:", 0) == 0) {
        kind = FrameKind::kUnsymbolized;
        frame = frame.substr(6);
      } else if (frame.rfind("nobid:", 0) == 0) {
        kind = FrameKind::kNoBuildId;
        frame = frame.substr(6);
      }
      stack.frames.push_back(FlameFrame{frame, kind});
      start = semi + 1;
    }
    out.push_back(stack);
  }
  return out;
}

// Whether xmllint (libxml2, a real parser) reads the document without a complaint.
::testing::AssertionResult WellFormed(const std::string& doc) {
  const std::string path = pbid::testing::TempPath("flamegraph.svg");
  {
    std::ofstream f(path, std::ios::binary);
    f << doc;
  }
  const pbid::testing::CommandResult r =
      pbid::testing::RunCommand("xmllint --noout " + pbid::testing::Quote(path) + " 2>&1");
  std::remove(path.c_str());
  if (r.exit_code != 0 || !r.output.empty()) {
    return ::testing::AssertionFailure() << "xmllint: exit " << r.exit_code << ": " << r.output;
  }
  return ::testing::AssertionSuccess();
}

struct Rgb {
  int r = -1, g = -1, b = -1;
};
Rgb ParseRgb(const std::string& fill) {
  Rgb c;
  EXPECT_EQ(std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &c.r, &c.g, &c.b), 3) << fill;
  return c;
}

constexpr double kPlotWidth = 1200 - 2 * 10;  // the default width less the margins

TEST(FlameGraph, StacksSharingAPrefixMerge) {
  const std::string doc =
      FlameGraphSvg(Stacks({{"main;a;x", 3}, {"main;b", 2}, {"main;a;y", 1}}), FlameGraphOptions());
  const std::vector<Drawn> frames = Frames(doc);
  ASSERT_EQ(frames.size(), 6u);  // all, main, a, x, y, b
  EXPECT_EQ(
      std::count_if(frames.begin(), frames.end(), [](const Drawn& d) { return d.name == "main"; }),
      1);
  const Drawn* root = Find(frames, "all");
  const Drawn* main = Find(frames, "main");
  const Drawn* a = Find(frames, "a");
  const Drawn* x = Find(frames, "x");
  ASSERT_TRUE(root && main && a && x);
  EXPECT_EQ(root->kind, "root");
  EXPECT_EQ(root->weight, 6u);
  EXPECT_EQ(main->weight, 6u);
  EXPECT_EQ(a->weight, 4u);
  EXPECT_EQ(main->parent, root->id);
  EXPECT_EQ(a->parent, main->id);
  EXPECT_EQ(x->parent, a->id);
  EXPECT_EQ(x->depth, 3);
  EXPECT_EQ(a->title, "a (user, 4 samples, 66.67%)");
}

TEST(FlameGraph, WidthsAreProportionalToWeights) {
  const std::string doc =
      FlameGraphSvg(Stacks({{"m;a", 1}, {"m;b", 3}, {"m;c", 6}, {"n", 10}}), FlameGraphOptions());
  const std::vector<Drawn> frames = Frames(doc);
  const Drawn* root = Find(frames, "all");
  ASSERT_TRUE(root);
  EXPECT_DOUBLE_EQ(root->width, kPlotWidth);
  for (const Drawn& d : frames) {
    EXPECT_NEAR(d.width, kPlotWidth * static_cast<double>(d.weight) / 20.0, 0.001) << d.name;
  }
  // Siblings are laid side by side from their parent's left edge.
  const Drawn* m = Find(frames, "m");
  const Drawn* a = Find(frames, "a");
  const Drawn* b = Find(frames, "b");
  const Drawn* c = Find(frames, "c");
  const Drawn* n = Find(frames, "n");
  ASSERT_TRUE(m && a && b && c && n);
  EXPECT_NEAR(a->x, m->x, 0.001);
  EXPECT_NEAR(b->x, a->x + a->width, 0.001);
  EXPECT_NEAR(c->x, b->x + b->width, 0.001);
  EXPECT_NEAR(n->x, m->x + m->width, 0.001);
}

TEST(FlameGraph, ChildrenAreOrderedByName) {
  const std::string doc =
      FlameGraphSvg(Stacks({{"main;zeta", 5}, {"main;alpha", 1}, {"main;Mid", 2}, {"main;mid", 3}}),
                    FlameGraphOptions());
  const std::vector<Drawn> frames = Frames(doc);
  std::vector<std::pair<double, std::string>> by_x;
  for (const Drawn& d : frames) {
    if (d.depth == 2) {
      by_x.emplace_back(d.x, d.name);
    }
  }
  std::sort(by_x.begin(), by_x.end());
  std::vector<std::string> names;
  for (const auto& p : by_x) {
    names.push_back(p.second);
  }
  // Byte order, as flamegraph.pl sorts: upper case first.
  EXPECT_EQ(names, (std::vector<std::string>{"Mid", "alpha", "mid", "zeta"}));
}

TEST(FlameGraph, TheSameNameInTwoKindsIsTwoFrames) {
  const std::vector<Drawn> frames =
      Frames(FlameGraphSvg(Stacks({{"main;f", 1}, {"main;kernel:f", 1}}), FlameGraphOptions()));
  ASSERT_TRUE(Find(frames, "f", "user"));
  ASSERT_TRUE(Find(frames, "f", "kernel"));
  EXPECT_NE(Find(frames, "f", "user")->fill, Find(frames, "f", "kernel")->fill);
}

TEST(FlameGraph, NamesAreEscaped) {
  const std::string nasty = "std::map<int, std::string>::operator[]&\"quoted\" 'x' </svg>";
  const std::string control = "bad\x01name\xff\xfe";
  FlameGraphOptions options;
  options.title = "a <title> & more";
  options.subtitle = "perf.data \"<cycles>\"";
  const std::string doc =
      FlameGraphSvg(Stacks({{"main;" + nasty, 2}, {"main;" + control, 1}}), options);
  EXPECT_TRUE(WellFormed(doc));
  EXPECT_EQ(doc.find("<int"), std::string::npos);
  EXPECT_EQ(doc.find("<title>a <title>"), std::string::npos);
  const std::vector<Drawn> frames = Frames(doc);
  ASSERT_TRUE(Find(frames, nasty)) << "data-name must give the name back";
  EXPECT_EQ(Find(frames, nasty)->title.rfind(nasty, 0), 0u);
  // What XML cannot carry is replaced, never passed through.
  EXPECT_TRUE(Find(frames, "bad\xEF\xBF\xBDname\xEF\xBF\xBD\xEF\xBF\xBD"));
}

TEST(FlameGraph, LabelsAreCutToFit) {
  const std::string long_name(200, 'q');
  const std::vector<Drawn> frames = Frames(
      FlameGraphSvg(Stacks({{"main;" + long_name, 10}, {"main;short", 10}, {"main;tiny", 1}}),
                    FlameGraphOptions()));
  const Drawn* l = Find(frames, long_name);
  const Drawn* s = Find(frames, "short");
  const Drawn* t = Find(frames, "tiny");
  ASSERT_TRUE(l && s && t);
  EXPECT_EQ(s->label, "short");
  ASSERT_GE(l->label.size(), 3u);
  EXPECT_EQ(l->label.substr(l->label.size() - 2), "..");
  EXPECT_LE(static_cast<double>(l->label.size()) * 12 * 0.59, l->width);
  EXPECT_EQ(l->label.substr(0, l->label.size() - 2), long_name.substr(0, l->label.size() - 2));
  // 1/21 of 1180 px is 56 px: room for 7 characters, so "tiny" fits whole.
  EXPECT_EQ(t->label, "tiny");
}

TEST(FlameGraph, FramesTooNarrowToSeeAreDropped) {
  // 1180 px for 1,000,000: a weight of 1 is 0.00118 px wide, 100 is 0.118 px.
  const std::vector<Drawn> frames = Frames(FlameGraphSvg(
      Stacks({{"main;big", 999899}, {"main;small;above", 100}, {"main;speck;above2", 1}}),
      FlameGraphOptions()));
  EXPECT_TRUE(Find(frames, "small"));
  EXPECT_TRUE(Find(frames, "above"));
  EXPECT_FALSE(Find(frames, "speck"));
  EXPECT_FALSE(Find(frames, "above2"));
  // The frames beside it still start where they would have.
  EXPECT_NEAR(Find(frames, "small")->x, 10 + kPlotWidth * 999899 / 1e6, 0.001);
}

TEST(FlameGraph, ColoursComeFromTheKindsPalette) {
  const std::string doc = FlameGraphSvg(Stacks({{"u1;u2;u3", 1},
                                                {"kernel:k1;kernel:k2;kernel:k3", 1},
                                                {"unsym:s1;unsym:s2;unsym:s3", 1},
                                                {"nobid:n1;nobid:n2;nobid:n3", 1}}),
                                        FlameGraphOptions());
  for (const Drawn& d : Frames(doc)) {
    const Rgb c = ParseRgb(d.fill);
    if (d.kind == "user") {
      EXPECT_TRUE(c.r >= 205 && c.g <= 170 && c.b <= 55) << d.name << " " << d.fill;
    } else if (d.kind == "kernel") {
      EXPECT_TRUE(c.r <= 100 && c.g >= 150 && c.b >= 200) << d.name << " " << d.fill;
    } else if (d.kind == "unsymbolized") {
      EXPECT_TRUE(c.r == c.g && c.g == c.b && c.r >= 150) << d.name << " " << d.fill;
    } else if (d.kind == "no-build-id") {
      EXPECT_TRUE(c.r >= 150 && c.r <= 200 && c.g >= 180 && c.b <= 90) << d.name << " " << d.fill;
    } else {
      EXPECT_EQ(d.kind, "root");
    }
  }
  // Names pick different colours within a palette, and one name always the same colour.
  const std::vector<Drawn> frames = Frames(doc);
  EXPECT_NE(Find(frames, "k1")->fill, Find(frames, "k2")->fill);
  const std::vector<Drawn> again =
      Frames(FlameGraphSvg(Stacks({{"other;kernel:k2", 7}}), FlameGraphOptions()));
  EXPECT_EQ(Find(again, "k2")->fill, Find(frames, "k2")->fill);
  // The legend shows each kind.
  for (const char* kind : {"user", "kernel", "unsymbolized", "no-build-id"}) {
    EXPECT_NE(doc.find("class=\"legend-swatch\" data-kind=\"" + std::string(kind) + "\""),
              std::string::npos)
        << kind;
  }
}

TEST(FlameGraph, TheSameStacksGiveTheSameDocument) {
  const std::vector<FlameStack> stacks =
      Stacks({{"main;a;b", 5}, {"kernel:k;kernel:j", 3}, {"main;c", 2}, {"main;a", 1}});
  std::vector<FlameStack> reversed(stacks.rbegin(), stacks.rend());
  const std::string doc = FlameGraphSvg(stacks, FlameGraphOptions());
  EXPECT_EQ(doc, FlameGraphSvg(stacks, FlameGraphOptions()));
  EXPECT_EQ(doc, FlameGraphSvg(reversed, FlameGraphOptions()));
  EXPECT_TRUE(WellFormed(doc));
}

TEST(FlameGraph, OneSelfContainedDocument) {
  const std::string doc = FlameGraphSvg(Stacks({{"main", 1}}), FlameGraphOptions());
  EXPECT_EQ(doc.rfind("<?xml", 0), 0u);
  EXPECT_NE(doc.find("<style"), std::string::npos);
  EXPECT_NE(doc.find("<script type=\"text/ecmascript\"><![CDATA["), std::string::npos);
  EXPECT_EQ(doc.find("src="), std::string::npos);
  EXPECT_EQ(doc.find("href"), std::string::npos);
  EXPECT_EQ(doc.find("@import"), std::string::npos);
  // The one URL is the SVG namespace, which is a name, not something fetched.
  size_t urls = 0;
  for (size_t at = doc.find("http"); at != std::string::npos; at = doc.find("http", at + 1)) {
    ++urls;
  }
  EXPECT_EQ(urls, 1u);
  for (const char* id :
       {"id=\"reset-zoom\"", "id=\"search\"", "id=\"matched\"", "id=\"details\""}) {
    EXPECT_NE(doc.find(id), std::string::npos) << id;
  }
}

TEST(FlameGraph, NoSamplesIsStillADocument) {
  for (const std::vector<FlameStack>& stacks :
       {std::vector<FlameStack>(), Stacks({{"main;a", 0}})}) {
    const std::string doc = FlameGraphSvg(stacks, FlameGraphOptions());
    EXPECT_TRUE(WellFormed(doc));
    EXPECT_NE(doc.find(">no samples</text>"), std::string::npos);
    EXPECT_TRUE(Frames(doc).empty());
  }
}

TEST(FlameGraph, TheUnitAndWidthAreTheOptions) {
  FlameGraphOptions options;
  options.unit = "cycles";
  options.width = 600;
  const std::vector<Drawn> frames =
      Frames(FlameGraphSvg(Stacks({{"main;a", 1500}, {"main;b", 500}}), options));
  EXPECT_DOUBLE_EQ(Find(frames, "all")->width, 580);
  EXPECT_EQ(Find(frames, "a")->title, "a (user, 1,500 cycles, 75.00%)");
}

}  // namespace
}  // namespace pbid::render
