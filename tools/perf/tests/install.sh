#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cmake --install into a scratch prefix, then a program outside the tree built against that
# prefix twice, with find_package(pbid) and with pkg-config, must run and print the same
# build ID as readelf. Prints TAP.
#
# Usage: install.sh BUILD-DIR CONSUMER-SOURCE-DIR WORKDIR [CXXFLAGS]
# CXXFLAGS are the flags the library was built with (sanitizers), given to the consumer too.
set -u
B=$1
SRC=$2
W=$3
FLAGS=${4:-}
rm -rf "$W"
mkdir -p "$W"
P=$W/prefix

n=0 failed=0
check() {
	local d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}
run_logged() {  # run_logged LOG CMD...: output to LOG, shown on failure
	local log=$1; shift
	"$@" >"$log" 2>&1 && return 0
	sed 's/^/#   /' "$log" | tail -20
	return 1
}

check "cmake --install --prefix exits 0" run_logged "$W/install.log" cmake --install "$B" --prefix "$P"
(cd "$P" && find . -type f -o -type l | sort) >"$W/files"
sed 's/^/# /' "$W/files"
for f in bin/perf-buildid bin/perf_to_profile include/pbid/perf_data.h include/pbid/version.h \
	include/pbid/uapi/linux/perf_event.h share/man/man1/perf-buildid.1 \
	share/man/man1/perf-buildid-record.1 share/man/man1/perf_to_profile.1; do
	check "installed $f" [ -f "$P/$f" ]
done
lib=$(grep -E '/libpbid\.a$' "$W/files" | head -1)
check "installed libpbid.a ($lib)" [ -n "$lib" ]
check "installed pbidConfig.cmake" grep -qE '/cmake/pbid/pbidConfig\.cmake$' "$W/files"
pc=$(grep -E '/pkgconfig/pbid\.pc$' "$W/files" | head -1)
check "installed pbid.pc ($pc)" [ -n "$pc" ]
check "installed perf-buildid runs: $("$P/bin/perf-buildid" --version 2>&1)" \
	bash -c "\"$P/bin/perf-buildid\" --version >/dev/null"

self=$P/bin/perf-buildid
want="$(readelf -n "$self" | awk '/Build ID:/ { print $3; exit }') $("$P/bin/perf-buildid" --version)"

check "find_package(pbid): consumer configures and builds" run_logged "$W/cmake.log" \
	bash -c "cmake -S '$SRC' -B '$W/cmake-build' -DCMAKE_PREFIX_PATH='$P' -DCMAKE_CXX_FLAGS='$FLAGS' &&
		cmake --build '$W/cmake-build'"
out=$("$W/cmake-build/pbid_consumer" "$self" 2>&1)
check "find_package consumer prints the build ID and version ($out)" \
	[ "$out" = "$want attr.build_id=1" ]

pcdir=$(dirname "$P/$pc")
check "pkg-config: consumer compiles and links" run_logged "$W/pc.log" bash -c \
	"PKG_CONFIG_PATH='$pcdir' && export PKG_CONFIG_PATH &&
	 \${CXX:-c++} -std=c++17 -Wall -Wextra -Werror $FLAGS -o '$W/pc_consumer' '$SRC/main.cpp' \
		\$(pkg-config --cflags --libs pbid)"
out=$("$W/pc_consumer" "$self" 2>&1)
check "pkg-config consumer prints the build ID and version ($out)" \
	[ "$out" = "$want attr.build_id=1" ]

echo "1..$n"
[ $failed -eq 0 ]
