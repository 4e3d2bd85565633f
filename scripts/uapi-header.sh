#!/usr/bin/env bash
# uapi-header.sh [--check]: include/uapi/linux/perf_event.h is the header the kernel series
# produces: Debian's linux-source-5.10 with kernel/patches/linux-5.10 applied (the lab's
# patched tree, kernel/scripts/source.sh). perf-buildid compiles against it, so the build-id
# ABI is the same on Debian 11, whose system header predates it, and never drifts from the
# series. Without arguments, copies it from the series; with --check, fails (and shows the
# difference) when the copy in the repository differs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rel=include/uapi/linux/perf_event.h
tree=$("$repo/kernel/scripts/source.sh" 5.10-buildid)
case ${1:-} in
--check)
	if diff -u "$tree/$rel" "$repo/$rel" >&2; then
		echo "$rel equals the series' result ($(sha256sum <"$repo/$rel" | cut -c1-16))"
	else
		echo "$rel differs from the series' result; run 'make uapi-header'" >&2
		exit 1
	fi
	;;
'')
	install -m 644 "$tree/$rel" "$repo/$rel"
	echo "$rel: copied from the series"
	;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
