# buildid-mmap: build IDs in PERF_RECORD_MMAP2 for 5.10 kernels, their selftests, and perf-buildid.
# `make run` is the main job, `make check` runs every test. See README.md.

SHELL := /bin/bash
KERNEL ?= 5.10-buildid
LAB := kernel/scripts
BUILD := $(CURDIR)/build
# The start of the outermost make, for the progress lines: sub-makes inherit it.
ifndef LAB_T0
LAB_T0 := $(shell date +%s)
endif
export LAB_T0

.PHONY: mutation-test all deps kernel kernel-image kernel-crossbuild vm-test series-check \
	perf-buildid unit-test selftests-host check run clean help uapi-header deb debian11

# perf-buildid and its workloads (the default).
all: perf-buildid

# Every target with the first line of the comment above it.
help:
	@awk '/^# / { if (!in_comment) c = substr($$0, 3); in_comment = 1; next } { in_comment = 0 } \
		/^$$/ { c = "" } \
		/^[a-z0-9.-]+:/ { t = $$1; sub(/:.*/, "", t); printf "%-24s %s\n", t, c; c = "" }' Makefile

# Installs the Debian packages that run and check need (scripts/install-deps.sh).
deps:
	@scripts/install-deps.sh

# Builds KERNEL (a lab kernel name, default 5.10-buildid), cached by content hash.
kernel: deps
	@$(LAB)/build.sh $(KERNEL) >/dev/null

# Prints the absolute path of the bzImage and nothing else (builds it first if needed).
kernel-image:
	@$(LAB)/build.sh $(KERNEL) 2>/dev/null

# The series cross-built for arm64 (5.10-buildid-arm64): it builds, nothing is booted.
kernel-crossbuild: deps
	@$(LAB)/build.sh 5.10-buildid-arm64 >/dev/null && echo "kernel-crossbuild: 5.10-buildid arm64 Image OK"

# The perf_events selftests on KERNEL in QEMU, twice (warm and cold page cache).
vm-test: deps
	@$(LAB)/vm-test.sh $(KERNEL)

.PHONY: vm-test-rt vm-test-arm64 vm-test-arch
# The selftests on Debian's PREEMPT_RT flavour under the series (lockdep, DEBUG_ATOMIC_SLEEP):
# a clean console and the verdicts of 5.10-buildid, case by case, but for the cases listed with
# their reasons in expected-differences-rt.txt (its vm-test runs first when it has no verdicts
# yet).
vm-test-rt: deps
	@[ -s $(BUILD)/selftests/5.10-buildid/verdicts.txt ] || $(LAB)/vm-test.sh 5.10-buildid
	@$(LAB)/vm-test.sh 5.10-rt-buildid && $(LAB)/compare-verdicts.sh 5.10-buildid 5.10-rt-buildid \
		tools/testing/selftests/perf_events/expected-differences-rt.txt

# The selftests, cross-compiled, on another architecture of LAB_ARCHES in its QEMU: the
# verdicts of the same kernel on x86_64 but for the cases listed, with their reasons, in
# tools/testing/selftests/perf_events/expected-differences-ARCH.txt (kernel/scripts/
# vm-test-arch.sh). ARCH_KERNELS: the kernels, any of the lab's names.
ARCH_KERNELS ?=
LAB_KERNELS_OF = $(shell bash -c '. $(LAB)/common.sh && lab_kernels_of $(1)')
LAB_KERNELS_FOR = $(shell bash -c '. $(LAB)/common.sh && lab_kernels $(1)')
vm-test-arch: deps
	@$(LAB)/vm-test-arch.sh $(ARCH_KERNELS)

# The same on arm64, 4 KiB and 64 KiB pages (LAB_KERNELS' arm64 kernels).
vm-test-arm64: deps
	@$(LAB)/vm-test-arch.sh $(call LAB_KERNELS_OF,arm64)

.PHONY: check-arches
# Debian 11 LTS's 32-bit architectures (i386 and armhf, HIGHMEM) and big-endian s390x, booted:
# the kernels LAB_KERNELS marks check-arches, pristine 5.10 on i386 among them (its cases skip
# as on x86_64). make check runs those it marks vm-test-arch.
check-arches: deps
	@$(LAB)/vm-test-arch.sh $(call LAB_KERNELS_FOR,check-arches)

# Each kernel/mutations/*.patch breaks the series on purpose; the selftests must catch each.
# Not part of check (one incremental kernel build per mutation, about 30 s each).
mutation-test: deps
	@$(LAB)/mutation-test.sh

# The races no selftest can time (kernel/mutations/stress/*.patch: n_descsz read twice, as 5.10's
# stack map did): make stress's program must catch each within MUTATION_STRESS_SECONDS.
.PHONY: mutation-stress
MUTATION_STRESS_SECONDS ?= 120
mutation-stress: deps
	@$(LAB)/mutation-test.sh --stress $(MUTATION_STRESS_SECONDS)

