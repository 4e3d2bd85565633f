#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# interop-newer.sh RELEASE PERF-BUILDID WORKLOAD WORKDIR: the interop and compressed-file tests
# (interop.sh, compressed.sh) against the linux-perf of Debian RELEASE (trixie: 6.12, sid: 7.2, the
# newest), run from a cached root (scripts/debian-perf-root.sh) on this kernel, in both
# directions: their recordings (default, -g, -a, pipe, -z) read by perf-buildid and ours read by
# their report, script, buildid-list and inject. Prints TAP; exit 77 (skip) when not root or
# mmdebstrap is missing and the root is not cached yet. Making the root takes a few minutes once.
set -u
RELEASE=$1
PB=$2
WL=$3
W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP not root: perf runs in a chroot of the $RELEASE root"
	exit 77
fi
if ! root=$("$REPO/scripts/debian-perf-root.sh" "$RELEASE" 2>"$W.root.err"); then
	if ! command -v mmdebstrap >/dev/null; then
		echo "1..0 # SKIP mmdebstrap not installed and no cached $RELEASE root"
		exit 77
	fi
	echo "Bail out! $RELEASE root: $(tail -1 "$W.root.err")"
	exit 1
fi
rm -rf "$W"
mkdir -p "$W"
# perf is one executable for the tests: a wrapper that enters the root, with the build tree
# (the workloads, whose symbols perf reads) visible at its own path.
cat >"$W/perf" <<WRAP
#!/bin/sh
PERF_ROOT_BINDS='$(dirname "$WL"):$(dirname "$PB"):$W' exec '$HERE/perf-in-root.sh' '$root' "\$@"
WRAP
chmod +x "$W/perf"
failed=0
for t in interop compressed; do
	echo "# $t.sh with $("$W/perf" --version) ($RELEASE)"
	PERF=$W/perf "$HERE/$t.sh" "$PB" "$WL" "$W/$t" | sed "s/^\(not \)\{0,1\}ok \([0-9]*\) - /&[$t] /"
	[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
done
exit $failed
