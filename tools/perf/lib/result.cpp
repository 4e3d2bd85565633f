// SPDX-License-Identifier: GPL-2.0
#include "pbid/result.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace pbid {

std::string Error::ToString() const {
  std::string s;
  for (auto it = context.rbegin(); it != context.rend(); ++it)
    s += *it + ": ";
  s += field;
  if (has_offset()) {
    char buf[40];
    snprintf(buf, sizeof(buf), " at offset %#" PRIx64, offset);
    s += buf;
  }
  if (!s.empty())
    s += ": ";
  s += message;
  if (sys_errno != 0) {
    s += ": ";
    s += strerror(sys_errno);
  }
  return s;
}

std::string Error::ToStringIn(const std::string& file) const {
  return field == file ? ToString() : file + ": " + ToString();
}

}  // namespace pbid