# Each kernel series (every base with one): git am, checkpatch --strict, a build after each patch.
series-check: deps
	@$(LAB)/../../kernel/scripts/series-check.sh

# include/uapi/linux/perf_event.h from the kernel series (after a change to the series).
uapi-header: deps
	@scripts/uapi-header.sh

.PHONY: abi-check abi-check-negative
# The series keeps every genksyms CRC (module ABI): lab kernels with modversions, then Debian
# 11's own config against the Module.symvers Debian shipped.
abi-check: deps
	@$(LAB)/abi-check.sh lab && $(LAB)/abi-check.sh debian

# The same checks on the series without its __GENKSYMS__ guard: both must fail (not in check:
# an incremental kernel build and a Debian-config object build, about 10 min).
abi-check-negative: deps
	@$(LAB)/abi-check.sh --no-guard lab && $(LAB)/abi-check.sh --no-guard debian

# ccache as the lab sets it up (lab_ccache_vars in kernel/scripts/common.sh, the one place it is
# defined), with the clone as base dir: a second clone compiles nothing twice.
CCACHE_ENV := $(shell bash -c '. $(LAB)/common.sh && lab_ccache_vars "$$0"' $(CURDIR))
ifeq ($(CCACHE_ENV),)
$(error kernel/scripts/common.sh gave no ccache settings)
endif
# perf-buildid, its library and tests, in build/perf (binaries in build/bin).
perf-buildid: deps
	@$(CCACHE_ENV) cmake -S tools/perf -B $(BUILD)/perf -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
	@$(CCACHE_ENV) cmake --build $(BUILD)/perf -j2

# build/deb/perf-buildid_*.deb and libpbid-dev_*.deb (debhelper; see Documentation/packaging.md).
deb: deps
	@$(CCACHE_ENV) scripts/make-deb.sh $(BUILD)/deb

# perf-buildid built, unit-tested, packaged and installed in a cached Debian 11 root (root only).
debian11: deps
	@scripts/debian11-build.sh

# Debian 11's perf (5.10's tools/perf) with kernel/patches/linux-5.10-perf, built like Debian's
# linux-perf-5.10 (Documentation/perf-5.10.md) and cached by content hash like the kernels.
.PHONY: perf-5.10 perf-5.10-series-check vm-perf-5.10
perf-5.10: deps
	@p=$$($(LAB)/perf-5.10.sh) && install -D -m 755 "$$p" $(BUILD)/bin/perf-5.10

# git am, checkpatch --strict and a perf build after each patch of the tools series.
perf-5.10-series-check: deps
	@$(LAB)/perf-5.10.sh --series-check

# perf-5.10 in QEMU on KERNEL (5.10-buildid or 5.10), with interop against perf 6.1 and
# perf-buildid.
vm-perf-5.10: deps perf-buildid
	@$(LAB)/vm-perf-5.10.sh $(KERNEL)

# ctest: perf-buildid's unit and interop tests, two at a time (CTEST_JOBS). The tests that
# record do not depend on being alone: the workload's functions share out any hold-up, and
# perf stays out of its ~/.debug cache (-N), which concurrent perf 6.1 runs can abort on.
CTEST_JOBS ?= 2
unit-test: perf-buildid
	@cd $(BUILD)/perf && ctest -j$(CTEST_JOBS) --output-on-failure  # not --test-dir: cmake 3.18 lacks it

.PHONY: asan-test tsan-test fuzz-build fuzz fuzz-smoke

# The unit tests once more, built by GCC with ASan and UBSan (build/asan; its binaries stay
# out of build/bin), but for those labelled other-programs (tools/perf/tests/CMakeLists.txt):
# their time goes to another program (the newer perfs, perf report's side of the agreement
# test, perfparser, Chromium), about 3 min under ASan; unit-test runs them.
asan-test: deps
	@$(CCACHE_ENV) cmake -S tools/perf -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_C_FLAGS="$(SANITIZE_FLAGS)" \
		-DPBID_BIN_DIR=$(BUILD)/asan/bin \
		-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
	@$(CCACHE_ENV) cmake --build $(BUILD)/asan -j2
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --test-dir $(BUILD)/asan -j$(CTEST_JOBS) -LE other-programs --output-on-failure
# GCC warns maybe-uninitialized falsely under the sanitizers (its manual advises against
# combining them with -Werror); libstdc++'s <regex> trips it, so that warning is off here.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -Wno-maybe-uninitialized

# The tests of the reader's read-ahead thread (the reader's and the session's), built with
# ThreadSanitizer in build/tsan: a pass handing buffers to and from the thread must show no data
# race. Not in check: 1 min 37 s the first time (ccache warm from other builds), 22 s warm.
# Run it after changing the reader's window.
TSAN_TESTS := perf_data_test session_test
tsan-test: deps
	@$(CCACHE_ENV) cmake -S tools/perf -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS="-fsanitize=thread -Wno-maybe-uninitialized" \
		-DCMAKE_C_FLAGS="-fsanitize=thread" -DPBID_BIN_DIR=$(BUILD)/tsan/bin \
		-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
	@$(CCACHE_ENV) cmake --build $(BUILD)/tsan -j2 --target $(TSAN_TESTS)
	@set -e; for t in $(TSAN_TESTS); do \
		TSAN_OPTIONS=halt_on_error=1 $(BUILD)/tsan/tests/$$t --gtest_brief=1; done

