// SPDX-License-Identifier: GPL-2.0
//
// The parser on the shapes of perf record's option grammar, with a table of the test's own:
// repeated -e EVENT[:u|:k], -g alone beside --call-graph MODE[,SIZE], -C CPUS, -p PID,PID,
// -t TID, an optional value, and options before a COMMAND that has options of its own.
#include "options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"

namespace pbid::cli {
namespace {

// argv from words; the words live as long as the Argv.
class Argv {
 public:
  Argv(std::initializer_list<const char*> words) : words_(words.begin(), words.end()) {
    for (std::string& w : words_)
      ptrs_.push_back(w.data());
    ptrs_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words_.size()); }
  char** argv() { return ptrs_.data(); }

 private:
  std::vector<std::string> words_;
  std::vector<char*> ptrs_;
};

// Everything the test table's handlers saw, in order: "e=cycles:u", "g", "bpf=(none)".
struct Seen {
  std::vector<std::string> taken;
  uint64_t tid = 0;
  // The command lines parsed: a ParseResult's operands and arg point into them.
  std::vector<std::unique_ptr<Argv>> argvs;

  OptionHandler Log(const char* name) {
    return [this, name](const char* v) {
      taken.push_back(std::string(name) + (v ? std::string("=") + v : ""));
      return std::string();
    };
  }
};

std::vector<Option> RecordLike(Seen* s) {
  return {
      {"event", 'e', ArgKind::kRequired, s->Log("e")},
      {nullptr, 'g', ArgKind::kNone, s->Log("g")},
      {"call-graph", 0, ArgKind::kRequired, s->Log("call-graph")},
      {"cpu", 'C', ArgKind::kRequired, s->Log("C")},
      {"pid", 'p', ArgKind::kRequired, s->Log("p")},
      {"tid", 't', ArgKind::kRequired, Unsigned("-t", 1, INT32_MAX, &s->tid)},
      {"quiet", 'q', ArgKind::kNone, s->Log("q")},
      {"bpf", 0, ArgKind::kOptional, s->Log("bpf")},
      {"help", 'h', ArgKind::kNone, nullptr},
  };
}

ParseResult Parse(Seen* s, std::initializer_list<const char*> words,
                  Operands order = Operands::kStopAtFirst) {
  s->argvs.push_back(std::make_unique<Argv>(words));
  Argv& a = *s->argvs.back();
  std::vector<Option> table = RecordLike(s);
  ParseResult r = ParseOptions(table, order, a.argc(), a.argv());
  r.option = nullptr;  // points into `table`, gone after this
  return r;
}

using Words = std::vector<std::string>;

// A parse that takes every option: what the handlers saw, in order, and the operands.
void ExpectDone(std::initializer_list<const char*> words, const Words& taken, const Words& operands,
                Operands order = Operands::kStopAtFirst) {
  Seen s;
  ParseResult r = Parse(&s, words, order);
  EXPECT_EQ(r.kind, ParseResult::kDone);
  EXPECT_EQ(s.taken, taken);
  EXPECT_EQ(Words(r.operands.begin(), r.operands.end()), operands);
}

TEST(OptionsTest, RepeatedEventsInOrderWithModifiers) {
  ExpectDone({"record", "-e", "cycles:u", "-ecpu-clock", "--event=task-clock:k", "--event",
              "cycles", "true"},
             {"e=cycles:u", "e=cpu-clock", "e=task-clock:k", "e=cycles"}, {"true"});
}

TEST(OptionsTest, GAloneAndCallGraphWithItsMode) {
  // -g takes no value: the word after it is the COMMAND, not a mode.
  ExpectDone({"record", "--call-graph", "dwarf,8192", "--call-graph=fp", "-g", "./server"},
             {"call-graph=dwarf,8192", "call-graph=fp", "g"}, {"./server"});
}

TEST(OptionsTest, BundledFlagsAndAttachedValue) {
  Seen s;
  ParseResult r = Parse(&s, {"record", "-qgC0-3", "-p", "12,34", "-t", "56", "-a", "x"});
  // -a is unknown: everything before it was taken, the word is named.
  EXPECT_EQ(r.kind, ParseResult::kUnknown);
  EXPECT_STREQ(r.arg, "-a");
  EXPECT_EQ(r.letter, 'a');
  EXPECT_EQ(s.taken, (Words{"q", "g", "C=0-3", "p=12,34"}));
  EXPECT_EQ(s.tid, 56u);
}

TEST(OptionsTest, OptionalValueOnlyAttached) {
  ExpectDone({"record", "--bpf", "--bpf=off", "--bpf", "on"}, {"bpf", "bpf=off", "bpf"}, {"on"});
}

TEST(OptionsTest, CommandKeepsItsOwnOptions) {
  ExpectDone({"record", "-e", "cycles", "./server", "-e", "x", "--port", "8080"}, {"e=cycles"},
             {"./server", "-e", "x", "--port", "8080"});
  // "--" ends the options even before a word that looks like one.
  ExpectDone({"record", "-q", "--", "-g", "x"}, {"q"}, {"-g", "x"});
}

TEST(OptionsTest, PermutedOperands) {
  ExpectDone({"conv", "in", "-q", "out", "-g"}, {"q", "g"}, {"in", "out"}, Operands::kPermute);
}

TEST(OptionsTest, UniquePrefixesAndAmbiguousOnes) {
  ExpectDone({"record", "--ev", "cycles", "--call", "fp"}, {"e=cycles", "call-graph=fp"}, {});
  // "--c" is --call-graph or --cpu.
  Seen s;
  ParseResult r = Parse(&s, {"record", "--c", "0"});
  EXPECT_EQ(r.kind, ParseResult::kUnknown);
  EXPECT_STREQ(r.arg, "--c");
}

TEST(OptionsTest, MissingValueTellsTheLetter) {
  Seen s;
  ParseResult r = Parse(&s, {"record", "-q", "-e"});
  EXPECT_EQ(r.kind, ParseResult::kMissingValue);
  EXPECT_STREQ(r.arg, "-e");
  EXPECT_EQ(r.letter, 'e');
  r = Parse(&s, {"record", "--call-graph"});
  EXPECT_EQ(r.kind, ParseResult::kMissingValue);
  EXPECT_STREQ(r.arg, "--call-graph");
  EXPECT_EQ(r.letter, 0);
}

TEST(OptionsTest, StrictNumberStopsWithItsMessage) {
  Seen s;
  ParseResult r = Parse(&s, {"record", "-t", "5x", "-q"});
  EXPECT_EQ(r.kind, ParseResult::kBadValue);
  EXPECT_EQ(r.message, "bad -t value '5x': expected a number from 1 to 2147483647");
  EXPECT_TRUE(s.taken.empty());  // -q after it was not read
}

TEST(OptionsTest, OptionWithoutHandlerStops) {
  Seen s;
  Argv a({"record", "-q", "-h", "-x"});
  std::vector<Option> table = RecordLike(&s);
  ParseResult r = ParseOptions(table, Operands::kStopAtFirst, a.argc(), a.argv());
  EXPECT_EQ(r.kind, ParseResult::kStopped);
  ASSERT_NE(r.option, nullptr);
  EXPECT_STREQ(r.option->long_name, "help");
  EXPECT_EQ(s.taken, std::vector<std::string>{"q"});
}

TEST(OptionsTest, CommandLineExitStatuses) {
  std::string input;
  auto run = [&](std::initializer_list<const char*> words, std::vector<std::string>* operands) {
    Argv a(words);
    return ParseCommandLine("test", "HELP\n", {{"input", 'i', ArgKind::kRequired, Store(&input)}},
                            a.argc(), a.argv(), operands);
  };
  EXPECT_EQ(run({"test", "-i", "x.data"}, nullptr), kParsed);
  EXPECT_EQ(input, "x.data");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"test", "-i", "x.data", "extra"}, nullptr), kExitUsage);
  EXPECT_EQ(run({"test", "-y"}, nullptr), kExitUsage);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "perf-buildid test: unexpected argument 'extra'\n"
            "Try 'perf-buildid test --help'.\n"
            "perf-buildid test: unknown option or missing value: '-y'\n"
            "Try 'perf-buildid test --help'.\n");
  std::vector<std::string> operands;
  EXPECT_EQ(run({"test", "cmd", "-i", "y"}, &operands), kParsed);
  EXPECT_EQ(operands, (std::vector<std::string>{"cmd", "-i", "y"}));
  testing::internal::CaptureStdout();
  EXPECT_EQ(run({"test", "--help", "-y"}, nullptr), kExitOk);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "HELP\n");
}

}  // namespace
}  // namespace pbid::cli
