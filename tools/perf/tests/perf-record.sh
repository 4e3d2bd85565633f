# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the shell tests that record with the real perf (PERF).
#
# perf_record ARGS...: `$PERF record ARGS`, run again while perf aborts. Under load perf 6.1
# now and then fails an assertion in its build-ID code (util/build-id.c), smashes its stack and
# dies of SIGABRT (exit 134), with or without -N: perf's fault, not a result of what the test
# checks. Any other status, or an abort three times over, is returned. Not for `-o -`: a second
# run would append to what the first wrote.
perf_record() {
	local attempt rc
	for attempt in 1 2 3; do
		"$PERF" record "$@"
		rc=$?
		[ "$rc" -eq 134 ] || return "$rc"
		echo "# perf record aborted (attempt $attempt): run again" >&2
	done
	return "$rc"
}
