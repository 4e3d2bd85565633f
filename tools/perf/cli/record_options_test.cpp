// SPDX-License-Identifier: GPL-2.0
#include "record_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.h"

namespace pbid::cli {
namespace {

// Parses `args` (after "record") as the command does; the exit status or kParsed.
int Parse(std::vector<std::string> args, RecordConfig* c) {
  args.insert(args.begin(), "record");
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  return ParseRecordCommandLine("help", static_cast<int>(args.size()), argv.data(), c);
}

TEST(RecordOptions, CpuListAsPerf) {
  std::vector<int> cpus;
  EXPECT_EQ("", ParseCpuList("0,2-3", &cpus));
  EXPECT_EQ((std::vector<int>{0, 2, 3}), cpus);
  EXPECT_EQ("", ParseCpuList("3,1-2,2", &cpus));
  EXPECT_EQ((std::vector<int>{1, 2, 3}), cpus);
  for (const char* bad : {"", "0,", "3-1", "a", "-1", "0-", "1,,2", "99999"})
    EXPECT_NE("", ParseCpuList(bad, &cpus)) << bad;
}

TEST(RecordOptions, CallGraphModesAndStackSize) {
  RecordConfig c;
  EXPECT_EQ("", ParseCallGraph("dwarf", &c));
  EXPECT_EQ(CallGraph::kDwarf, c.call_graph);
  EXPECT_EQ(8192u, c.stack_dump);
  EXPECT_EQ("", ParseCallGraph("dwarf,4093", &c));
  EXPECT_EQ(4096u, c.stack_dump);  // perf rounds up to 8 bytes
  EXPECT_EQ("", ParseCallGraph("dwarf,65528", &c));
  EXPECT_EQ(65528u, c.stack_dump);
  EXPECT_NE("", ParseCallGraph("dwarf,65529", &c));
  EXPECT_NE("", ParseCallGraph("dwarf,0", &c));
  EXPECT_EQ("", ParseCallGraph("fp", &c));
  EXPECT_EQ(CallGraph::kFp, c.call_graph);
  EXPECT_EQ("", ParseCallGraph("lbr", &c));
  EXPECT_EQ(CallGraph::kLbr, c.call_graph);
  for (const char* bad : {"", "fp,8", "dwarf,", "dwarf,1,2", "frame"})
    EXPECT_NE("", ParseCallGraph(bad, &c)) << bad;
}

TEST(RecordOptions, EventsWithModifiers) {
  std::vector<RecordEvent> ev;
  EXPECT_EQ("", ParseEventList("cycles:u,instructions:k", &ev));
  EXPECT_EQ("", ParseEventList("page-faults:uk", &ev));
  ASSERT_EQ(3u, ev.size());
  EXPECT_EQ("cycles:u", ev[0].name);
  EXPECT_TRUE(ev[0].exclude_kernel);
  EXPECT_FALSE(ev[0].exclude_user);
  EXPECT_TRUE(ev[1].exclude_user);
  EXPECT_FALSE(ev[1].exclude_kernel);
  EXPECT_FALSE(ev[2].exclude_user || ev[2].exclude_kernel);
  EXPECT_EQ(PERF_COUNT_SW_PAGE_FAULTS, ev[2].event->config);
  for (const char* bad : {"cycles:p", "cycles:", "nope", "cycles,,instructions", "{cycles}"})
    EXPECT_NE("", ParseEventList(bad, &ev)) << bad;
  EXPECT_EQ(3u, ev.size());  // a bad list adds nothing
}

TEST(RecordOptions, EveryGenericEventByName) {
  for (const char* name :
       {"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses",
        "cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations"}) {
    std::vector<RecordEvent> ev;
    EXPECT_EQ("", ParseEventList(name, &ev)) << name;
  }
}

TEST(RecordOptions, TargetsWithACommand) {
  RecordConfig c;
  ASSERT_EQ(kParsed, Parse({"-a", "-g", "--", "sleep", "10"}, &c));
  EXPECT_TRUE(c.system_wide());
  EXPECT_EQ(CallGraph::kFp, c.call_graph);
  EXPECT_EQ((std::vector<std::string>{"sleep", "10"}), c.command);
  ASSERT_EQ(1u, c.events.size());
  EXPECT_EQ("cpu-clock", c.events[0].name);

  RecordConfig d;
  ASSERT_EQ(kParsed, Parse({"--call-graph", "dwarf", "--", "./app"}, &d));
  EXPECT_EQ(CallGraph::kDwarf, d.call_graph);
  EXPECT_EQ((std::vector<std::string>{"./app"}), d.command);

  RecordConfig p;
  ASSERT_EQ(
      kParsed,
      Parse({"-p", "10,20", "-t", "30", "-C", "0-1", "-e", "cycles", "-e", "instructions:u"}, &p));
  EXPECT_EQ((std::vector<pid_t>{10, 20}), p.pids);
  EXPECT_EQ((std::vector<pid_t>{30}), p.tids);
  EXPECT_EQ(2u, p.events.size());
}

TEST(RecordOptions, GKeepsAnEarlierCallGraph) {
  RecordConfig c;
  ASSERT_EQ(kParsed, Parse({"--call-graph=dwarf,1024", "-g", "true"}, &c));
  EXPECT_EQ(CallGraph::kDwarf, c.call_graph);
  EXPECT_EQ(1024u, c.stack_dump);
}

// perf's -z: level 1 without a value (the next word is the command) or with 0, zstd's 22 at
// most.
TEST(RecordOptions, CompressionLevelAsPerf) {
  struct Case {
    std::vector<std::string> args;
    int level;
    const char* command;
  } cases[] = {{{"true"}, 0, "true"},
               {{"-z", "5"}, 1, "5"},
               {{"-z3", "true"}, 3, "true"},
               {{"--compression-level=0", "true"}, 1, "true"},
               {{"--compression-level=99", "true"}, 22, "true"},
               {{"--compression-level", "true"}, 1, "true"}};
  for (const Case& k : cases) {
    RecordConfig c;
    ASSERT_EQ(kParsed, Parse(k.args, &c)) << k.args[0];
    EXPECT_EQ(k.level, c.compression_level) << k.args[0];
    ASSERT_FALSE(c.command.empty());
    EXPECT_EQ(k.command, c.command[0]) << k.args[0];
  }
  RecordConfig c;
  EXPECT_EQ(kExitUsage, Parse({"-zfast", "true"}, &c));
  std::vector<std::string> refused = UnsupportedRecordOptions();
  EXPECT_EQ(refused.end(), std::find(refused.begin(), refused.end(), "compression-level"));
}

TEST(RecordOptions, ArchiveAndItsCap) {
  RecordConfig c;
  ASSERT_EQ(kParsed, Parse({"--archive", "/srv/ids", "--archive-max", "20G", "true"}, &c));
  EXPECT_EQ("/srv/ids", c.archive_dir);
  EXPECT_EQ(20ull << 30, c.archive_max);
  RecordConfig k;
  ASSERT_EQ(kParsed, Parse({"--archive=d", "--archive-max=512K", "true"}, &k));
  EXPECT_EQ(512u << 10, k.archive_max);
  for (std::vector<std::string> bad : {std::vector<std::string>{"--archive-max", "1M", "true"},
                                       {"--archive", "d", "--archive-max", "0", "true"},
                                       {"--archive", "d", "--archive-max", "1T", "true"},
                                       {"--archive", "d", "--archive-max", "M", "true"},
                                       {"--archive", "", "true"}}) {
    RecordConfig b;
    EXPECT_EQ(kExitUsage, Parse(bad, &b)) << bad[1];
  }
}

TEST(RecordOptions, RefusedOptionsStopTheParse) {
  // The value of a refused option is never the command.
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"--delay", "100", "true"},
                                             {"-D", "100", "true"},
                                             {"-v", "true"},
                                             {"--snapshot", "true"},
                                             {"--vmlinux", "/x", "true"}}) {
    RecordConfig c;
    EXPECT_EQ(kExitUsage, Parse(args, &c)) << args[0];
    EXPECT_TRUE(c.command.empty()) << args[0];
  }
  std::vector<std::string> refused = UnsupportedRecordOptions();
  EXPECT_NE(refused.end(), std::find(refused.begin(), refused.end(), "delay"));
  EXPECT_EQ(refused.end(), std::find(refused.begin(), refused.end(), "call-graph"));
}

TEST(RecordOptions, ContradictionsAreUsageErrors) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{},
                                             {"-a", "-p", "1"},
                                             {"-F", "99", "-c", "1000", "true"},
                                             {"--all-user", "--all-kernel", "true"},
                                             {"-p", "0"},
                                             {"-t", "1,x"},
                                             {"-C", "x", "true"}}) {
    RecordConfig c;
    EXPECT_EQ(kExitUsage, Parse(args, &c)) << (args.empty() ? "" : args[0]);
  }
}

}  // namespace
}  // namespace pbid::cli
