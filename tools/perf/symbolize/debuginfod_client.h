// SPDX-License-Identifier: GPL-2.0
//
// Internal: elfutils' libdebuginfod behind a small RAII class with a negative cache, so that a
// build ID the servers do not have is asked for once per run, not once per sample.
//
// The library is loaded (dlopen) by the first client that has servers to ask, not linked: it
// brings libcurl and its TLS, Kerberos and LDAP libraries, which would cost every run of every
// command start-up time and memory (architecture.md), and most runs never query a server.
#ifndef PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_
#define PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "pbid/build_id.h"
#include "pbid/result.h"

struct debuginfod_client;

namespace pbid {

class DebuginfodClient {
 public:
  enum class Kind { kDebuginfo, kExecutable };

  // urls: a space-separated server list as in DEBUGINFOD_URLS. Empty: use DEBUGINFOD_URLS from
  // the environment; if that is unset too, the client is disabled (Enabled() is false) and
  // libdebuginfod is not loaded. With servers, a libdebuginfod that cannot be loaded, or
  // cannot begin a client, is an error (kIo): the system lacks what the caller asked for.
  static Result<std::unique_ptr<DebuginfodClient>> Create(const std::string& urls);
  ~DebuginfodClient();
  DebuginfodClient(const DebuginfodClient&) = delete;
  DebuginfodClient& operator=(const DebuginfodClient&) = delete;

  bool Enabled() const { return client_ != nullptr; }
  const std::string& urls() const { return urls_; }

  // The path of the file in the client cache, std::nullopt when no server has it (or the
  // client is disabled). Network and server errors also give std::nullopt, with the reason
  // kept in last_error() for the report.
  std::optional<std::string> Find(const BuildId& id, Kind kind);

  // How many requests actually went to the servers (the negative cache avoids repeats).
  int queries() const { return queries_; }
  const std::string& last_error() const { return last_error_; }

 private:
  DebuginfodClient() = default;

  struct Library;  // libdebuginfod's entry points
  static Result<const Library*> Load();

  const Library* lib_ = nullptr;
  debuginfod_client* client_ = nullptr;
  std::string urls_;
  std::set<std::pair<BuildId, Kind>> missing_;
  std::map<std::pair<BuildId, Kind>, std::string> found_;
  int queries_ = 0;
  std::string last_error_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_
