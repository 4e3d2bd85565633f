# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the fleet tests (archive-roundtrip.sh, archive-served.sh): a real elfutils
# debuginfod serving an archive on loopback, and a report that runs where none of the files a
# recording names can be reached, and the checks' bookkeeping. The caller has
# `set -euo pipefail`. Sourcing sets an EXIT trap that stops the server start_debuginfod
# started.

server=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT

# check DESCRIPTION COMMAND...: "ok: DESCRIPTION" when COMMAND succeeds, else "FAIL: ..." and
# fail=1 (the caller exits with $fail).
fail=0
check() {
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# start_debuginfod ARCHIVE WORKDIR PROBE_ID: `debuginfod -F ARCHIVE` on a free loopback port,
# its database in WORKDIR; returns once the first scan serves PROBE_ID (a build ID stored in
# ARCHIVE). Sets server (its pid), and exports DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH
# (WORKDIR/client-cache). Fails, with the server's log, when it does not start or never
# serves PROBE_ID.
start_debuginfod() {
	local archive=$1 work=$2 probe=$3 port try i
	server=
	for try in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 20000))
		debuginfod -F -p "$port" -d "$work/db.sqlite" -t 0 -g 0 "$archive" \
			>"$work/debuginfod.log" 2>&1 &
		server=$!
		sleep 0.5
		kill -0 "$server" 2>/dev/null && break
		server=
	done
	if [ -z "$server" ]; then
		cat "$work/debuginfod.log"
		echo "FAIL: debuginfod did not start (tried $try ports)"
		return 1
	fi
	export DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$work/client-cache"
	# Each probe with a fresh client cache: a miss before the scan ends would be remembered
	# (cache_miss_s).
	for i in $(seq 1 150); do
		rm -rf "$work/probe-cache"
		if DEBUGINFOD_CACHE_PATH="$work/probe-cache" debuginfod-find executable "$probe" \
			>/dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	cat "$work/debuginfod.log"
	echo "FAIL: debuginfod never served $probe"
	return 1
}

# report_without_files PERF_BUILDID DATA WORKDIR REPORT_ARGS...: `PERF_BUILDID report -i DATA
# REPORT_ARGS...` in a mount namespace where every path DATA names is covered by /dev/null and
# /usr/lib/debug by an empty tmpfs, so that only a server (or --debug-dir) can give it a file.
# perf-buildid and mount run from copies of their libraries in WORKDIR/libs: once libc's path
# is covered, nothing else would start. Output on stdout, errors on stderr.
report_without_files() {
	local pb=$1 data=$2 work=$3 lib
	shift 3
	mkdir -p "$work/libs"
	lib=$(ldconfig -p | awk '/libdebuginfod.so.1 / { p = $NF } END { print p }')
	{
		ldd "$pb"
		ldd "$(command -v mount)"
		ldd "$lib"
		echo "x => $lib"
	} | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u | while read -r f; do
		cp -L "$f" "$work/libs/"
	done
	"$pb" buildid-list -i "$data" -H | awk '{ print $2 }' | grep '^/' >"$work/paths.txt" || true
	cat >"$work/hide.sh" <<'EOS'
set -euo pipefail
work=$1
shift
run() { "$work/libs/ld-linux-x86-64.so.2" --library-path "$work/libs" "$@"; }
run "$(command -v mount)" -t tmpfs none /usr/lib/debug
while read -r p; do
	if [ -e "$p" ]; then run "$(command -v mount)" --bind /dev/null "$p"; fi
done <"$work/paths.txt"
exec "$@"
EOS
	unshare -m bash "$work/hide.sh" "$work" "$work/libs/ld-linux-x86-64.so.2" \
		--library-path "$work/libs" "$pb" report -i "$data" "$@"
}

# user_share REPORT: "NAMED/TOTAL", the user samples of a flat report table and those named
# other than by an address.
user_share() {
	awk '$4 == "[.]" { t += $2; if ($5 !~ /^0x/) s += $2 } END { printf "%d/%d\n", s, t }' "$1"
}
