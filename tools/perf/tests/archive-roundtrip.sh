#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# archive-roundtrip.sh PERF_BUILDID WORKLOAD_DIR OUTDIR
#
# The fleet workflow on this host: record the fixture workload (an executable and its shared
# library, copied to OUTDIR), take a reference report, archive the recording, delete the copies,
# serve the archive with elfutils' real `debuginfod -F` on loopback, and report again in a mount
# namespace where every file the recording names is out of reach (each recorded path covered by
# /dev/null, /usr/lib/debug by an empty tmpfs; perf-buildid itself runs from copies of its
# libraries). The second report must name every sample the reference names, through the
# server alone. Also: a second archive run copies nothing (shared, incremental), and
# debuginfod-find fetches the same files.
set -euo pipefail

. "$(dirname "$0")/util/fleet.sh"
PB=$(readlink -f "$1")
WL=$(readlink -f "$2")
OUT=$3

command -v debuginfod >/dev/null || { echo "SKIP: no debuginfod (elfutils)"; exit 77; }
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
cd "$OUT"
# The table rows of a report (no comments, no blank lines).
rows() { grep -v '^#' | grep -v '^[[:space:]]*$' || true; }

mkdir w
cp "$WL/pbid-workload" "$WL/libpbidwork.so" w/
if ! "$PB" record -o rec.data -- w/pbid-workload 300 >record.log 2>&1; then
	if grep -q 'perf_event_open' record.log; then
		echo "SKIP: no perf events here"
		exit 77
	fi
	cat record.log
	exit 1
fi
"$PB" report -i rec.data --no-debuginfod | rows >reference.txt

"$PB" archive -i rec.data -o archive --no-debuginfod >archive1.txt 2>archive1.err
"$PB" archive -i rec.data -o archive --no-debuginfod >archive2.txt 2>archive2.err
cat archive1.txt archive1.err
files=$(find archive -type f | wc -l)
file_bytes() { find "$1" -type f -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }'; }
bytes=$(file_bytes archive)
echo "archive: $files files, $bytes bytes"
check "every user file hit is stored" \
	test "$(grep -c '^stored' archive1.txt)" = "$(grep -vc 'kernel image' archive1.txt)"
check "a second run copies nothing" grep -q 'copied 0 files, 0 bytes' archive2.err
check "a second run finds all present" test "$(grep -c '^present' archive2.txt)" = \
	"$(grep -c '^stored' archive1.txt)"
check "only regular files (debuginfod -F skips links)" \
	test -z "$(find archive ! -type f ! -type d)"

# Tarballs of the same files, plain and zstd-compressed, in the same layout.
"$PB" archive -i rec.data -o rec.tar --no-debuginfod >/dev/null 2>&1
"$PB" archive -i rec.data -o rec.tar.zst --no-debuginfod >/dev/null 2>&1
for t in rec.tar rec.tar.zst; do
	mkdir "x-$t"
	tar -xf "$t" -C "x-$t"
	check "$t holds the archive's files" diff -r archive "x-$t"
done

# The cap: an archive holding another recording's files (ls), used longer ago, then this
# recording's with --max-size its own size: ls's own IDs go, the shared libc stays.
"$PB" record -o other.data -- ls -R /usr/lib >/dev/null 2>&1
"$PB" archive -i other.data -o capped --no-debuginfod >other.txt 2>/dev/null
find capped -type f -exec touch -d '2000-01-01' {} +
"$PB" archive -i rec.data -o capped --no-debuginfod --max-size "$bytes" >/dev/null 2>cap.err
cat cap.err
ls_id=$(awk -F'\t' '$3 == "/usr/bin/ls" { print $2 }' other.txt)
check "the cap evicts the least recently used ID" test ! -e "capped/${ls_id:0:2}/${ls_id:2}"
check "the cap keeps every file this recording needs" \
	diff <(cd archive && find . -type f | sort) <(cd capped && find . -type f | sort)
check "the archive is within the cap" test "$(file_bytes capped)" -le "$bytes"
"$PB" archive -i rec.data -o capped --no-debuginfod --max-size 1K >/dev/null 2>cap2.err
check "a cap below this recording's needs warns and evicts none of it" \
	grep -q 'exceed --max-size' cap2.err
check "... and keeps its files" \
	diff <(cd archive && find . -type f | sort) <(cd capped && find . -type f | sort)

# A file replaced after the recording has another build ID: never taken, listed with why.
mkdir w2
cp "$WL/pbid-workload" "$WL/libpbidwork.so" w2/
"$PB" record -o replaced.data -- w2/pbid-workload 100 >/dev/null 2>&1
cp "$(type -P true)" w2/pbid-workload
"$PB" archive -i replaced.data -o replaced --no-debuginfod --debug-root '' >replaced.txt 2>&1 || true
check "a replaced file is listed missing with its reason" \
	grep -q "^missing.*w2/pbid-workload.*has another build ID" replaced.txt
gone_id=$(awk -F'\t' '$1 == "missing" && $3 ~ /w2\/pbid-workload$/ { print $2 }' replaced.txt)
check "... and nothing stored under its ID" test ! -e "replaced/${gone_id:0:2}"

