// SPDX-License-Identifier: GPL-2.0
/*
 * runstat OUT COMMAND [ARG...]: run COMMAND and write "WALL USER SYS MAXRSS" to OUT: times in
 * seconds to the microsecond, peak RSS in KiB, as wait4() reports them. Exits with the
 * command's status (128 + signal if it was killed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT COMMAND [ARG...]\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("runstat: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "runstat: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("runstat: wait4");
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "runstat: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	fprintf(out, "%.6f %.6f %.6f %ld\n",
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_maxrss);
	if (fclose(out) != 0) {
		perror("runstat: writing the result");
		return 2;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
