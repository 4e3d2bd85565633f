#!/usr/bin/env bash
# workload.sh SECONDS: the mixed load that the reading benchmarks record. For SECONDS, one
# process burns CPU while another starts short-lived processes from several distinct binaries
# in a loop, so that a system-wide recording holds thousands of COMM, FORK, EXIT and MMAP2
# records between its samples, as a busy machine's does. Exits when the time is up or when
# the recorder stops it with SIGTERM.
set -euo pipefail
secs=${1:?usage: workload.sh SECONDS}
end=$(( $(date +%s) + secs ))
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; exit 0' TERM INT

# CPU work with deep enough stacks to give callchains: checksumming through a pipeline.
( while [ "$(date +%s)" -lt "$end" ]; do
	head -c 8M /dev/zero | sha256sum >/dev/null
	head -c 4M /dev/zero | gzip -1 | md5sum >/dev/null
done ) &
pids+=("$!")

# Many short processes of distinct binaries.
( while [ "$(date +%s)" -lt "$end" ]; do
	ls /usr/bin >/dev/null
	sed -n 1p /etc/os-release >/dev/null
	awk 'BEGIN { s = 0; for (i = 0; i < 2000; i++) s += i }' </dev/null
	sort -n </etc/services >/dev/null
	cat /proc/self/maps >/dev/null
	id -u >/dev/null
done ) &
pids+=("$!")

wait
