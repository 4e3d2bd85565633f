#!/usr/bin/env bash
# debian-sources.sh [--etc DIR] [--host-codename NAME] TARGET
#
# Prints deb822 apt sources for Debian release TARGET (e.g. bullseye) derived from the Debian
# sources this machine already uses: the same URIs, keyring and options, with only the suite
# changed (HOST -> TARGET, HOST-security -> TARGET-security) and the components cut down to
# main. A machine behind its own mirror keeps using that mirror; nothing here names a host.
#
# Reads DIR/sources.list, DIR/sources.list.d/*.list and DIR/sources.list.d/*.sources (DIR
# defaults to /etc/apt), in apt's order. HOST is VERSION_CODENAME of /etc/os-release. Exits 1
# with a message naming what it looked for when no Debian source is found.
#
# Sourced (by install-deps.sh), it only defines debian_sources.
# shellcheck shell=bash

# debian_sources ETC HOST TARGET: the derivation itself; prints the stanzas on stdout.
debian_sources() {
	local etc=$1 host=$2 target=$3
	local files=() f
	[ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
	for f in "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# Our own output: derived from the others, never a source of them.
		case ${f##*/} in buildid-mmap-*) continue ;; esac
		files+=("$f")
	done
	local out=
	if [ ${#files[@]} -gt 0 ]; then
		out=$(LC_ALL=C awk -v host="$host" -v target="$target" -f - "${files[@]}" <<'AWK'
# Maps a suite of the host release to the target's; "" for suites we do not derive from.
function map_suite(s) {
	if (s == host) return target
	if (s == host "-security" || s == host "/updates") return target "-security"
	return ""
}
function emit(text) {
	if (!(text in seen)) { seen[text] = 1; printf "%s%s", (nout++ ? "\n" : ""), text }
}
# One deb822 stanza in nf fields: name[i] (as written), val[i] (with continuation lines).
function flush_stanza(   i, k, types, suites, comps, enabled, n, s, t, done, text) {
	if (nf == 0) return
	for (i = 1; i <= nf; i++) {
		k = tolower(name[i])
		if (k == "types") types = " " val[i] " "
		else if (k == "suites") suites = val[i]
		else if (k == "components") comps = " " val[i] " "
		else if (k == "enabled") enabled = val[i]
	}
	gsub(/[ \t\n]+/, " ", types); gsub(/[ \t\n]+/, " ", comps); gsub(/[ \t\n]+/, "", enabled)
	if (types ~ / deb / && comps ~ / main / && tolower(enabled) != "no") {
		n = split(suites, s, /[ \t\n]+/)
		for (j = 1; j <= n; j++) {
			t = map_suite(s[j])
			if (t == "" || (t in done)) continue
			done[t] = 1
			text = "Types: deb\n"
			for (i = 1; i <= nf; i++) {
				k = tolower(name[i])
				if (k == "types" || k == "suites" || k == "components" || k == "enabled")
					continue
				text = text name[i] ":" val[i] "\n"
				if (k == "uris")
					text = text "Suites: " t "\nComponents: main\n"
			}
			emit(text)
		}
	}
	nf = 0
}
# Option names of the one-line format and their deb822 field names.
BEGIN {
	opt["arch"] = "Architectures"; opt["lang"] = "Languages"; opt["target"] = "Targets"
	opt["signed-by"] = "Signed-By"; opt["trusted"] = "Trusted"; opt["by-hash"] = "By-Hash"
	opt["check-valid-until"] = "Check-Valid-Until"; opt["allow-insecure"] = "Allow-Insecure"
	opt["pdiffs"] = "PDiffs"; opt["snapshot"] = "Snapshot"
}
FNR == 1 { flush_stanza(); deb822 = FILENAME ~ /\.sources$/ }
deb822 && /^[ \t]*#/ { next }
deb822 && /^[ \t]*$/ { flush_stanza(); next }
deb822 && /^[ \t]/ { if (nf) val[nf] = val[nf] "\n" $0; next }
deb822 {
	i = index($0, ":")
	if (i == 0) next
	nf++; name[nf] = substr($0, 1, i - 1); val[nf] = substr($0, i + 1)
	next
}
# One-line format: deb [opt=value ...] URI SUITE COMPONENT...
{
	line = $0
	sub(/#.*/, "", line)
	if (line !~ /^[ \t]*deb[ \t]/) next
	sub(/^[ \t]*deb[ \t]+/, "", line)
	opts = ""
	if (line ~ /^\[/) {
		i = index(line, "]")
		opts = substr(line, 2, i - 2)
		line = substr(line, i + 1)
	}
	n = split(line, w, /[ \t]+/)
	m = 0
	for (i = 1; i <= n; i++) if (w[i] != "") ww[++m] = w[i]
	if (m < 3) next
	t = map_suite(ww[2])
	hasmain = 0
	for (i = 3; i <= m; i++) if (ww[i] == "main") hasmain = 1
	if (t == "" || !hasmain) next
	text = "Types: deb\nURIs: " ww[1] "\nSuites: " t "\nComponents: main\n"
	n = split(opts, o, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (o[i] == "") continue
		k = o[i]; v = o[i]
		sub(/=.*/, "", k); sub(/^[^=]*=/, "", v)
		if (k in opt) text = text opt[k] ": " v "\n"
		else printf "debian-sources: %s: option %s not carried over\n", FILENAME, k > "/dev/stderr"
	}
	emit(text)
}
END { flush_stanza() }
AWK
		) || return 1
	fi
	if ! grep -q "^Suites: $target\$" <<<"$out"; then
		echo "debian-sources: no Debian apt source for '$host' in $etc/sources.list or" \
			"$etc/sources.list.d/ (looked for a 'deb' entry with suite $host and component" \
			"main), so the URI and keyring for Debian $target cannot be derived; add your" \
			"Debian mirror to apt's sources first" >&2
		return 1
	fi
	if ! grep -q "^Suites: $target-security\$" <<<"$out"; then
		echo "debian-sources: no $host-security source found; $target-security is left out" >&2
	fi
	printf '%s\n' "$out"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	etc=/etc/apt
	host=
	while [ $# -gt 1 ]; do
		case $1 in
		--etc) etc=$2; shift 2 ;;
		--host-codename) host=$2; shift 2 ;;
		*) break ;;
		esac
	done
	if [ $# -ne 1 ]; then
		echo "usage: $0 [--etc DIR] [--host-codename NAME] TARGET-CODENAME" >&2
		exit 2
	fi
	if [ -z "$host" ]; then
		host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
		[ -n "$host" ] || { echo "debian-sources: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
	fi
	debian_sources "$etc" "$host" "$1"
fi
