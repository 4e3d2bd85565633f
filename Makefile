# buildid-mmap: build IDs in PERF_RECORD_MMAP2 for 5.10 kernels, their selftests, and perf-buildid.
# `make run` is the main job, `make check` runs every test. See README.md.

SHELL := /bin/bash
KERNEL ?= 5.10-buildid
LAB := kernel/scripts
BUILD := $(CURDIR)/build
CHECK_KERNELS := 5.10-buildid 5.10 6.12
export LAB_T0 := $(shell date +%s)

.PHONY: mutation-test all deps kernel kernel-image kernel-crossbuild vm-test vm-test-all series-check \
	perf-buildid unit-test selftests-host check run clean help

all: perf-buildid

help:
	@sed -n 's/^## //p' README.md 2>/dev/null || true

deps:
	@scripts/install-deps.sh

kernel: deps
	@$(LAB)/build.sh $(KERNEL) >/dev/null

# Prints the absolute path of the bzImage and nothing else (builds it first if needed).
kernel-image:
	@$(LAB)/build.sh $(KERNEL) 2>/dev/null

kernel-crossbuild: deps
	@$(LAB)/build.sh 5.10-buildid-arm64 >/dev/null && echo "kernel-crossbuild: 5.10-buildid arm64 Image OK"

vm-test: deps
	@$(LAB)/vm-test.sh $(KERNEL)

# Each kernel/mutations/*.patch breaks the series on purpose; the selftests must catch each.
# Not part of check (one incremental kernel build per mutation, about 30 s each).
mutation-test: deps
	@$(LAB)/mutation-test.sh

series-check: deps
	@$(LAB)/../../kernel/scripts/series-check.sh

.PHONY: abi-check abi-check-negative
# The series keeps every genksyms CRC (module ABI): lab kernels with modversions, then Debian
# 11's own config against the Module.symvers Debian shipped.
abi-check: deps
	@$(LAB)/abi-check.sh lab && $(LAB)/abi-check.sh debian

# The same checks on the series without its __GENKSYMS__ guard: both must fail (not in check:
# an incremental kernel build and a Debian-config object build, about 6 min).
abi-check-negative: deps
	@$(LAB)/abi-check.sh --no-guard lab && $(LAB)/abi-check.sh --no-guard debian

# ccache with the clone as base dir: a second clone compiles nothing twice.
# The same cache directory as kernel/scripts/common.sh.
LAB_CACHE := $(or $(BUILDID_MMAP_CACHE),$(if $(XDG_CACHE_HOME),$(XDG_CACHE_HOME),$(HOME)/.cache)/buildid-mmap)
CCACHE_ENV := CCACHE_DIR=$(LAB_CACHE)/ccache CCACHE_BASEDIR=$(CURDIR) CCACHE_NOHASHDIR=true
perf-buildid: deps
	@$(CCACHE_ENV) cmake -S tools/perf -B $(BUILD)/perf -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
	@$(CCACHE_ENV) cmake --build $(BUILD)/perf -j2

unit-test: perf-buildid
	@ctest --test-dir $(BUILD)/perf --output-on-failure

# The selftests on the machine's own kernel, built against 6.12's harness and headers.
# Informational: not part of check's verdict (the host kernel may have known bugs).
selftests-host: deps
	@$(LAB)/selftests-host.sh

check: deps
	@bash scripts/check.sh

run: deps
	@bash scripts/run.sh

clean:
	rm -rf $(BUILD)
