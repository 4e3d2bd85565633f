// SPDX-License-Identifier: GPL-2.0
//
// Stand-alone driver for the report command, used by the tests so that they do not depend on
// how the perf-buildid CLI dispatches commands.
int pbid_cmd_report(int argc, char** argv);

int main(int argc, char** argv) {
  return pbid_cmd_report(argc, argv);
}
