# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the tests that print TAP (identities.sh, special-files.sh): numbered ok / not ok
# lines, and the count of failures in $fails.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