# record --archive: the churn workload's children each run a file with a build ID of its own,
# a third of them deleted and a third replaced at their path while they run. Each file is
# copied from its mapping while its process runs: every child's ID must be in the archive,
# with that ID. The archive command, after the fact, can only list the deleted ones missing.
mkdir churn
if ! "$PB" record --archive live -o churn.data -- "$WL/pbid-churn" churn 45 >churn.txt 2>churn.err; then
	cat churn.err
	echo "FAIL: record --archive of the churn workload"
	exit 1
fi
grep '^\[ archive' churn.err || { cat churn.err; echo "FAIL: no archive summary"; fail=1; }
have=0 wrong=0 total=0
while read -r pid id mode; do
	total=$((total + 1))
	f="live/${id:0:2}/${id:2}"
	if [ ! -f "$f" ]; then
		echo "not archived: child $pid ($mode) $id"
	elif [ "$(readelf -n "$f" | awk '/Build ID/ { print $3 }')" != "$id" ]; then
		wrong=$((wrong + 1))
	else
		have=$((have + 1))
	fi
done <churn.txt
echo "record --archive: $have of $total children's files archived, $wrong with another ID"
check "record --archive stores every child's file, deleted and replaced ones too" \
	test "$have" = "$total" -a "$total" -gt 0
check "... each under its own build ID" test "$wrong" = 0
check "... the files are regular files" test -z "$(find live ! -type f ! -type d)"
"$PB" archive -i churn.data -o after --no-debuginfod >after.txt 2>/dev/null || true
deleted=$(awk '$3 == "deleted"' churn.txt | wc -l)
check "archiving after the fact misses the deleted children's files" \
	test "$(grep -c '^missing.*churn/deleted-' after.txt)" -gt 0 -a "$deleted" -gt 0
# The same recording again into a capped copy holding an old, unrelated build ID.
cp -r live capped-live
mkdir -p capped-live/ff
cp "$(type -P true)" capped-live/ff/00000000000000000000000000000000000000
touch -d '2000-01-01' capped-live/ff/00000000000000000000000000000000000000
"$PB" record --archive capped-live --archive-max 1 -o churn2.data -- "$WL/pbid-churn" churn 3 \
	>/dev/null 2>churn2.err
check "--archive-max evicts an old ID no recording needs" \
	test ! -e capped-live/ff/00000000000000000000000000000000000000
check "--archive-max below the recording's needs warns" grep -q 'exceed --archive-max' churn2.err

# A program without a GNU build ID (--build-id=none): known by its file hash, stored as
# file-hash/xx/yyyy by record --archive and by archive, and found there by report --debug-dir
# once the program is gone. debuginfod has no key for it.
mkdir nobid
cat >nobid/spin.c <<'EOC'
#include <time.h>
__attribute__((noinline)) static unsigned long nobid_spin(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}
int main(void)
{
	volatile unsigned long x = 1;
	time_t end = time(0) + 1;
	while (time(0) <= end)
		x = nobid_spin(x);
	return 0;
}
EOC
cc -O1 -g -Wl,--build-id=none -o nobid/spin nobid/spin.c
"$PB" record --archive nobid-live -o nobid.data -- nobid/spin >/dev/null 2>nobid.err
"$PB" archive -i nobid.data -o nobid-after --no-debuginfod >nobid-after.txt 2>/dev/null
hash=$(awk -F'\t' '$3 ~ /nobid\/spin$/ { sub("file-hash:", "", $2); print $2 }' nobid-after.txt)
check "archive stores a file without a build ID by its file hash" \
	grep -q "^stored	file-hash:[0-9a-f]\{32\}	.*nobid/spin$" nobid-after.txt
check "record --archive stores it too, the same bytes" \
	cmp -s nobid/spin "nobid-live/file-hash/${hash:0:2}/${hash:2}"
"$PB" report -i nobid.data --no-debuginfod | rows >nobid-reference.txt
rm -rf nobid
"$PB" report -i nobid.data --no-debuginfod --debug-dir nobid-live | rows >nobid-archived.txt
check "report names its samples from the archive once the program is gone" \
	grep -q '\[\.\] nobid_spin' nobid-archived.txt
check "... as it named them before" cmp nobid-reference.txt nobid-archived.txt

# The binaries of the recording are gone.
rm -rf w

# debuginfod on a free loopback port; its first scan is over when it serves the workload.
wl_id=$(awk -F'\t' '$3 ~ /pbid-workload$/ { print $2 }' archive1.txt)
start_debuginfod "$OUT/archive" "$OUT" "$wl_id" || exit 1
while IFS=$'\t' read -r what id path; do
	[ "$what" = stored ] || continue
	got=$(debuginfod-find executable "$id" 2>/dev/null || true)
	check "debuginfod-find fetches $path" cmp -s "$got" "archive/${id:0:2}/${id:2}"
done <archive1.txt

# Hide every file the recording names, and the system's debug files.
report_without_files "$PB" rec.data "$OUT" --debug-root '' >roundtrip-full.txt 2>roundtrip.err
rows <roundtrip-full.txt >roundtrip.txt
grep 'Symbols by build ID' roundtrip-full.txt || true

echo "symbolized user samples: reference $(user_share reference.txt), round trip $(user_share roundtrip.txt)"
check "the round trip names every sample the reference names" cmp reference.txt roundtrip.txt
check "the modules came from debuginfod" grep -q 'debuginfod [1-9]' roundtrip-full.txt
exit "$fail"
