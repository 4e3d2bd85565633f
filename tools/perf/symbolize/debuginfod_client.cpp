// SPDX-License-Identifier: GPL-2.0
#include "debuginfod_client.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pbid {

Result<std::unique_ptr<DebuginfodClient>> DebuginfodClient::Create(const std::string& urls) {
  std::unique_ptr<DebuginfodClient> c(new DebuginfodClient());
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
  c->urls_ = env;
  c->client_ = debuginfod_begin();
  if (c->client_ == nullptr)
    return Error::Of(ErrorKind::kIo, "debuginfod", "debuginfod_begin failed");
  return c;
}

DebuginfodClient::~DebuginfodClient() {
  if (client_ != nullptr)
    debuginfod_end(client_);
}

std::optional<std::string> DebuginfodClient::Find(const BuildId& id, Kind kind) {
  if (client_ == nullptr)
    return std::nullopt;
  auto key = std::make_pair(id, kind);
  if (missing_.count(key) != 0)
    return std::nullopt;
  if (auto it = found_.find(key); it != found_.end())
    return it->second;

  queries_++;
  char* path = nullptr;
  int fd = kind == Kind::kDebuginfo
               ? debuginfod_find_debuginfo(client_, id.data(), static_cast<int>(id.size()), &path)
               : debuginfod_find_executable(client_, id.data(), static_cast<int>(id.size()), &path);
  if (fd < 0) {
    // -ENOENT is the ordinary "server does not have it"; anything else is worth reporting.
    if (fd != -ENOENT) {
      last_error_ = std::string(kind == Kind::kDebuginfo ? "debuginfo " : "executable ") +
                    id.ToHex() + ": " + strerror(-fd);
    }
    free(path);
    missing_.insert(key);
    return std::nullopt;
  }
  close(fd);  // callers reopen by path and check the build ID themselves
  std::string result = path != nullptr ? path : "";
  free(path);
  if (result.empty()) {
    missing_.insert(key);
    return std::nullopt;
  }
  found_.emplace(key, result);
  return result;
}

}  // namespace pbid
