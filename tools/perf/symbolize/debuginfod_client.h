// SPDX-License-Identifier: GPL-2.0
//
// Internal: elfutils' libdebuginfod behind a small RAII class with a negative cache, so that a
// build ID the servers do not have is asked for once per run, not once per sample.
//
// The library is loaded (dlopen) by the first client that has servers to ask, not linked: it
// brings libcurl and its TLS, Kerberos and LDAP libraries, which would cost every run of every
// command start-up time and memory (architecture.md), and most runs never query a server.
//
// A run never waits on the servers longer than its budget: the clock starts with the first
// query, and a transfer still going at the deadline is aborted (libdebuginfod's progress
// callback). Once a query fails for another reason than "not there" (refused, timed out by
// DEBUGINFOD_TIMEOUT, a server error), the servers are not asked again in this run.
// libdebuginfod asks every server of DEBUGINFOD_URLS in one query, so that is the whole list.
#ifndef PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_
#define PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/result.h"

struct debuginfod_client;

namespace pbid {

class DebuginfodClient {
 public:
  enum class Kind { kDebuginfo, kExecutable };
  static constexpr double kDefaultBudgetSeconds = 5;
  static constexpr size_t kMaxThreads = 4;  // concurrent queries of a Prefetch

  // urls: a space-separated server list as in DEBUGINFOD_URLS. Empty: use DEBUGINFOD_URLS from
  // the environment; if that is unset too, the client is disabled (Enabled() is false) and
  // libdebuginfod is not loaded. With servers, a libdebuginfod that cannot be loaded, or
  // cannot begin a client, is an error (kIo): the system lacks what the caller asked for.
  // budget_seconds: the most time the queries of this client take, all together.
  static Result<std::unique_ptr<DebuginfodClient>> Create(
      const std::string& urls, double budget_seconds = kDefaultBudgetSeconds);
  ~DebuginfodClient();
  DebuginfodClient(const DebuginfodClient&) = delete;
  DebuginfodClient& operator=(const DebuginfodClient&) = delete;

  bool Enabled() const { return client_ != nullptr; }
  const std::string& urls() const { return urls_; }

  // Asks for all of these at once, up to kMaxThreads at a time (one libdebuginfod client
  // each), within the budget, and keeps the answers for Find. Returns when every query has
  // ended, by the deadline at the latest (plus libdebuginfod's one-second poll).
  void Prefetch(const std::vector<std::pair<BuildId, Kind>>& wanted);

  // The path of the file in the client cache, std::nullopt when no server has it (or the
  // client is disabled, or the budget is spent, or the servers failed before). Network and
  // server errors also give std::nullopt, with the reason kept in last_error() for the report.
  std::optional<std::string> Find(const BuildId& id, Kind kind);

  // How many requests actually went to the servers (the negative cache avoids repeats).
  int queries() const;
  // Lookups not made, or aborted, because the budget was spent or the servers had failed,
  // and why (the last reason).
  int skipped() const;
  std::string skip_reason() const;
  std::string last_error() const;

 private:
  DebuginfodClient() = default;

  struct Library;  // libdebuginfod's entry points
  static Result<const Library*> Load();
  using Key = std::pair<BuildId, Kind>;
  enum class Outcome { kFound, kMissing, kFailed, kOutOfTime };
  struct Answer {
    Outcome outcome = Outcome::kMissing;
    std::string path;   // kFound
    std::string error;  // kFailed
  };

  // Under mu_: true when a query may start now (the clock starts with the first one);
  // otherwise counts key as skipped.
  bool MayAsk(const Key& key);
  // One query on client c, which only the calling thread uses. Touches no member but lib_.
  Answer Query(debuginfod_client* c, const Key& key,
               std::chrono::steady_clock::time_point deadline) const;
  void Keep(const Key& key, const Answer& a);  // under mu_

  const Library* lib_ = nullptr;
  debuginfod_client* client_ = nullptr;
  std::string urls_;
  std::chrono::duration<double> budget_{kDefaultBudgetSeconds};

  mutable std::mutex mu_;  // what follows, written by Prefetch's threads
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string servers_failed_;  // why the servers are not asked again; empty while they are
  std::set<Key> missing_;
  std::map<Key, std::string> found_;
  std::set<Key> skipped_;
  std::string skip_reason_;
  int queries_ = 0;
  std::string last_error_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_DEBUGINFOD_CLIENT_H_
