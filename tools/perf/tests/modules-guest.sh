#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# modules-guest.sh PERF_BUILDID PAYLOAD OUT: the guest half of kernel/scripts/vm-modules.sh, in
# busybox sh on a lab kernel (all have loadable modules). Loads the two test modules
# (tools/perf/tests/modules), records system-wide while each module's code runs for a while, and
# reports there, where kallsyms names the modules' symbols: the reference for the host's report by
# build ID. OUT (the guest's disk) takes the recording, the sysfs notes of each module and the
# guest's outputs.
set -eu
set -o pipefail
PB=$1 P=$2 OUT=$3

for m in pbid_mod_a pbid_mod_b; do
	insmod "$P/$m.ko"
	cp "/sys/module/$m/notes/.note.gnu.build-id" "$OUT/$m.notes"
done
tee "$OUT/proc-modules.txt" </proc/modules
echo "modules-guest: recording"
# The kernel's samples of the writing shell land in each module's spin function.
"$PB" record -a -F 2000 -o "$OUT/modules.data" -- sh -c \
	'echo 1500 >/sys/module/pbid_mod_a/parameters/spin_ms; echo 1500 >/sys/module/pbid_mod_b/parameters/spin_ms' \
	2>"$OUT/record.err" || { cat "$OUT/record.err"; exit 1; }
cat "$OUT/record.err"
"$PB" buildid-list -H -i "$OUT/modules.data" | tee "$OUT/buildid-list.txt"
"$PB" report --stdio --no-children --sort dso,sym -i "$OUT/modules.data" >"$OUT/report-guest.txt"
grep -E 'pbid_mod' "$OUT/report-guest.txt" || true
