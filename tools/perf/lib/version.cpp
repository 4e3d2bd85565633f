// SPDX-License-Identifier: GPL-2.0
#include "pbid/version.h"

#include "pbid_git_version.h"

namespace pbid {

const char* Version() {
  return PBID_VERSION;
}

const char* GitCommit() {
  return PBID_GIT_COMMIT;
}

std::string VersionString() {
  return std::string("perf-buildid ") + PBID_VERSION + " (git " + PBID_GIT_COMMIT + ")";
}

}  // namespace pbid
