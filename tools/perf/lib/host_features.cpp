// SPDX-License-Identifier: GPL-2.0
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "pbid/perf_data.h"
#include "pbid/version.h"

namespace pbid {

namespace {

// perf's CPUDESC is the "model name" of x86 /proc/cpuinfo with runs of blanks squeezed.
std::optional<std::string> CpuDesc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0)
      continue;
    auto colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string v = line.substr(colon + 1);
    std::string out;
    for (char c : v) {
      if ((c == ' ' || c == '\t') && (out.empty() || out.back() == ' '))
        continue;
      out += (c == '\t') ? ' ' : c;
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    return out;
  }
  return std::nullopt;
}

}  // namespace

Features HostFeatures() {
  Features f;
  struct utsname u;
  if (uname(&u) == 0) {
    f.hostname = u.nodename;
    f.osrelease = u.release;
    f.arch = u.machine;
  }
  long conf = sysconf(_SC_NPROCESSORS_CONF);
  long onln = sysconf(_SC_NPROCESSORS_ONLN);
  if (conf > 0 && onln > 0) {
    f.nr_cpus_avail = static_cast<uint32_t>(conf);
    f.nr_cpus_online = static_cast<uint32_t>(onln);
  }
  f.cpudesc = CpuDesc();
  if (!f.cpudesc)
    f.cpudesc = f.arch;
  f.version = VersionString();
  return f;
}

}  // namespace pbid
