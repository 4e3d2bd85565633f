// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include <getopt.h>

#include "cli.h"

namespace pbid::cli {

namespace {

// getopt_long's value for the option at index i of the table: above every char, so that a
// long-only option needs no made-up letter.
constexpr int kFirstVal = 256;

int HasArg(ArgKind k) {
  switch (k) {
    case ArgKind::kNone: return no_argument;
    case ArgKind::kRequired: return required_argument;
    case ArgKind::kOptional: return optional_argument;
  }
  return no_argument;
}

}  // namespace

OptionHandler Store(std::string* to) {
  return [to](const char* v) {
    *to = v;
    return std::string();
  };
}

OptionHandler Set(bool* flag) {
  return [flag](const char*) {
    *flag = true;
    return std::string();
  };
}

OptionHandler Unsigned(const char* name, uint64_t min, uint64_t max, uint64_t* to) {
  return [=](const char* v) {
    return ParseUnsigned(v, min, max, to) ? std::string()
                                          : BadNumber(name, v, static_cast<int64_t>(min), max);
  };
}

OptionHandler Size(const char* name, uint64_t* to) {
  return [=](const char* v) {
    std::string digits = v;
    uint64_t unit = 1;
    if (!digits.empty()) {
      const std::string suffixes = "KMG";
      size_t k = suffixes.find(digits.back());
      if (k != std::string::npos) {
        unit = 1ull << (10 * (k + 1));
        digits.pop_back();
      }
    }
    if (!ParseUnsigned(digits.c_str(), 1, UINT64_MAX / unit, to))
      return std::string("bad ") + name + " value '" + v +
             "': expected a positive number of bytes, with K, M or G";
    *to *= unit;
    return std::string();
  };
}

ParseResult ParseOptions(const std::vector<Option>& options, Operands order, int argc,
                         char** argv) {
  // '+': stop at the first operand; ':': report a missing value apart from an unknown option.
  std::string shorts = order == Operands::kStopAtFirst ? "+:" : ":";
  std::vector<option> longs;
  for (size_t i = 0; i < options.size(); i++) {
    const Option& o = options[i];
    if (o.short_name) {
      shorts += o.short_name;
      if (o.arg != ArgKind::kNone)
        shorts += ':';
      if (o.arg == ArgKind::kOptional)
        shorts += ':';
    }
    if (o.long_name)
      longs.push_back({o.long_name, HasArg(o.arg), nullptr, kFirstVal + static_cast<int>(i)});
  }
  bool any_long = !longs.empty();
  longs.push_back({nullptr, 0, nullptr, 0});

  ParseResult r;
  optind = 0;  // a full reset: a parse before this one (a test) may have stopped in a bundle
  opterr = 0;  // the caller prints one message, not getopt's on top
  int c;
  // Without long options "--x" is the short options '-' and 'x', as getopt() reads it.
  while ((c = getopt_long(argc, argv, shorts.c_str(), any_long ? longs.data() : nullptr,
                          nullptr)) != -1) {
    if (c == '?' || c == ':') {
      r.kind = c == '?' ? ParseResult::kUnknown : ParseResult::kMissingValue;
      // getopt has moved past the word only when it was the last letter of a bundle; it is
      // the word the commands have always named.
      r.arg = argv[optind - 1];
      // For a long option optopt is its value in `longs`, not a letter.
      r.letter = optopt < kFirstVal ? static_cast<char>(optopt) : 0;
      return r;
    }
    size_t i = 0;
    if (c >= kFirstVal) {
      i = static_cast<size_t>(c - kFirstVal);
    } else {
      while (options[i].short_name != c)
        i++;
    }
    r.option = &options[i];
    if (!r.option->take) {
      r.kind = ParseResult::kStopped;
      return r;
    }
    r.message = r.option->take(optarg);
    if (!r.message.empty()) {
      r.kind = ParseResult::kBadValue;
      return r;
    }
  }
  r.option = nullptr;
  r.operands.assign(argv + optind, argv + argc);
  return r;
}

int ParseCommandLine(const char* cmd, const char* help, std::vector<Option> options, int argc,
                     char** argv, std::vector<std::string>* operands) {
  options.push_back({"help", 'h', ArgKind::kNone, nullptr});
  ParseResult r = ParseOptions(options, Operands::kStopAtFirst, argc, argv);
  switch (r.kind) {
    case ParseResult::kDone: break;
    case ParseResult::kStopped: return PrintHelp(help);
    case ParseResult::kUnknown:
    case ParseResult::kMissingValue: return BadOption(cmd, r.arg);
    case ParseResult::kBadValue: return UsageError(cmd, r.message);
  }
  if (operands) {
    operands->assign(r.operands.begin(), r.operands.end());
  } else if (!r.operands.empty()) {
    return ExtraArgument(cmd, r.operands[0]);
  }
  return kParsed;
}

}  // namespace pbid::cli
