// SPDX-License-Identifier: GPL-2.0
#include "debuginfod_client.h"

#include <elfutils/debuginfod.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "loaded_library.h"

namespace pbid {

// The header's declarations type the entry points, so that a changed signature fails to build.
struct DebuginfodClient::Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
  decltype(&debuginfod_set_progressfn) set_progressfn = nullptr;
  decltype(&debuginfod_set_user_data) set_user_data = nullptr;
  decltype(&debuginfod_get_user_data) get_user_data = nullptr;
};

Result<const DebuginfodClient::Library*> DebuginfodClient::Load() {
  // Once per process, failure included. The library stays loaded: clients come and go.
  static const Result<const Library*> loaded = []() -> Result<const Library*> {
    // dlerror() names the file. The way out: install it, or ask no server.
    auto so = LoadedLibrary::Open(DEBUGINFOD_SONAME, "debuginfod",
                                  "install libdebuginfod1, or ask no debuginfod server");
    if (!so.ok())
      return so.error();
    static Library lib;
    so->Bind(&lib.begin, "debuginfod_begin");
    so->Bind(&lib.end, "debuginfod_end");
    so->Bind(&lib.find_debuginfo, "debuginfod_find_debuginfo");
    so->Bind(&lib.find_executable, "debuginfod_find_executable");
    so->Bind(&lib.set_progressfn, "debuginfod_set_progressfn");
    so->Bind(&lib.set_user_data, "debuginfod_set_user_data");
    so->Bind(&lib.get_user_data, "debuginfod_get_user_data");
    if (Status st = so->Done(); !st.ok())
      return st.error();
    return &lib;
  }();
  return loaded;
}

Result<std::unique_ptr<DebuginfodClient>> DebuginfodClient::Create(const std::string& urls,
                                                                   double budget_seconds) {
  if (!(budget_seconds > 0)) {
    return Error::Of(ErrorKind::kInvalidArgument, "--debuginfod-budget",
                     "the budget must be more than 0 seconds");
  }
  std::unique_ptr<DebuginfodClient> c(new DebuginfodClient());
  c->budget_ = std::chrono::duration<double>(budget_seconds);
  if (!urls.empty()) {
    // libdebuginfod 0.188 has no per-client URL setter: it reads DEBUGINFOD_URLS at every
    // query. An explicit --debuginfod URL therefore replaces the variable for this process.
    if (setenv("DEBUGINFOD_URLS", urls.c_str(), 1) != 0) {
      return Error::Sys("DEBUGINFOD_URLS", errno, "setenv");
    }
  }
  const char* env = getenv("DEBUGINFOD_URLS");
  if (env == nullptr || env[0] == '\0')
    return c;  // disabled, not an error
  auto lib = Load();
  if (!lib.ok())
    return lib.error();
  c->lib_ = *lib;
  c->urls_ = env;
  c->client_ = c->lib_->begin();
  if (c->client_ == nullptr)
    return Error::Of(ErrorKind::kIo, "debuginfod", "debuginfod_begin failed");
  return c;
}

DebuginfodClient::~DebuginfodClient() {
  if (client_ != nullptr)
    lib_->end(client_);
}

namespace {

// What one query's progress callback checks: libdebuginfod calls it about once a second
// while a transfer runs, connecting included, and aborts the transfer when it returns
// non-zero.
struct QueryClock {
  std::chrono::steady_clock::time_point deadline;
  bool aborted = false;
};

std::string SecondsText(double s) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

// libdebuginfod's client cache, found as libdebuginfod finds it.
std::string ClientCachePath() {
  const char* p = getenv("DEBUGINFOD_CACHE_PATH");
  if (p != nullptr && p[0] != '\0')
    return p;
  const char* home = getenv("HOME");
  struct stat st;
  if (home != nullptr && stat((std::string(home) + "/.debuginfod_client_cache").c_str(), &st) == 0)
    return std::string(home) + "/.debuginfod_client_cache";
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] != '\0')
    return std::string(xdg) + "/debuginfod_client";
  return std::string(home != nullptr ? home : "") + "/.cache/debuginfod_client";
}

}  // namespace

