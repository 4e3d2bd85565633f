// SPDX-License-Identifier: GPL-2.0
//
// A shared library loaded when it is first needed (dlopen), so that every other run goes
// without it and what it links: libdebuginfod (debuginfod_client.cpp) and libarchive
// (archive.cpp). The entry points are typed by the library header's declarations, so that a
// changed signature fails to build.
#ifndef PBID_SYMBOLIZE_LOADED_LIBRARY_H_
#define PBID_SYMBOLIZE_LOADED_LIBRARY_H_

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "pbid/result.h"

namespace pbid {

class LoadedLibrary {
 public:
  // Loads `soname`; an error of kind kIo under `field`, dlerror()'s words (which name the
  // file) and `remedy` after them. The library stays loaded.
  static Result<LoadedLibrary> Open(const char* soname, const char* field, const char* remedy) {
    void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return Error::Of(
          ErrorKind::kIo, field,
          (why != nullptr ? std::string(why) : std::string(soname) + ": dlopen failed") + " (" +
              remedy + ")");
    }
    return LoadedLibrary(handle, soname, field);
  }
  // *fn = the entry point `name`; Done() names the first one missing.
  template <typename Fn>
  void Bind(Fn** fn, const char* name) {
    *fn = reinterpret_cast<Fn*>(dlsym(handle_, name));
    if (*fn == nullptr && missing_ == nullptr)
      missing_ = name;
  }
  Status Done() const {
    if (missing_ != nullptr)
      return Error::Of(ErrorKind::kIo, field_, std::string(soname_) + " has no " + missing_);
    return Ok();
  }

 private:
  LoadedLibrary(void* handle, const char* soname, const char* field)
      : handle_(handle), soname_(soname), field_(field) {}
  void* handle_;
  const char* soname_;
  const char* field_;
  const char* missing_ = nullptr;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_LOADED_LIBRARY_H_
