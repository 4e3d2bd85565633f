#!/usr/bin/env bash
# workload.sh SECONDS [SEED]: the mixed load that the reading benchmarks record. For SECONDS,
# one process burns CPU while another starts short-lived processes from several distinct
# binaries in a loop, so that a system-wide recording holds thousands of COMM, FORK, EXIT and
# MMAP2 records between its samples, as a busy machine's does. Exits when the time is up or
# when the recorder stops it with SIGTERM.
#
# SEED (default 1) fixes which binary each short process runs, in which order: two machines
# given one seed start the same programs in the same sequence; only how far they get in
# SECONDS, and what else runs beside them, differ (bench/read.sh prints each file's shape).
set -euo pipefail
. "$(dirname "$0")/short-programs.sh"
secs=${1:?usage: workload.sh SECONDS [SEED]}
seed=${2:-1}
end=$(( $(date +%s) + secs ))
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; exit 0' TERM INT

# CPU work with deep enough stacks to give callchains: checksumming through a pipeline.
( while [ "$(date +%s)" -lt "$end" ]; do
	head -c 8M /dev/zero | sha256sum >/dev/null
	head -c 4M /dev/zero | gzip -1 | md5sum >/dev/null
done ) &
pids+=("$!")

# Many short processes of distinct binaries, one picked by the seeded sequence at a time.
(
	RANDOM=$seed
	while [ "$(date +%s)" -lt "$end" ]; do
		short_program $((RANDOM % 6))
	done
) &
pids+=("$!")

wait
