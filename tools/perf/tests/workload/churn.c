// SPDX-License-Identifier: GPL-2.0
/*
 * pbid-churn DIR CHILDREN: the hard case for build ids learned after the fact.
 *
 * Starts CHILDREN short-lived processes, at most four at a time. Each execs a copy of this
 * program from DIR ("spin" mode: burn about 40 ms of CPU, then exit), and each copy carries its
 * own build id: the note of this program, rewritten. A third of the children run a file shared
 * with others, a third a file that is deleted while they run, and a third a file that is
 * replaced (renamed over) while they run, as package upgrades, build trees and container layers
 * do. When recording ends, nothing on disk holds the deleted children's ids any more, and the
 * replaced ones' paths name another file.
 *
 * Prints one line per child, "pid BUILD_ID MODE", with the id of the file it ran, so that a
 * recording can be checked: every sample of that pid in its main executable should carry it.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHARED_FILES 8
#define MAX_RUNNING 4
#define SPIN_MS 40

static void die(const char *what)
{
	fprintf(stderr, "pbid-churn: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Frame pointers and a call depth of three, so that samples have a callchain to check. */
__attribute__((noinline)) static unsigned long spin_leaf(unsigned long x)
{
	for (int i = 0; i < 10000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long spin_middle(unsigned long x)
{
	return spin_leaf(x) ^ spin_leaf(x + 1);
}

static int spin(int ms)
{
	double end = now_ms() + ms;
	volatile unsigned long sink = 0;

	while (now_ms() < end)
		sink = spin_middle(sink);
	return 0;
}

static char *self_image;
static size_t self_size;
static size_t id_offset, id_size;

/* This program's file, and where its GNU build id note's bytes are, from the section headers. */
static void load_self(void)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		die("/proc/self/exe");
	self_size = st.st_size;
	self_image = malloc(self_size);
	if (!self_image || read(fd, self_image, self_size) != (ssize_t)self_size)
		die("reading /proc/self/exe");
	close(fd);
	eh = (const Elf64_Ehdr *)self_image;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > self_size) {
		fprintf(stderr, "pbid-churn: not a 64-bit ELF\n");
		exit(1);
	}
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(self_image + eh->e_phoff) + i;
		uint64_t off = ph->p_offset, end = ph->p_offset + ph->p_filesz;

		if (ph->p_type != PT_NOTE || end > self_size)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(self_image + off);
			uint64_t desc = off + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(self_image + off + sizeof(*nh), "GNU", 4) &&
			    desc + nh->n_descsz <= end) {
				id_offset = desc;
				id_size = nh->n_descsz;
				return;
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	fprintf(stderr, "pbid-churn: built without a GNU build id note\n");
	exit(1);
}

/* Writes a copy of this program with build id number n to path (via a temporary + rename when
 * replace is set), and its id in hex to hex. */
static void write_copy(const char *path, unsigned int n, int replace, char *hex)
{
	char tmp[4096];
	const char *out = path;
	int fd;

	/* The id: the original's, with its first four bytes replaced by n. */
	memcpy(self_image + id_offset, &n, sizeof(n));
	for (size_t i = 0; i < id_size; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)self_image[id_offset + i]);
	if (replace) {
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		out = tmp;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, self_image, self_size) != (ssize_t)self_size || close(fd) < 0)
		die(out);
	if (replace && rename(tmp, path) < 0)
		die("rename");
}

struct child {
	pid_t pid;
	int mode; /* 0 shared, 1 deleted, 2 replaced */
	double started;
	int acted;
	char path[4096];
};

int main(int argc, char **argv)
{
	static const char *const mode_name[] = { "shared", "deleted", "replaced" };
	char shared_hex[SHARED_FILES][41], hex[41], path[4096];
	struct child run[MAX_RUNNING] = { 0 };
	int children, started = 0, running = 0;
	unsigned int next_id = 1;
	int exec_seen[2];
	char byte;

	if (argc == 3 && !strcmp(argv[1], "spin"))
		return spin(atoi(argv[2]));
	if (argc != 3 || (children = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: pbid-churn DIR CHILDREN\n");
		return 2;
	}
	load_self();
	if (mkdir(argv[1], 0755) < 0 && errno != EEXIST)
		die(argv[1]);
	for (int i = 0; i < SHARED_FILES; i++) {
		snprintf(path, sizeof(path), "%s/shared-%d", argv[1], i);
		write_copy(path, next_id++, 0, shared_hex[i]);
	}

	while (started < children || running > 0) {
		/* Start children while there is room. */
		for (int s = 0; s < MAX_RUNNING && started < children; s++) {
			struct child *c = &run[s];
			const char *id;

			if (c->pid)
				continue;
			c->mode = started % 3;
			if (c->mode == 0) {
				snprintf(c->path, sizeof(c->path), "%s/shared-%d", argv[1],
					 started % SHARED_FILES);
				id = shared_hex[started % SHARED_FILES];
			} else {
				snprintf(c->path, sizeof(c->path), "%s/%s-%d", argv[1],
					 mode_name[c->mode], started);
				write_copy(c->path, next_id++, 0, hex);
				id = hex;
			}
			/* The file may change only once the child runs it: its exec closes
			 * this pipe. */
			if (pipe2(exec_seen, O_CLOEXEC) < 0)
				die("pipe2");
			c->pid = fork();
			if (c->pid < 0)
				die("fork");
			if (c->pid == 0) {
				char ms[16];

				close(exec_seen[0]);
				snprintf(ms, sizeof(ms), "%d", SPIN_MS);
				execl(c->path, c->path, "spin", ms, (char *)NULL);
				_exit(127);
			}
			close(exec_seen[1]);
			while (read(exec_seen[0], &byte, 1) < 0 && errno == EINTR)
				;
			close(exec_seen[0]);
			printf("%d %s %s\n", c->pid, id, mode_name[c->mode]);
			fflush(stdout);
			c->started = now_ms();
			c->acted = 0;
			started++;
			running++;
		}
		/* A quarter into its run, a child's file goes away or changes. */
		for (int s = 0; s < MAX_RUNNING; s++) {
			struct child *c = &run[s];

			if (!c->pid || c->acted || now_ms() < c->started + SPIN_MS / 4)
				continue;
			c->acted = 1;
			if (c->mode == 1 && unlink(c->path) < 0)
				die("unlink");
			if (c->mode == 2)
				write_copy(c->path, next_id++, 1, hex);
		}
		/* Reap. */
		for (int s = 0; s < MAX_RUNNING; s++) {
			struct child *c = &run[s];
			int status;
			pid_t r;

			if (!c->pid)
				continue;
			r = waitpid(c->pid, &status, WNOHANG);
			if (r < 0)
				die("waitpid");
			if (r == 0)
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				fprintf(stderr, "pbid-churn: child %d (%s) failed\n", c->pid, c->path);
				return 1;
			}
			c->pid = 0;
			running--;
		}
		usleep(1000);
	}
	return 0;
}
