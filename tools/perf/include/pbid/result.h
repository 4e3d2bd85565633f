// SPDX-License-Identifier: GPL-2.0
//
// The single error convention of the pbid library: every fallible function returns
// pbid::Result<T>. No exception ever leaves the library, and an error never looks like an
// empty result.
#ifndef PBID_RESULT_H_
#define PBID_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace pbid {

// What kind of failure an error is. The commands turn it into their exit status in one place
// (ExitCodeFor in cli/cli.h).
enum class ErrorKind {
  kCorruptInput,     // the input is malformed, truncated or inconsistent (the default)
  kIo,               // a system call or an output failed
  kUnsupported,      // well-formed input this library does not handle
  kInvalidArgument,  // the caller asked for something that cannot be done
};

// An error says what went wrong, which field it concerns and, for file input, at which byte
// offset, so that a corrupt perf.data gives a one-line message a user can act on.
struct Error {
  static constexpr uint64_t kNoOffset = UINT64_MAX;

  std::string field;            // e.g. "header.data.size", "attr[1].ids.offset", "open"
  uint64_t offset = kNoOffset;  // byte offset in the input, kNoOffset when not file-related
  std::string message;          // what is wrong, lower case, no trailing period
  int sys_errno = 0;            // errno when a system call failed, else 0
  ErrorKind kind = ErrorKind::kCorruptInput;
  std::vector<std::string> context;  // what was being done, innermost first

  Error() = default;
  Error(std::string f, std::string msg) : field(std::move(f)), message(std::move(msg)) {}
  Error(std::string f, uint64_t off, std::string msg)
      : field(std::move(f)), offset(off), message(std::move(msg)) {}

  static Error Sys(std::string f, int err, std::string msg) {
    Error e(std::move(f), std::move(msg));
    e.sys_errno = err;
    e.kind = ErrorKind::kIo;
    return e;
  }
  static Error Of(ErrorKind kind, std::string f, std::string msg) {
    Error e(std::move(f), std::move(msg));
    e.kind = kind;
    return e;
  }

  // Adds what the caller was doing: "reading kallsyms: <the error>". The kind stays.
  Error&& Context(std::string what) && {
    context.push_back(std::move(what));
    return std::move(*this);
  }

  bool has_offset() const { return offset != kNoOffset; }

  // "header.data.size at offset 0x28: section ends at 4096, beyond file size 1000"
  std::string ToString() const;
  // The same, naming the input file once: "FILE: field at offset ...", or ToString() alone
  // when the error is about the file itself (its field is the path).
  std::string ToStringIn(const std::string& file) const;
};

// Holds either a T or an Error. Accessing the wrong alternative is a programming error
// (checked by std::get), never the outcome of bad input.
template <typename T>
class [[nodiscard]] Result {
 public:
  static_assert(!std::is_same_v<T, Error>, "Result<Error> is ambiguous");

  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result for operations that only succeed or fail.
template <>
class [[nodiscard]] Result<void> {
 public:
  // Not "= default": Ok() value-initializes, which would zero the Error's storage too.
  Result() {}                                      // NOLINT: not = default, see above
  Result(Error error) : err_(std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return !err_.has_value(); }
  explicit operator bool() const { return ok(); }
  // An empty Error when ok().
  const Error& error() const {
    static const Error kNone;
    return err_ ? *err_ : kNone;
  }

 private:
  // Empty when ok: a success, returned for every record on the hot paths, builds no Error.
  std::optional<Error> err_;
};

using Status = Result<void>;

inline Status Ok() {
  return Status();
}

// PBID_ASSIGN_OR_RETURN(auto x, F()): x = *F(), or return F()'s error from the enclosing
// function (which returns a Result or Status). PBID_RETURN_IF_ERROR(G()) for a Status.
#define PBID_CONCAT_INNER_(a, b) a##b
#define PBID_CONCAT_(a, b) PBID_CONCAT_INNER_(a, b)
#define PBID_ASSIGN_OR_RETURN(lhs, expr) \
  PBID_ASSIGN_OR_RETURN_IMPL_(PBID_CONCAT_(pbid_result_, __LINE__), lhs, expr)
#define PBID_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok())                                    \
    return tmp.error();                             \
  lhs = std::move(*tmp)
#define PBID_RETURN_IF_ERROR(expr) \
  do {                             \
    auto pbid_status_ = (expr);    \
    if (!pbid_status_.ok())        \
      return pbid_status_.error(); \
  } while (0)

}  // namespace pbid

#endif  // PBID_RESULT_H_
