#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# modules-host.sh PERF_BUILDID MODULES OUT: the host half of kernel/scripts/vm-modules.sh. OUT is
# what the guest left (modules-guest.sh), MODULES the directory of the two .ko files it loaded.
# Checks, for each module:
#   - the build ID the guest's sysfs showed is the one readelf reads from the .ko, and the two
#     modules' differ;
#   - perf-buildid buildid-list -H and perf's buildid-list list it under "[name]" with that ID;
#   - report, on this machine (another kernel: no kallsyms to trust), names the module's spin
#     function from the .ko found by build ID alone (a --debug-dir .build-id tree), with the
#     share of samples the guest's report gave it through its own kallsyms.
set -euo pipefail
pb=$1 mods=$2 out=$3
data=$out/modules.data
fail() { echo "modules-host: FAIL: $*" >&2; exit 1; }
[ -s "$data" ] || fail "no recording in $out"
work=$(mktemp -d "${TMPDIR:-/tmp}/modules-host.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debug"

"$pb" buildid-list -H -i "$data" >"$work/ours.txt" || fail "perf-buildid buildid-list failed"
perf buildid-list -i "$data" >"$work/perf.txt" 2>"$work/perf.err" || {
	cat "$work/perf.err" >&2
	fail "perf buildid-list failed"
}
"$pb" report --stdio --no-children --sort dso,sym --no-debuginfod --debug-dir "$work/debug" \
	-i "$data" >"$work/report.txt" 2>"$work/report.err" || {
	cat "$work/report.err" >&2
	fail "perf-buildid report failed"
}
# pbid_mod_b's spin function sits after an .init section in the file, which the kernel leaves
# out of the module's core: the report below must do the same to name it.
readelf -SW "$mods/pbid_mod_b.ko" | awk '/\] \.init[^ ]* / && / AX / { init = 1 }
	/\] \.text\.pbid_spin / { spin = init } END { exit !spin }' ||
	fail "pbid_mod_b.ko: no executable .init section before .text.pbid_spin"
ids=()
for m in pbid_mod_a pbid_mod_b; do
	want=$(readelf -n "$mods/$m.ko" | awk '/Build ID:/ { print $3 }')
	[ -n "$want" ] || fail "$m.ko has no build ID"
	# sysfs shows the note as it is in the file: a 12-byte header, "GNU\0", then the ID.
	sysfs=$(od -An -v -tx1 -j16 "$out/$m.notes" | tr -d ' \n')
	[ "$sysfs" = "$want" ] || fail "$m: the guest's sysfs shows $sysfs, the .ko has $want"
	grep -qx "$want \[$m\]" "$work/ours.txt" ||
		fail "$m: perf-buildid buildid-list -H lacks '$want [$m]': $(cat "$work/ours.txt")"
	grep -q "^$want \[$m\]" "$work/perf.txt" ||
		fail "$m: perf buildid-list lacks '$want [$m]': $(cat "$work/perf.txt")"
	ids+=("$want")
	echo "modules-host: $m: $want, listed by perf-buildid and perf"
done
[ "${ids[0]}" != "${ids[1]}" ] || fail "both modules have the build ID ${ids[0]}"
[ -s "$work/perf.err" ] && { echo "modules-host: perf buildid-list said:"; cat "$work/perf.err"; }

# Report on the host, before the .ko files are where it looks: the modules' code unnamed.
if grep -E 'pbid_mod_[ab]_spin' "$work/report.txt"; then
	fail "report named the modules' code without their .ko files"
fi
for m in pbid_mod_a pbid_mod_b; do
	id=$(readelf -n "$mods/$m.ko" | awk '/Build ID:/ { print $3 }')
	mkdir -p "$work/debug/.build-id/${id:0:2}"
	cp "$mods/$m.ko" "$work/debug/.build-id/${id:0:2}/${id:2}"
done
"$pb" report --stdio --no-children --sort dso,sym --no-debuginfod --debug-dir "$work/debug" \
	-i "$data" >"$work/report.txt" 2>"$work/report.err" || {
	cat "$work/report.err" >&2
	fail "perf-buildid report failed"
}
for m in pbid_mod_a pbid_mod_b; do
	# "    44.95%      365  [pbid_mod_a]       [k] pbid_mod_a_spin" on both sides.
	row='$3 == d && $4 == "[k]" && $5 == s { print $1, $2 }'
	host=$(awk -v d="[$m]" -v s="${m}_spin" "$row" "$work/report.txt")
	guest=$(awk -v d="[$m]" -v s="${m}_spin" "$row" "$out/report-guest.txt")
	[ -n "$guest" ] || fail "the guest's report has no ${m}_spin in [$m]: $(grep pbid_mod "$out/report-guest.txt")"
	[ -n "$host" ] ||
		fail "report by build ID did not name ${m}_spin in [$m]: $(grep -E 'pbid_mod|kernel' "$work/report.txt" | head -5)"
	[ "$host" = "$guest" ] || fail "${m}_spin: $host on the host, $guest in the guest"
	echo "modules-host: ${m}_spin in [$m]: $host (share, samples), by build ID here and by kallsyms in the guest"
done
echo "modules-host: PASS"
