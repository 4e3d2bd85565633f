// SPDX-License-Identifier: GPL-2.0
#include "debuginfod_client.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace pbid {

// The header's declarations type the entry points, so that a changed signature fails to build.
struct DebuginfodClient::Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
};

Result<const DebuginfodClient::Library*> DebuginfodClient::Load() {
  // Once per process, failure included. The library stays loaded: clients come and go.
  static const Result<const Library*> loaded = []() -> Result<const Library*> {
    void* handle = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      // dlerror() names the file. The way out: install it, or ask no server.
      return Error::Of(ErrorKind::kIo, "debuginfod",
                       std::string(why != nullptr ? why : DEBUGINFOD_SONAME ": dlopen failed") +
                           " (install libdebuginfod1, or ask no debuginfod server)");
    }
    static Library lib;
    const char* missing = nullptr;
    auto bind = [&](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(handle, name));
      if (*fn == nullptr && missing == nullptr)
        missing = name;
    };
    bind(&lib.begin, "debuginfod_begin");
    bind(&lib.end, "debuginfod_end");
    bind(&lib.find_debuginfo, "debuginfod_find_debuginfo");
    bind(&lib.find_executable, "debuginfod_find_executable");
    if (missing != nullptr) {
      return Error::Of(ErrorKind::kIo, "debuginfod",
                       std::string(DEBUGINFOD_SONAME " has no ") + missing);
    }
    return &lib;
  }();
  return loaded;
}

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
               ? lib_->find_debuginfo(client_, id.data(), static_cast<int>(id.size()), &path)
               : lib_->find_executable(client_, id.data(), static_cast<int>(id.size()), &path);
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
