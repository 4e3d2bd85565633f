/*
 * Fixture for the symbolizer tests: a program with a few functions that
 * burn CPU so that samples land in them.  It is built with debug info, then
 * split (objcopy --only-keep-debug) and stripped, so that symbols can only
 * come from the debug file found by build ID.
 *
 * With --addrs it prints its own runtime addresses and the /proc/self/maps
 * lines that contain them; the tests turn these into file offsets exactly as
 * a profiler would (ip - start + pgoff), without reading the ELF file.
 *
 * WORKLOAD_DECOY renames every function: the tests use that build as the
 * "upgraded" binary that replaced the recorded one on disk.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WORKLOAD_DECOY
#define FN(name) decoy_##name
#else
#define FN(name) name
#endif

static volatile uint64_t sink;

__attribute__((noinline)) static void FN(spin_alpha)(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) void FN(spin_beta)(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink ^= i + (sink << 1);
}

static inline __attribute__((always_inline)) void FN(inlined_gamma)(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i ^ 0x55;
}

__attribute__((noinline)) void FN(spin_outer)(uint64_t n)
{
	FN(inlined_gamma)(n);
}

static void print_mapping_of(const char *what, uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	if (!f) {
		perror("/proc/self/maps");
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (addr >= start && addr < end) {
			/* name addr start end pgoff */
			printf("%s %lx %lx %lx %lx\n", what, (unsigned long)addr,
			       start, end, pgoff);
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	uint64_t n = 200000000ull;

	if (argc > 1 && strcmp(argv[1], "--addrs") == 0) {
		print_mapping_of("spin_alpha", (uintptr_t)&FN(spin_alpha));
		print_mapping_of("spin_beta", (uintptr_t)&FN(spin_beta));
		print_mapping_of("spin_outer", (uintptr_t)&FN(spin_outer));
		return 0;
	}
	if (argc > 1)
		n = strtoull(argv[1], NULL, 0);
	/*
	 * The tests rank the functions by their samples, so each has three
	 * times the work of the next: on a loaded machine one loop's cost per
	 * iteration was seen to move against another's by two. In slices, so
	 * that whatever holds the machine up for a moment (another guest on
	 * the host) takes from the three alike, not from whichever ran then.
	 */
	for (int slice = 0; slice < 64; slice++) {
		FN(spin_alpha)(n / 64);
		FN(spin_beta)(n / 192);
		FN(spin_outer)(n / 576);
	}
	return 0;
}
