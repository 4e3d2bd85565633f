#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# archive-guest.sh PERF_BUILDID PAYLOAD OUT: the guest half of the fleet round trip
# (kernel/scripts/vm-archive.sh), in busybox sh. Records, with `record --archive OUT/archive`,
# a workload whose files change on disk while it runs: pbid-workload with its shared library
# deleted and its executable replaced at its path, and the churn workload's short-lived
# children (a third of their files deleted, a third replaced while they run). Then the
# reference: report in the guest right after recording, as a user there would run it. The host
# half (archive-served.sh) reads OUT back from the disk.
set -eu
set -o pipefail
PB=$1 P=$2 OUT=$3

mkdir -p /tmp/w /tmp/churn
cp "$P/pbid-workload" "$P/libpbidwork.so" /tmp/w/
# LD_LIBRARY_PATH (the payload's) would load /payload's copy of the library, not /tmp/w's.
cat >/tmp/load.sh <<EOS
unset LD_LIBRARY_PATH
/tmp/w/pbid-workload 2000 &
w=\$!
sleep 0.5
rm /tmp/w/libpbidwork.so
cp /bin/busybox /tmp/w/replacement
mv /tmp/w/replacement /tmp/w/pbid-workload
"$P/pbid-churn" /tmp/churn 12 >"$OUT/churn.txt"
wait \$w
EOS
echo "archive-guest: recording"
"$PB" record --archive "$OUT/archive" -o "$OUT/run.data" -- sh /tmp/load.sh 2>"$OUT/record.err"
cat "$OUT/record.err"
# The libraries, the executable and the children's files are gone or replaced now.
test ! -e /tmp/w/libpbidwork.so
"$PB" report -i "$OUT/run.data" --no-debuginfod >"$OUT/reference.txt"
echo "archive-guest: done, $(find "$OUT/archive" -type f | wc -l) files archived"
