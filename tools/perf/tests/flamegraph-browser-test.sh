#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The flame graph in a real browser: pbid-flamegraph draws fixtures/flamegraph.folded, and
# flamegraph-browser.sh must pass on it and fail on a copy without its <script>, which still
# looks the same: a static picture must not pass for an interactive one. Prints TAP; exits 1
# if any check fails.
#
# Usage: flamegraph-browser-test.sh PBID-FLAMEGRAPH WORKDIR
set -euo pipefail

tool=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/fixtures

# A build root without a browser (the Debian 11 package build): the host's check runs this.
for needed in chromium chromedriver /usr/bin/python3 xmllint; do
	command -v "$needed" >/dev/null || { echo "1..0 # SKIP $needed is not installed"; exit 77; }
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || { echo "1..0 # SKIP python3-selenium is not installed"; exit 77; }

rm -rf "$work"
mkdir -p "$work"

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

"$tool" --title "flamegraph.folded" <"$fixtures/flamegraph.folded" >"$work/graph.svg"
if xmllint --noout "$work/graph.svg"; then
	ok "the SVG is well-formed XML"
else
	not_ok "the SVG is well-formed XML"
fi

if "$here/flamegraph-browser.sh" "$work/graph.svg" "$work/graph.png" \
	"$fixtures/flamegraph.expect" >"$work/positive.log" 2>&1; then
	ok "the browser check passes on the graph (screenshot $work/graph.png)"
else
	sed 's/^/# /' "$work/positive.log"
	not_ok "the browser check passes on the graph"
fi
if [ -s "$work/graph.png" ] && [ "$(head -c 8 "$work/graph.png" | od -An -tx1 | tr -d ' \n')" = \
	89504e470d0a1a0a ]; then
	ok "the screenshot is a PNG"
else
	not_ok "the screenshot is a PNG"
fi

# The same document less its script: every frame still drawn at its width, nothing answers.
perl -0pe 's{<script\b.*?</script>\n?}{}s' "$work/graph.svg" >"$work/static.svg"
if grep -q '<script' "$work/static.svg" || ! xmllint --noout "$work/static.svg"; then
	not_ok "the static copy has no script and is still well-formed"
else
	ok "the static copy has no script and is still well-formed"
fi
status=0
"$here/flamegraph-browser.sh" "$work/static.svg" "$work/static.png" \
	"$fixtures/flamegraph.expect" >"$work/static.log" 2>&1 || status=$?
sed 's/^/# static: /' "$work/static.log"
# Exit 1 is "checks failed"; 2 would be a browser that did not run, which proves nothing.
# The widths are in the static picture too: what must fail is what the script does.
if [ "$status" -eq 1 ] && grep -q 'FAIL: hover' "$work/static.log" &&
	grep -q 'FAIL: zoom' "$work/static.log" &&
	grep -q 'FAIL: search' "$work/static.log" && ! grep -q 'FAIL: frame' "$work/static.log"; then
	ok "the browser check fails on the static copy, at hover, zoom and search only"
else
	not_ok "the browser check fails on the static copy, at hover, zoom and search only (exit $status)"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
