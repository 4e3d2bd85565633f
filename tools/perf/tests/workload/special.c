// SPDX-License-Identifier: GPL-2.0
/*
 * pbid-special: a process whose executable mappings name special files, for special-files.sh.
 *
 *   pbid-special replace fifo|chr FILE MS [hold]
 *   pbid-special zero MS
 *
 * replace: opens FILE (a regular ELF file), unlinks it and puts a FIFO (fifo) or a character
 * device node equal to /dev/null (chr: c 1 3; a symbolic link to /dev/null where mknod is not
 * permitted) at its path, then for MS milliseconds maps the
 * still open file PROT_READ|PROT_EXEC and unmaps it again, every 2 ms. Each mapping is gone
 * before a recorder can read it through /proc/PID/map_files, so a recorder that reads build
 * ids from files falls back to the path, "FILE (deleted)" without its suffix: the special file.
 * With hold, one mapping of the file stays for the whole run (what /proc/PID/maps shows to a
 * recorder attaching with -p).
 *
 * zero: maps /dev/zero PROT_READ|PROT_EXEC, MAP_PRIVATE (whose file is the character device)
 * and MAP_SHARED (a shmem object named "/dev/zero (deleted)"), keeps both, and for MS
 * milliseconds maps and unmaps both kinds again every 2 ms.
 *
 * Prints "ready" once the special mappings and files are in place (a recorder attaching with
 * -p waits for it), then exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_US 2000

static void die(const char *what)
{
	fprintf(stderr, "pbid-special: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *map_exec(int fd, size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_EXEC, flags, fd, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

static int replace(const char *kind, const char *file, double ms, int hold)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		die(file);
	if (hold)
		map_exec(fd, st.st_size, MAP_PRIVATE);
	if (unlink(file) < 0)
		die("unlink");
	if (strcmp(kind, "fifo") == 0) {
		if (mkfifo(file, 0600) < 0)
			die("mkfifo");
	} else if (strcmp(kind, "chr") == 0) {
		if (mknod(file, S_IFCHR | 0600, makedev(1, 3)) < 0) {
			if (errno != EPERM || symlink("/dev/null", file) < 0)
				die("mknod");
			fprintf(stderr, "pbid-special: mknod not permitted: %s -> /dev/null\n", file);
		}
	} else {
		fprintf(stderr, "pbid-special: replace: fifo or chr, not %s\n", kind);
		return 2;
	}
	ready();
	for (double end = now_ms() + ms; now_ms() < end;) {
		void *p = map_exec(fd, st.st_size, MAP_PRIVATE);

		munmap(p, st.st_size);
		usleep(PERIOD_US);
	}
	return 0;
}

static int zero(double ms)
{
	size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("/dev/zero");
	map_exec(fd, len, MAP_PRIVATE);
	map_exec(fd, len, MAP_SHARED);
	ready();
	for (double end = now_ms() + ms; now_ms() < end;) {
		void *p = map_exec(fd, len, MAP_PRIVATE);
		void *s = map_exec(fd, len, MAP_SHARED);

		munmap(p, len);
		munmap(s, len);
		usleep(PERIOD_US);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "replace") == 0)
		return replace(argv[2], argv[3], atof(argv[4]),
			       argc > 5 && strcmp(argv[5], "hold") == 0);
	if (argc == 3 && strcmp(argv[1], "zero") == 0)
		return zero(atof(argv[2]));
	fprintf(stderr, "usage: pbid-special replace fifo|chr FILE MS [hold] | zero MS\n");
	return 2;
}
