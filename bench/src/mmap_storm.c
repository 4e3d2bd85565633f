// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_storm SECONDS FILE...: map FILEs executable one after another, as fast as possible, for
 * SECONDS: the load under which a profiler's ring buffer overflows with MMAP2 records. Prints
 * how many mmaps it made, so that lost records can be set against them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long maps = 0;
	struct timespec t0, t;
	double secs, elapsed = 0;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SECONDS FILE...\n", argv[0]);
		return 2;
	}
	secs = atof(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed < secs) {
		for (i = 2; i < argc; i++) {
			struct stat st;
			void *p;
			int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

			if (fd < 0 || fstat(fd, &st) < 0) {
				perror(argv[i]);
				return 1;
			}
			p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED) {
				perror("mmap");
				return 1;
			}
			munmap(p, st.st_size);
			close(fd);
			maps++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	printf("mmaps %llu seconds %.3f per_second %.0f\n", maps, elapsed, maps / elapsed);
	return 0;
}
