// SPDX-License-Identifier: GPL-2.0
/*
 * stall MS EVERY COMMAND [ARG...]: run COMMAND, and in turn let it run for EVERY ms and stop
 * it (SIGSTOP) for MS ms, until it ends. Exits with the command's status (128 + signal if it
 * was killed).
 *
 * A profiler's drain is sometimes not scheduled for tens of milliseconds: a loaded host holds
 * off the guest's vCPU, or the machine is busy. Run under stall, the profiler meets such a
 * gap at known times and lengths, so that what its ring buffer loses can be compared.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;

/*
 * A stall that is stopped itself must not leave the command stopped, its ring filling, nor
 * return before the command has finished what it writes.
 */
static void pass_on(int sig)
{
	kill(child, SIGCONT);
	kill(child, sig);
	waitpid(child, NULL, 0);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&d, &d) < 0 && errno == EINTR)
		;
}

/* The command's exit status once it has ended, else -1. */
static int ended(pid_t pid)
{
	int status;
	pid_t r = waitpid(pid, &status, WNOHANG);

	if (r == 0)
		return -1;
	if (r < 0) {
		perror("stall: waitpid");
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	long ms, every;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s MS EVERY COMMAND [ARG...]\n", argv[0]);
		return 2;
	}
	ms = atol(argv[1]);
	every = atol(argv[2]);
	if (ms <= 0 || every <= 0) {
		fprintf(stderr, "stall: MS and EVERY must be positive\n");
		return 2;
	}
	child = fork();
	if (child < 0) {
		perror("stall: fork");
		return 2;
	}
	if (child == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "stall: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, pass_on);
	signal(SIGTERM, pass_on);
	for (;;) {
		sleep_ms(every);
		rc = ended(child);
		if (rc >= 0)
			return rc;
		kill(child, SIGSTOP);
		sleep_ms(ms);
		kill(child, SIGCONT);
	}
}
