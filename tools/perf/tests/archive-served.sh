#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# archive-served.sh PERF_BUILDID DIR: the host half of the fleet round trip. DIR holds what
# archive-guest.sh wrote in a guest: run.data (recorded with `record --archive`), archive/, the
# guest's own report (reference.txt) and the churn children's IDs (churn.txt). Serves the
# archive with elfutils' `debuginfod -F` on loopback and reports where none of the recorded
# files can be reached, with DEBUGINFOD_URLS alone. Every user sample the guest's report named
# must be named the same way; the samples in files deleted or replaced while recording, which
# the guest's report could not name, must be named too. debuginfod-find must fetch every
# stored file. Kernel samples are left out: they are named from the running kernel.
set -euo pipefail
. "$(dirname "$0")/util/fleet.sh"
PB=$(readlink -f "$1")
D=$(readlink -f "$2")
user_rows() { awk '$4 == "[.]"' "$1" | sort; }
named_user_rows() { awk '$4 == "[.]" && $5 !~ /^0x/' "$1" | sort; }

for f in run.data reference.txt churn.txt; do
	[ -s "$D/$f" ] || { echo "FAIL: the guest wrote $f"; exit 1; }
done
files=$(find "$D/archive" -type f | wc -l)
bytes=$(find "$D/archive" -type f -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
echo "archive: $files files, $bytes bytes"

# Every churn child's file, under its own ID.
have=0 total=0
while read -r pid id mode; do
	total=$((total + 1))
	f="$D/archive/${id:0:2}/${id:2}"
	if [ -f "$f" ] && [ "$(readelf -n "$f" | awk '/Build ID/ { print $3 }')" = "$id" ]; then
		have=$((have + 1))
	else
		echo "not archived: child $pid ($mode) $id"
	fi
done <"$D/churn.txt"
check "record --archive kept $have of $total short-lived children's files" \
	test "$have" = "$total" -a "$total" -gt 0

# The server, probed with the workload's executable (replaced at its path while recording).
wl_id=$("$PB" buildid-list -i "$D/run.data" | awk '$2 ~ /pbid-workload$/ { print $1; exit }')
[ -n "$wl_id" ] || { echo "FAIL: the recording names pbid-workload"; exit 1; }
mkdir -p "$D/host"
start_debuginfod "$D/archive" "$D/host" "$wl_id" || exit 1
fetched=0 stored=0
while IFS= read -r -d '' f; do
	stored=$((stored + 1))
	rel=${f#"$D/archive/"}
	id=${rel/\//}
	kind=executable
	case $id in *.debug) id=${id%.debug} kind=debuginfo ;; esac
	got=$(debuginfod-find "$kind" "$id" 2>/dev/null || true)
	if [ -n "$got" ] && cmp -s "$got" "$f"; then fetched=$((fetched + 1)); else echo "not fetched: $rel"; fi
done < <(find "$D/archive" -type f -print0)
check "debuginfod-find fetches all $stored stored files ($fetched)" test "$fetched" = "$stored"

report_without_files "$PB" "$D/run.data" "$D/host" --debug-root '' >"$D/host/served.txt" \
	2>"$D/host/served.err"
grep 'Symbols by build ID' "$D/host/served.txt" || true
echo "symbolized user samples: guest $(user_share "$D/reference.txt"), served $(user_share "$D/host/served.txt")"
missing=$(comm -23 <(named_user_rows "$D/reference.txt") <(user_rows "$D/host/served.txt"))
[ -z "$missing" ] || printf 'named in the guest, not the same when served:\n%s\n' "$missing"
check "every user sample the guest named is named the same way when served" test -z "$missing"
check "the guest could not name the deleted library's samples" \
	grep -q 'libpbidwork.so *\[\.\] 0x' "$D/reference.txt"
check "... the served report names them" \
	grep -q 'libpbidwork.so *\[\.\] pbid_work_spin' "$D/host/served.txt"
g=$(user_share "$D/reference.txt") s=$(user_share "$D/host/served.txt")
check "the served report names more user samples than the guest's" \
	test "${s%/*}" -gt "${g%/*}" -a "${s#*/}" = "${g#*/}"
exit "$fail"
