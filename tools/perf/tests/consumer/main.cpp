// SPDX-License-Identifier: GPL-2.0
//
// pbid_consumer FILE: prints the build ID of ELF FILE and the pbid version, through an
// installed pbid (find_package or pkg-config). Also uses the build-id ABI of the installed
// perf_event.h, which Debian 11's system header lacks.
#include <linux/perf_event.h>

#include <cstdio>

#include "pbid/elf_build_id.h"
#include "pbid/version.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pbid_consumer ELF-FILE\n");
    return 2;
  }
  perf_event_attr attr{};
  attr.build_id = 1;
  auto id = pbid::ReadElfBuildId(argv[1]);
  if (!id.ok()) {
    fprintf(stderr, "pbid_consumer: %s\n", id.error().ToString().c_str());
    return 1;
  }
  printf("%s %s attr.build_id=%u\n", *id ? (*id)->ToHex().c_str() : "none",
         pbid::VersionString().c_str(), static_cast<unsigned>(attr.build_id));
  return 0;
}
