#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages are the --help texts in roff: each must render without a warning from man,
# carry its page name in NAME (for whatis and apropos) and show every line of the options
# its command's --help prints. Prints TAP.
#
# Usage: man.sh PERF-BUILDID MAN-DIR COMMAND...
set -u
PB=$1
D=$2
shift 2

n=0 failed=0
check() {
	local d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
norm() { sed 's/[[:space:]]\+/ /g; s/^ //; s/ $//' "$@"; }

for cmd in "" "$@"; do
	page=perf-buildid${cmd:+-$cmd}
	f=$D/$page.1
	check "$page.1 exists" [ -s "$f" ]
	MANWIDTH=200 man --warnings -E UTF-8 -l "$f" >"$tmp/rendered" 2>"$tmp/warn"
	check "$page.1 renders without warnings" bash -c "[ ! -s '$tmp/warn' ] || { sed 's/^/#   /' '$tmp/warn'; false; }"
	check "$page.1: NAME names $page" grep -q "^ *$page - " "$tmp/rendered"
	# shellcheck disable=SC2086
	"$PB" $cmd --help >"$tmp/help"
	awk '/^OPTIONS/ { f = 1; next } /^[A-Z]/ { f = 0 } f && NF' "$tmp/help" | norm >"$tmp/opts"
	norm "$tmp/rendered" >"$tmp/rendered.n"
	missing=$(grep -vxFf "$tmp/rendered.n" "$tmp/opts" | head -3)
	check "$page.1 shows every OPTIONS line of --help${missing:+ (missing: $missing)}" [ -z "$missing" ]
done
echo "1..$n"
[ $failed -eq 0 ]
