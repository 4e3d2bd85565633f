#!/usr/bin/env bash
# Runs the apt-source derivation of debian-sources.sh on each sample apt configuration in
# debian-sources/CASE/ (an /etc/apt lookalike plus `host`, the host's codename) and compares
# its output with CASE/expected, or its failure message with CASE/expected-error. Also checks
# that no file of the repository names a Debian mirror host. Prints TAP.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../debian-sources.sh"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in "$here"/debian-sources/*/; do
	case=$(basename "$dir")
	rc=0
	debian_sources "$dir" "$(cat "$dir/host")" bullseye >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ -f "$dir/expected" ]; then
		if [ "$rc" = 0 ] && diff -u "$dir/expected" "$tmp/out" >"$tmp/diff"; then
			ok "$case: derived sources equal expected"
		else
			not_ok "$case: derived sources (rc=$rc)"
			sed 's/^/#   /' "$tmp/diff" "$tmp/err"
		fi
	else
		if [ "$rc" != 0 ] && [ ! -s "$tmp/out" ] && grep -qF "$(cat "$dir/expected-error")" "$tmp/err"; then
			ok "$case: fails with '$(cat "$dir/expected-error")'"
		else
			not_ok "$case: expected a failure (rc=$rc)"
			sed 's/^/#   /' "$tmp/out" "$tmp/err"
		fi
	fi
done

# The repository itself must not carry a mirror's host name into anyone's apt sources.
repo=$(cd "$here/../.." && pwd)
if git -C "$repo" grep -nE '(deb|security|ftp[0-9]*(\.[a-z]{2})?|httpredir|cdn-fastly)\.debian\.org' \
	-- . >"$tmp/hosts"; then
	not_ok "no Debian mirror host name in the repository"
	sed 's/^/#   /' "$tmp/hosts"
else
	ok "no Debian mirror host name in the repository"
fi

echo "1..$n"
[ "$failed" = 0 ]
