#!/usr/bin/env bash
# build.sh NAME: build the kernel NAME (cached by content hash) and print the path of its image
# (the architecture's: bzImage, Image).
# Everything else (progress, logs) goes to stderr.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_name "$1"

out=$(image_dir)
target=$(arch_field image)
image=$out/$target
if [ -f "$out/.done" ]; then
	echo "$image"
	exit 0
fi

build() {
	[ -f "$out/.done" ] && return 0
	local src obj log t0 frags missing
	src=$("$LAB_ROOT/kernel/scripts/source.sh" "$K_NAME")
	obj=$CACHE/build/$K_NAME
	log=$obj.log
	mkdir -p "$obj"
	local cross=() karch prefix targets cc
	karch=$(arch_field karch)
	prefix=$(arch_field cross)
	[ "$prefix" = - ] && prefix=""
	[ -z "$prefix" ] || cross=(CROSS_COMPILE="$prefix")
	targets=("$target")
	# modpost writes Module.symvers (every export with its genksyms CRC) in `modules`: the
	# module ABI check compares it, and the lab's test modules are built against it, in the
	# kernel's object tree. Only s390x's config builds modules of its own (three that default to m
	# there), which its guest does not load.
	targets+=(modules)
	cc=${prefix}gcc
	command -v ccache >/dev/null && cc="ccache $cc"
	lab_ccache_env
	local mk=(make -C "$src" O="$obj" ARCH="$karch" "${cross[@]}" CC="$cc" -j"$(nproc)")

	t0=$(date +%s)
	mapfile -t frags < <(config_fragments)
	progress "kernel $K_NAME" "configure (tinyconfig + $(printf '%s\n' "${frags[@]##*/}" | paste -sd' '))"
	: >"$log"
	lab_configure "$src" "$obj" "$log" "${mk[@]}" || die "configuring $K_NAME failed (log: $log)"
	# Options a fragment asks for but the kernel dropped (a missing dependency) would
	# silently remove features the tests rely on.
	missing=$(cat "${frags[@]}" | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p' |
		while read -r o; do grep -qx "$o=y" "$obj/.config" || echo "$o"; done | tr '\n' ' ')
	if [ -n "$missing" ]; then
		progress "kernel $K_NAME" "note: not in final .config: $missing"
	fi
	local required=(CONFIG_PERF_EVENTS CONFIG_MODULES CONFIG_MODVERSIONS) guest pagefrag
	IFS=, read -ra guest <<<"$(arch_field required)"
	required+=(CONFIG_BLK_DEV_INITRD "${guest[@]}")
	# The page size's fragment sets nothing but the page size.
	pagefrag=$(page_fragment)
	if [ -n "$pagefrag" ]; then
		mapfile -t -O "${#required[@]}" required < <(sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p' "$pagefrag")
	fi
	[ "$K_RT" = 1 ] && required+=(CONFIG_PREEMPT_RT CONFIG_PROVE_LOCKING CONFIG_DEBUG_ATOMIC_SLEEP)
	for o in "${required[@]}"; do
		grep -qx "$o=y" "$obj/.config" || die "$K_NAME: $o did not survive olddefconfig"
	done

	progress "kernel $K_NAME" "compile ${targets[*]}"
	"${mk[@]}" "${targets[@]}" >>"$log" 2>&1 &
	local pid=$! n
	while kill -0 $pid 2>/dev/null; do
		sleep 15
		kill -0 $pid 2>/dev/null || break
		n=$(grep -c '^  CC' "$log" || true)
		progress "kernel $K_NAME" "compile: $n files compiled"
	done
	if ! wait $pid; then
		grep -E 'error|Error' "$log" | head -20 >&2
		tail -20 "$log" >&2
		die "build of $K_NAME failed (log: $log)"
	fi
	# The selftests are compiled against the exported headers of the kernel under test.
	progress "kernel $K_NAME" "headers_install"
	"${mk[@]}" headers_install INSTALL_HDR_PATH="$obj/usr" >>"$log" 2>&1 ||
		die "headers_install failed for $K_NAME"
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	cp "$obj/arch/$karch/boot/$target" "$out.tmp/"
	cp "$obj/.config" "$out.tmp/config"
	# vmlinux carries the symbols (and build ID) that a report on the host needs for the
	# guest's kernel samples.
	cp "$obj/vmlinux" "$out.tmp/vmlinux"
	cp "$obj/Module.symvers" "$out.tmp/Module.symvers"
	[ -d "$obj/usr/include" ] && cp -r "$obj/usr/include" "$out.tmp/include"
	echo "$src" >"$out.tmp/source"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	touch "$out/.done"
	progress "kernel $K_NAME" "done in $(( $(date +%s) - t0 ))s: $image"
}

with_lock "$CACHE/lock.build" build
echo "$image"
