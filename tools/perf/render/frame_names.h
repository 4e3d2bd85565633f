// SPDX-License-Identifier: GPL-2.0
//
// How perf names a frame: in a call chain "function", "function (inlined)" or the address as
// "0x7f12..."; in the table's symbol column "[k] function" or "[.] function", or the address
// with 16 digits. The views all name frames here.
#ifndef PBID_RENDER_FRAME_NAMES_H_
#define PBID_RENDER_FRAME_NAMES_H_

#include <cinttypes>
#include <cstdio>
#include <string>

#include "pbid/symbolize/profile.h"

namespace pbid::render {

// Appends the name to out: a writer of many names keeps one buffer.
inline void AppendChainName(const Profile& profile, uint32_t id, std::string& out) {
  const ProfileFrame& f = profile.Frame(id);
  if (!f.named()) {
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%#" PRIx64, f.address);
    out.append(buf, static_cast<size_t>(n));
    return;
  }
  out += profile.Name(f.symbol);
  if (f.inlined)
    out += " (inlined)";
}

inline std::string ChainName(const Profile& profile, uint32_t id) {
  std::string s;
  AppendChainName(profile, id, s);
  return s;
}

// kernel_mark: "[k]" rather than "[.]" (the frame's kind, except where perf keeps another).
// Appends it to out, as AppendChainName.
inline void AppendSymbolCell(const Profile& profile, uint32_t id, bool kernel_mark,
                             std::string& out) {
  const ProfileFrame& f = profile.Frame(id);
  out += kernel_mark ? "[k] " : "[.] ";
  if (f.named()) {
    out += profile.Name(f.symbol);
    return;
  }
  char buf[24];
  int n = snprintf(buf, sizeof(buf), "%-#.*" PRIx64, 16, f.address);
  out.append(buf, static_cast<size_t>(n));
}

}  // namespace pbid::render

#endif  // PBID_RENDER_FRAME_NAMES_H_
