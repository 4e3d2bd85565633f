// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_storm [-r RATE] SECONDS FILE...: map FILEs executable one after another for SECONDS:
 * the load under which a profiler's ring buffer overflows with MMAP2 records. As fast as
 * possible, or at most RATE mmaps per second. Prints how many mmaps it made, so that lost
 * records can be set against them.
 *
 * Unpaced, the storm's pace, and so the load on the profiler, varies from run to run; a RATE
 * below what the machine reaches gives every profiler the same load.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int map_once(const char *path)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return -1;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	munmap(p, st.st_size);
	close(fd);
	return 0;
}

/* Sleeps while the storm is more than a millisecond ahead of RATE. */
static void pace(unsigned long long maps, double rate, const struct timespec *t0)
{
	double ahead = maps / rate - since(t0);
	struct timespec d;

	if (ahead < 0.001)
		return;
	d.tv_sec = (time_t)ahead;
	d.tv_nsec = (long)((ahead - d.tv_sec) * 1e9);
	nanosleep(&d, NULL);
}

int main(int argc, char **argv)
{
	unsigned long long maps = 0;
	struct timespec t0;
	double secs, rate = 0, elapsed = 0;
	int i, first = 1;

	if (argc > 2 && strcmp(argv[1], "-r") == 0) {
		char *end;

		rate = strtod(argv[2], &end);
		if (*end || !(rate > 0)) {
			fprintf(stderr, "mmap_storm: -r %s: not a rate\n", argv[2]);
			return 2;
		}
		first = 3;
	}
	if (argc < first + 2) {
		fprintf(stderr, "usage: %s [-r RATE] SECONDS FILE...\n", argv[0]);
		return 2;
	}
	secs = atof(argv[first]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed < secs) {
		for (i = first + 1; i < argc; i++) {
			if (map_once(argv[i]) < 0)
				return 1;
			maps++;
			if (rate > 0 && maps % 64 == 0)
				pace(maps, rate, &t0);
		}
		elapsed = since(&t0);
	}
	printf("mmaps %llu seconds %.3f per_second %.0f\n", maps, elapsed, maps / elapsed);
	return 0;
}
