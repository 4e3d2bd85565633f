// SPDX-License-Identifier: GPL-2.0
//
// The read-only commands in-process, with their options, on the input as a file: buildid-list,
// maps, script and dump. Their output goes to /dev/null.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../cli/cli.h"
#include "fuzz_util.h"

namespace {

int Run(int (*cmd)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  return cmd(static_cast<int>(args.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The commands print to stdout; libFuzzer reports on stderr.
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
    abort();
  close(null);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static pbid::fuzz::InputFile input;
  const std::string& path = input.Write(data, size);
  // Errors are one line each on stderr; keep them out of the fuzzer's log.
  FILE* saved = stderr;
  static FILE* null_err = fopen("/dev/null", "we");
  stderr = null_err;
  Run(pbid_cmd_buildid_list, {"buildid-list", "-i", path});
  Run(pbid_cmd_buildid_list, {"buildid-list", "-i", path, "-H", "-s"});
  Run(pbid_cmd_maps, {"maps", "-i", path});
  Run(pbid_cmd_maps, {"maps", "-i", path, "--json", "-p", "-1"});
  Run(pbid_cmd_script, {"script", "-i", path});
  Run(pbid_cmd_dump, {"dump", "-i", path});
  stderr = saved;
  clearerr(stdout);
  return 0;
}
