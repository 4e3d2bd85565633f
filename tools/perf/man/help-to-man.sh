#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# help-to-man.sh PAGE VERSION < HELP > PAGE.1
#
# The --help text of each command is the one source of its manual: it is already laid out as
# a man page (NAME, SYNOPSIS, ... at column 0, the body indented by 4), and the build turns it
# into roff with this script, so the two cannot drift. Headings become .SH, the body stays as
# written (no filling: option tables keep their columns), the NAME line is rewritten to the
# page's own name ("perf-buildid record - x" -> "perf-buildid-record \- x") for whatis.
set -eu
page=$1
version=$2
upper=$(printf '%s' "$page" | tr '[:lower:]' '[:upper:]')
printf '.\\" Generated from the --help text by tools/perf/man/help-to-man.sh.\n'
printf '.TH "%s" "1" "" "perf-buildid %s" "perf-buildid manual"\n' "$upper" "$version"
awk -v page="$page" '
function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	if (s ~ /^[.\047]/) s = "\\&" s
	return s
}
/^[A-Z][A-Z ]*$/ {
	if (fill == 0 && section != "") print ".fi"
	section = $0
	print ".SH \"" section "\""
	if (section == "NAME") { fill = 1 } else { print ".nf"; fill = 0 }
	next
}
section == "NAME" {
	if ($0 ~ /^[ \t]*$/) next
	line = $0
	sub(/^[ \t]+/, "", line)
	i = index(line, " - ")
	if (i) line = substr(line, i + 3)
	print roff(page) " \\- " roff(line)
	next
}
{
	line = $0
	sub(/^    /, "", line)
	print roff(line)
}
END { if (fill == 0 && section != "") print ".fi" }
'
