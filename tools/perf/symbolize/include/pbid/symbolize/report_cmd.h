// SPDX-License-Identifier: GPL-2.0
//
// Entry point of `perf-buildid report` for the CLI dispatcher: argv[0] is "report".
#ifndef PBID_SYMBOLIZE_REPORT_CMD_H_
#define PBID_SYMBOLIZE_REPORT_CMD_H_

int pbid_cmd_report(int argc, char** argv);

#endif  // PBID_SYMBOLIZE_REPORT_CMD_H_