DebuginfodClient::Answer DebuginfodClient::Query(
    debuginfod_client* c, const Key& key, std::chrono::steady_clock::time_point deadline) const {
  const auto& [id, kind] = key;
  QueryClock clock{deadline, false};
  lib_->set_user_data(c, &clock);
  lib_->set_progressfn(c, [](debuginfod_client* dc, long, long) -> int {
    auto lib = Load();  // loaded already: the query runs in it
    auto* qc = lib.ok() ? static_cast<QueryClock*>((*lib)->get_user_data(dc)) : nullptr;
    if (qc == nullptr || std::chrono::steady_clock::now() < qc->deadline)
      return 0;
    qc->aborted = true;
    return 1;
  });
  char* path = nullptr;
  int fd = kind == Kind::kDebuginfo
               ? lib_->find_debuginfo(c, id.data(), static_cast<int>(id.size()), &path)
               : lib_->find_executable(c, id.data(), static_cast<int>(id.size()), &path);
  lib_->set_progressfn(c, nullptr);
  lib_->set_user_data(c, nullptr);
  Answer a;
  std::string found = path != nullptr ? path : "";
  free(path);
  if (fd >= 0) {
    close(fd);  // callers reopen by path and check the build ID themselves
    a.outcome = found.empty() ? Outcome::kMissing : Outcome::kFound;
    a.path = std::move(found);
    return a;
  }
  if (clock.aborted) {
    // libdebuginfod 0.188 reports an aborted transfer as -ENOENT and records it in its cache
    // as a miss (an empty file), which every later run, of any tool, would believe for
    // cache_miss_s: the server was not slow to say "not there", it was not heard. The entry
    // goes; a real miss stays cached.
    std::string entry = ClientCachePath() + "/" + id.ToHex() +
                        (kind == Kind::kDebuginfo ? "/debuginfo" : "/executable");
    struct stat st;
    if (stat(entry.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
      unlink(entry.c_str());
    a.outcome = Outcome::kOutOfTime;
    return a;
  }
  // -ENOENT is the ordinary "server does not have it"; anything else is the servers failing.
  if (fd == -ENOENT)
    return a;
  a.outcome = Outcome::kFailed;
  a.error = std::string(kind == Kind::kDebuginfo ? "debuginfo " : "executable ") + id.ToHex() +
            ": " + strerror(-fd);
  return a;
}

bool DebuginfodClient::MayAsk(const Key& key) {
  auto now = std::chrono::steady_clock::now();
  if (!deadline_)
    deadline_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(budget_);
  if (servers_failed_.empty() && now < *deadline_)
    return true;
  skipped_.insert(key);
  skip_reason_ = !servers_failed_.empty()
                     ? servers_failed_
                     : "budget of " + SecondsText(budget_.count()) + " s spent";
  return false;
}

void DebuginfodClient::Keep(const Key& key, const Answer& a) {
  switch (a.outcome) {
    case Outcome::kFound:
      queries_++;
      found_.emplace(key, a.path);
      return;
    case Outcome::kMissing:
      queries_++;
      missing_.insert(key);
      return;
    case Outcome::kFailed:
      queries_++;
      missing_.insert(key);
      last_error_ = a.error;
      if (servers_failed_.empty())
        servers_failed_ = "servers failed: " + a.error;
      return;
    case Outcome::kOutOfTime:
      missing_.insert(key);
      skipped_.insert(key);
      skip_reason_ = "budget of " + SecondsText(budget_.count()) + " s spent";
      return;
  }
}

std::optional<std::string> DebuginfodClient::Find(const BuildId& id, Kind kind) {
  if (client_ == nullptr)
    return std::nullopt;
  Key key(id, kind);
  std::chrono::steady_clock::time_point deadline;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = found_.find(key); it != found_.end())
      return it->second;
    if (missing_.count(key) != 0 || skipped_.count(key) != 0 || !MayAsk(key))
      return std::nullopt;
    deadline = *deadline_;
  }
  Answer a = Query(client_, key, deadline);
  std::lock_guard<std::mutex> lock(mu_);
  Keep(key, a);
  if (a.outcome != Outcome::kFound)
    return std::nullopt;
  return a.path;
}

void DebuginfodClient::Prefetch(const std::vector<std::pair<BuildId, Kind>>& wanted) {
  if (client_ == nullptr)
    return;
  std::vector<Key> todo;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<Key> seen;
    for (const Key& k : wanted) {
      if (found_.count(k) == 0 && missing_.count(k) == 0 && skipped_.count(k) == 0 &&
          seen.insert(k).second)
        todo.push_back(k);
    }
  }
  if (todo.empty())
    return;
  // One libdebuginfod client per thread: a client holds one query's state. They are begun
  // here, on one thread: debuginfod_begin initialises libcurl, which is not thread-safe.
  std::vector<debuginfod_client*> clients = {client_};
  while (clients.size() < std::min(kMaxThreads, todo.size())) {
    debuginfod_client* c = lib_->begin();
    if (c == nullptr)
      break;  // fewer threads, not an error
    clients.push_back(c);
  }
  std::atomic<size_t> next{0};
  auto work = [&](debuginfod_client* c) {
    for (size_t i; (i = next++) < todo.size();) {
      std::chrono::steady_clock::time_point deadline;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!MayAsk(todo[i]))
          continue;
        deadline = *deadline_;
      }
      Answer a = Query(c, todo[i], deadline);
      std::lock_guard<std::mutex> lock(mu_);
      Keep(todo[i], a);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < clients.size(); t++)
    threads.emplace_back(work, clients[t]);
  work(clients[0]);
  for (std::thread& t : threads)
    t.join();
  for (size_t t = 1; t < clients.size(); t++)
    lib_->end(clients[t]);
}

int DebuginfodClient::queries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queries_;
}

int DebuginfodClient::skipped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(skipped_.size());
}

std::string DebuginfodClient::skip_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return skip_reason_;
}

std::string DebuginfodClient::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace pbid
