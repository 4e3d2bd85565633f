// SPDX-License-Identifier: GPL-2.0
//
// The project version (the repository's VERSION file) and the git commit it was built from.
#ifndef PBID_VERSION_H_
#define PBID_VERSION_H_

#include <string>

namespace pbid {

const char* Version();    // "0.1.0"
const char* GitCommit();  // "8316101abcde", "8316101abcde-dirty" or "unknown"
// "perf-buildid 0.1.0 (git 8316101abcde)": what --version prints and the VERSION feature of
// the files we write carries, as perf writes its own version there.
std::string VersionString();

}  // namespace pbid

#endif  // PBID_VERSION_H_
