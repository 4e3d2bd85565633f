#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-in-root.sh ROOT PERF-ARGS...: runs the perf of a Debian root (scripts/debian-perf-root.sh)
# on this kernel, as if it were /usr/bin/perf: in a private mount namespace with /proc, /sys and
# /dev, the current directory and PERF_ROOT_BINDS (colon-separated directories, e.g. the build
# tree holding the workloads whose symbols perf reads) bind-mounted at their own paths. Standard
# input and output pass through, so pipe mode works. Needs root.
set -euo pipefail
root=$1
shift
# The inner script goes by -c, not on standard input, which is perf's (perf report -i -).
inner=$(cat <<'INNER'
set -euo pipefail
root=$1 cwd=$2 binds=$3
shift 3
mount --make-rprivate /
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
IFS=: read -ra dirs <<<"$binds"
for d in "$cwd" "${dirs[@]}"; do
	[ -n "$d" ] || continue
	mkdir -p "$root$d"
	mount --bind "$d" "$root$d"
done
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
	bash -c 'cd "$1" && shift && exec perf "$@"' perf "$cwd" "$@"
INNER
)
exec unshare --mount --fork bash -c "$inner" perf-in-root "$root" "$PWD" "${PERF_ROOT_BINDS:-}" "$@"
