// SPDX-License-Identifier: GPL-2.0
//
// The report's views on profiles built by hand: perf's children and self, its call-graph
// shapes and thresholds, and the parsing of -g and --sort. perf's own numbers on real
// recordings are compared by tests/report-agreement.sh.
#include "pbid/render/report_view.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pbid::render {
namespace {

// A profile of one event: stacks of named user frames in one process.
class ViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_.events().push_back(EventProfile{"cpu-clock", 0, 0, true, {}});
    comm_ = profile_.names().Id("prog");
    dso_ = profile_.names().Id("prog");
  }
  uint32_t F(const char* name) {
    ProfileFrame f;
    f.dso = dso_;
    f.symbol = profile_.names().Id(name);
    return profile_.FrameId(f);
  }
  // Frames leaf first.
  void Add(std::vector<uint32_t> frames, uint64_t period) {
    profile_.Add(0, 1, comm_, frames, frames.front(), 1, period);
  }
  std::string Render(const ViewOptions& o) {
    char* buf = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&buf, &len);
    WriteReport(profile_, SampleCoverage{}, o, out);
    fclose(out);
    std::string s(buf, len);
    free(buf);
    return s;
  }

  Profile profile_;
  uint32_t comm_ = 0, dso_ = 0;
};

TEST_F(ViewTest, ChildrenCountARecursionOnce) {
  // main -> f -> f -> leaf: f's children must be 100%, not 200%.
  Add({F("leaf"), F("f"), F("f"), F("main")}, 100);
  ViewOptions o;
  o.sort_keys = {SortKey::kSym};
  o.call_graph.mode = GraphMode::kNone;
  std::string out = Render(o);
  EXPECT_NE(std::string::npos, out.find("100.00%     0.00%        0  [.] f\n")) << out;
  EXPECT_NE(std::string::npos, out.find("100.00%   100.00%        1  [.] leaf\n")) << out;
}

TEST_F(ViewTest, GraphPercentagesAreOfAllSamplesAndFractalOfTheParent) {
  Add({F("a"), F("main")}, 60);
  Add({F("b"), F("main")}, 30);
  Add({F("c"), F("other")}, 10);
  ViewOptions o;
  o.children = false;
  o.sort_keys = {SortKey::kDso, SortKey::kSym};
  o.call_graph.order = GraphOrder::kCaller;
  // Caller order under "a": its whole chain, main then a, is the single branch: no percent.
  std::string graph = Render(o);
  EXPECT_NE(std::string::npos, graph.find("---main\n")) << graph;
  // Sorted by symbol first, perf leaves out the chain's first frame.
  o.sort_keys = {SortKey::kSym};
  graph = Render(o);
  EXPECT_EQ(std::string::npos, graph.find("---main\n")) << graph;
  o.children = true;
  graph = Render(o);
  // main's entry: branches a and b at 60% and 30% of all samples.
  EXPECT_NE(std::string::npos, graph.find("--60.00%--a")) << graph;
  EXPECT_NE(std::string::npos, graph.find("--30.00%--b")) << graph;
  o.call_graph.mode = GraphMode::kFractal;
  std::string fractal = Render(o);
  // Of main's 90: 66.67% and 33.33%.
  EXPECT_NE(std::string::npos, fractal.find("--66.67%--a")) << fractal;
  EXPECT_NE(std::string::npos, fractal.find("--33.33%--b")) << fractal;
}

TEST_F(ViewTest, ThresholdHidesSmallBranches) {
  Add({F("a"), F("main")}, 996);
  Add({F("tiny"), F("main")}, 4);
  ViewOptions o;
  o.sort_keys = {SortKey::kSym};
  std::string out = Render(o);
  EXPECT_EQ(std::string::npos, out.find("%--tiny")) << "0.4% is below 0.5%:\n" << out;
  o.call_graph.threshold = 0.1;
  out = Render(o);
  EXPECT_NE(std::string::npos, out.find("--0.40%--tiny")) << out;
}

TEST_F(ViewTest, FoldedShowsWhereStacksEnd) {
  Add({F("a"), F("main")}, 75);
  Add({F("main")}, 25);
  ViewOptions o;
  o.children = false;
  o.sort_keys = {SortKey::kSym};
  o.call_graph.mode = GraphMode::kFolded;
  o.call_graph.order = GraphOrder::kCallee;
  std::string out = Render(o);
  EXPECT_NE(std::string::npos, out.find("75.00% a;main\n")) << out;
  EXPECT_NE(std::string::npos, out.find("25.00% main\n")) << out;
}

// Equal branches come in the order of their names, not of when their frames were made (a
// report names kernel frames after the replay): zeta's frame is made before alpha's here.
TEST_F(ViewTest, EqualBranchesInTheOrderOfTheirNames) {
  const uint32_t zeta = F("zeta"), alpha = F("alpha"), main = F("main");
  Add({zeta, main}, 50);
  Add({alpha, main}, 50);
  ViewOptions o;
  o.sort_keys = {SortKey::kSym};
  for (GraphMode mode :
       {GraphMode::kGraph, GraphMode::kFractal, GraphMode::kFlat, GraphMode::kFolded}) {
    o.call_graph.mode = mode;
    std::string out = Render(o);
    // main's entry: its two callees, alpha first.
    size_t entry = out.find("[.] main\n");
    ASSERT_NE(std::string::npos, entry) << out;
    size_t a = out.find("alpha", entry), z = out.find("zeta", entry);
    ASSERT_NE(std::string::npos, a) << out;
    ASSERT_NE(std::string::npos, z) << out;
    EXPECT_LT(a, z) << out;
  }
}

TEST(ViewParseTest, CallGraphSpecs) {
  auto g = ParseCallGraph("fractal,2,5,callee", {});
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  EXPECT_EQ(GraphMode::kFractal, g->mode);
  EXPECT_DOUBLE_EQ(2.0, g->threshold);
  EXPECT_EQ(5u, g->print_limit);
  ASSERT_TRUE(g->order.has_value());
  EXPECT_EQ(GraphOrder::kCallee, *g->order);
  auto d = ParseCallGraph("caller,function,percent", {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(GraphMode::kGraph, d->mode);
  auto bad = ParseCallGraph("graph,sideways", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string::npos, bad.error().message.find("'sideways'")) << bad.error().ToString();
  EXPECT_FALSE(ParseCallGraph("graph,-1", {}).ok());
}

// An unknown sort key is an error naming it and the known ones.
TEST(ViewParseTest, SortKeys) {
  auto bogus = ParseSortKeys("dso,bogus");
  ASSERT_FALSE(bogus.ok()) << "sort key 'bogus' accepted";
  EXPECT_EQ("--sort", bogus.error().field);
  EXPECT_NE(std::string::npos, bogus.error().message.find("'bogus'")) << bogus.error().ToString();
  EXPECT_NE(std::string::npos, bogus.error().message.find("known: comm, pid, dso, sym"));
  auto all = ParseSortKeys("comm,pid,dso,sym");
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  EXPECT_EQ(4u, all->size());
}

}  // namespace
}  // namespace pbid::render