# libFuzzer targets (clang-14, ASan, UBSan) in build/fuzz. `make fuzz` runs each target for
# FUZZ_SECONDS on the seed corpus in tools/perf/fuzz/corpus; fuzz-smoke (in check) runs each
# for FUZZ_SMOKE_SECONDS. See Documentation/perf-buildid-fuzzing.md.
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 5
fuzz-build: deps
	@$(CCACHE_ENV) CC=clang-14 CXX=clang++-14 cmake -S tools/perf -B $(BUILD)/fuzz \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPBID_FUZZ=ON -DPBID_BIN_DIR=$(BUILD)/fuzz/bin \
		-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
	@$(CCACHE_ENV) cmake --build $(BUILD)/fuzz -j2 --target pbid_fuzz

fuzz: fuzz-build
	@tools/perf/fuzz/run.sh $(BUILD)/fuzz/fuzz $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build
	@tools/perf/fuzz/run.sh --smoke $(BUILD)/fuzz/fuzz $(FUZZ_SMOKE_SECONDS)

# Benchmarks (Documentation/benchmarks.md): perf-buildid against perf reading the same files,
# and the kernel's cost per mmap in the VMs; writes bench/results.md. Takes about 20 min.
# bench-smoke (in check) runs each once on the smallest input.
.PHONY: bench bench-smoke
bench: deps perf-buildid
	@bench/run.sh

bench-smoke: deps perf-buildid
	@bench/run.sh --smoke

# The selftests on the machine's own kernel, built against 6.12's harness and headers.
# Informational: not part of check's verdict (the host kernel may have known bugs).
selftests-host: deps
	@$(LAB)/selftests-host.sh

# Every test; one line per step, then "check: N passed, N failed".
check: deps
	@bash scripts/check.sh

# The main job: record in a patched 5.10 guest, symbolize on the host.
run: deps
	@bash scripts/run.sh

# 5.10's vmacache race and its fix (kernel/patches/linux-5.10-fixes): build-ID stacks asked for
# in every sample while processes exec (pbid-exec-race). Pristine 5.10 must Oops within
# EXEC_RACE_ROUNDS boots of EXEC_RACE_SECONDS, then 5.10-fixes must stay clean as long, both
# built at -Os (EXEC_RACE_VARIANT=-os, where the Oops was found; empty: -O2, as Debian builds,
# where the unfixed kernel's Oopses are counted, not required). Builds the two kernels (about
# 10 min cold); not part of check.
.PHONY: vm-exec-race
EXEC_RACE_SECONDS ?= 30
EXEC_RACE_ROUNDS ?= 8
EXEC_RACE_VARIANT ?= -os
vm-exec-race: deps perf-buildid
	@$(LAB)/exec-race-check.sh $(EXEC_RACE_SECONDS) $(EXEC_RACE_ROUNDS) "$(EXEC_RACE_VARIANT)"

# The fleet round trip across machines: record --archive in a lab guest (KERNEL, default
# 5.10-buildid) while the workload's files are deleted and replaced, then debuginfod serves
# the archive on the host and report runs where none of the recorded files exists.
.PHONY: vm-archive
vm-archive: deps perf-buildid
	@$(LAB)/vm-archive.sh $(KERNEL)

# Kernel modules: in a guest of KERNEL (default 5.10-buildid), two test modules are loaded and
# record names each by its own build ID; on the host, buildid-list (ours and perf's) and report
# by build ID alone.
.PHONY: vm-modules
vm-modules: deps perf-buildid
	@$(LAB)/vm-modules.sh $(KERNEL)

# buildid_stress in lab guests: mappings, in-place rewrites, truncation, holes, n_descsz
# flips, page-cache drops, fork/exec churn and perf events with random attributes at once, on
# two vCPUs; every build ID in an MMAP2 record checked against the versions its file had, the
# console clean. On a kernel without the feature (pristine 5.10, 5.10-fixes): BPF build-ID
# stacks during exec churn (vm-exec-race.sh). DURATION seconds on each of STRESS_KERNELS (or
# on KERNEL alone when given on the command line), SEED to replay a run.
.PHONY: stress
DURATION ?= 1800
STRESS_KERNELS ?= 5.10-buildid-kasan 5.10-rt-buildid 6.12-kasan 5.10 5.10-fixes
stress: deps perf-buildid
	@set -e; for k in $(if $(filter command line,$(origin KERNEL)),$(KERNEL),$(STRESS_KERNELS)); do \
		$(LAB)/vm-stress.sh "$$k" $(DURATION) $(SEED); done

# Removes build/ (the kernel caches outside the clone stay).
clean:
	rm -rf $(BUILD)
