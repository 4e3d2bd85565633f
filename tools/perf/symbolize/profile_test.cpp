// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pbid {
namespace {

// The stacks of event 0 as "comm:leaf,...,root=samples/period", in the profile's order.
std::vector<std::string> Stacks(const Profile& p) {
  std::vector<std::string> out;
  for (const ProfileStack& s : p.events()[0].stacks) {
    std::string line = p.Name(s.comm) + ":";
    const uint32_t* f = p.StackFrames(s);
    for (uint32_t i = 0; i < s.depth; i++)
      line += (i == 0 ? "" : ",") + p.Name(p.Frame(f[i]).symbol);
    line += " self " + p.Name(p.Frame(s.self).symbol);
    line += "=" + std::to_string(s.samples) + "/" + std::to_string(s.period);
    out.push_back(line);
  }
  return out;
}

class ProfileTest : public testing::Test {
 protected:
  void SetUp() override {
    profile_.events().resize(1);
    comm_ = profile_.names().Id("app");
  }
  uint32_t Frame(const std::string& name) {
    ProfileFrame f;
    f.dso = profile_.names().Id("[kernel.kallsyms]");
    f.symbol = profile_.names().Id(name);
    f.kind = FrameKind::kKernel;
    return profile_.FrameId(f);
  }
  Profile profile_;
  uint32_t comm_ = 0;
};

// Two stand-ins that turn out to be one function: their stacks become one, where the first
// was, with both counts; the other stacks keep their order and counts.
TEST_F(ProfileTest, ReplacedFramesMergeTheStacksTheyMakeEqual) {
  const uint32_t x1 = Frame("x@1"), x2 = Frame("x@2"), main = Frame("main"), other = Frame("y");
  const uint32_t f = Frame("f");
  profile_.Add(0, 0, comm_, {x1, main}, x1, 2, 20);
  profile_.Add(0, 0, comm_, {other, main}, other, 1, 10);
  profile_.Add(0, 0, comm_, {x2, main}, x2, 3, 30);
  profile_.Add(0, 0, comm_, {main}, main, 4, 40);
  Profile::Replacements r;
  r.Add(x1, {f});
  r.Add(x2, {f});
  profile_.ReplaceFrames(r);
  EXPECT_EQ((std::vector<std::string>{"app:f,main self f=5/50", "app:y,main self y=1/10",
                                      "app:main self main=4/40"}),
            Stacks(profile_));
  EXPECT_EQ(10u, profile_.events()[0].samples);
  EXPECT_EQ(100u, profile_.events()[0].period);
  // The stacks are found again by their new frames.
  profile_.Add(0, 0, comm_, {f, main}, f, 1, 1);
  EXPECT_EQ("app:f,main self f=6/51", Stacks(profile_)[0]);
}

// A stand-in replaced by an inlined frame and its function: the stacks grow, the self is the
// function (the last frame), and equal stacks still merge.
TEST_F(ProfileTest, ReplacedFramesMayGrowAStack) {
  const uint32_t x1 = Frame("x@1"), x2 = Frame("x@2"), main = Frame("main");
  const uint32_t inl = Frame("inlined"), f = Frame("f");
  profile_.Add(0, 0, comm_, {x1, main}, x1, 1, 1);
  profile_.Add(0, 0, comm_, {main, x2}, main, 1, 1);
  profile_.Add(0, 0, comm_, {x2, main}, x2, 1, 1);
  Profile::Replacements r;
  r.Add(x1, {inl, f});
  r.Add(x2, {inl, f});
  profile_.ReplaceFrames(r);
  EXPECT_EQ((std::vector<std::string>{"app:inlined,f,main self f=2/2",
                                      "app:main,inlined,f self main=1/1"}),
            Stacks(profile_));
}

// Every event's stacks are replaced and merged, each apart; a stand-in given no frames stays.
TEST_F(ProfileTest, ReplacedFramesInEveryEventAndOnlyWhereGiven) {
  profile_.events().resize(2);
  const uint32_t x1 = Frame("x@1"), x2 = Frame("x@2"), kept = Frame("kept@3"), f = Frame("f");
  profile_.Add(0, 0, comm_, {x1}, x1, 1, 1);
  profile_.Add(0, 0, comm_, {kept}, kept, 1, 1);
  profile_.Add(1, 0, comm_, {x2}, x2, 2, 2);
  profile_.Add(1, 0, comm_, {x1}, x1, 3, 3);
  profile_.Add(0, 0, comm_, {x2}, x2, 4, 4);
  Profile::Replacements r;
  r.Add(x1, {f});
  r.Add(x2, {f});
  r.Add(kept, {});
  profile_.ReplaceFrames(r);
  EXPECT_EQ((std::vector<std::string>{"app:f self f=5/5", "app:kept@3 self kept@3=1/1"}),
            Stacks(profile_));
  ASSERT_EQ(1u, profile_.events()[1].stacks.size());
  EXPECT_EQ(5u, profile_.events()[1].stacks[0].samples);
  EXPECT_EQ(5u, profile_.events()[1].samples);
}

}  // namespace
}  // namespace pbid
