// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_cost FILE ITERATIONS ROUNDS: what one executable mmap + munmap of FILE costs the kernel
 * with no perf consumer, with a plain MMAP2 consumer, and with a build_id consumer.
 *
 * The three modes run in turn within every round, in an order that rotates from round to round,
 * so that drift in the machine (an emulator's JIT warming up, a noisy neighbour) touches each
 * mode alike. Only figures from one run are compared with each other.
 *
 * Prints one line per round and mode, then one summary line per mode:
 *   mode plain ns_per_iter_median 1234 rounds 9 records 90000 with_id 0
 * A mode the kernel refuses prints "mode build_id unsupported (errno)" and no figures: a kernel
 * without the feature is measured for what it has.
 * The build_id mode must see the id in its records; when none of them carries it (the kernel
 * fell back, e.g. because the file's first page was not cached), the run fails rather than report
 * the cost of a fallback as the cost of the feature.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 64
#define MAX_ROUNDS 101

enum mode { MODE_NONE, MODE_PLAIN, MODE_BUILD_ID, NR_MODES };
static const char *const mode_name[NR_MODES] = { "none", "plain", "build_id" };

struct consumer {
	int fd;
	void *ring;
	size_t ring_len;
	size_t page;
	unsigned long long records, with_id;
};

static int open_consumer(struct consumer *c, enum mode m)
{
	struct perf_event_attr attr;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (m == MODE_NONE)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.build_id = m == MODE_BUILD_ID;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	c->fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	c->page = sysconf(_SC_PAGESIZE);
	c->ring_len = (RING_PAGES + 1) * c->page;
	c->ring = mmap(NULL, c->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->ring == MAP_FAILED) {
		int err = -errno;

		close(c->fd);
		c->fd = -1;
		return err;
	}
	return 0;
}

static void close_consumer(struct consumer *c)
{
	if (c->fd < 0)
		return;
	munmap(c->ring, c->ring_len);
	close(c->fd);
	c->fd = -1;
}

/*
 * Consume what the kernel wrote, as a profiler would, so that the ring never fills and every
 * mmap is recorded. Only the headers are read: counting the records that carry an id is enough.
 */
static void drain(struct consumer *c)
{
	struct perf_event_mmap_page *meta = c->ring;
	const unsigned char *data = (const unsigned char *)c->ring + c->page;
	uint64_t size = RING_PAGES * c->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % size, first = sizeof(h);

		/* A header may wrap around the end of the ring. */
		if (off + first > size)
			first = size - off;
		memcpy(&h, data + off, first);
		memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_MMAP2) {
			c->records++;
			if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
				c->with_id++;
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t ns[NR_MODES][MAX_ROUNDS];
	unsigned long long records[NR_MODES] = { 0 }, with_id[NR_MODES] = { 0 };
	int supported[NR_MODES] = { 1, 1, 1 };
	long iters, rounds, r, i;
	struct stat st;
	char buf[65536];
	int fd, m, rc = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE ITERATIONS ROUNDS\n", argv[0]);
		return 2;
	}
	iters = strtol(argv[2], NULL, 10);
	rounds = strtol(argv[3], NULL, 10);
	if (iters < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "mmap_cost: ITERATIONS >= 1, 1 <= ROUNDS <= %d\n", MAX_ROUNDS);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	/* The id is read from cached pages only: cache the whole file before timing anything. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;

	for (m = 0; m < NR_MODES; m++) {
		struct consumer c;
		int err = open_consumer(&c, m);

		if (err) {
			printf("mode %s unsupported (%s)\n", mode_name[m], strerror(-err));
			supported[m] = 0;
		}
		close_consumer(&c);
	}
	if (!supported[MODE_PLAIN]) {
		fprintf(stderr, "mmap_cost: no MMAP2 consumer can be opened\n");
		return 1;
	}

	for (r = 0; r < rounds; r++) {
		for (int k = 0; k < NR_MODES; k++) {
			struct consumer c;
			uint64_t t0;

			m = (k + r) % NR_MODES;
			if (!supported[m])
				continue;
			if (open_consumer(&c, m)) {
				fprintf(stderr, "mmap_cost: %s consumer failed on round %ld\n",
					mode_name[m], r);
				return 1;
			}
			t0 = now_ns();
			for (i = 0; i < iters; i++) {
				void *p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

				if (p == MAP_FAILED) {
					perror("mmap");
					return 1;
				}
				munmap(p, st.st_size);
				if (c.fd >= 0)
					drain(&c);
			}
			ns[m][r] = (now_ns() - t0) / iters;
			records[m] += c.records;
			with_id[m] += c.with_id;
			printf("round %ld mode %s ns_per_iter %llu\n", r, mode_name[m],
			       (unsigned long long)ns[m][r]);
			close_consumer(&c);
		}
	}

	for (m = 0; m < NR_MODES; m++) {
		if (!supported[m])
			continue;
		qsort(ns[m], rounds, sizeof(ns[m][0]), cmp_u64);
		printf("mode %s ns_per_iter_median %llu min %llu max %llu rounds %ld records %llu with_id %llu\n",
		       mode_name[m], (unsigned long long)ns[m][rounds / 2],
		       (unsigned long long)ns[m][0], (unsigned long long)ns[m][rounds - 1], rounds,
		       records[m], with_id[m]);
	}
	if (supported[MODE_PLAIN] && records[MODE_PLAIN] < (unsigned long long)iters * rounds) {
		fprintf(stderr, "mmap_cost: the plain consumer lost records\n");
		rc = 1;
	}
	if (supported[MODE_BUILD_ID] && with_id[MODE_BUILD_ID] != records[MODE_BUILD_ID]) {
		fprintf(stderr, "mmap_cost: %llu of %llu build_id records carry no id\n",
			records[MODE_BUILD_ID] - with_id[MODE_BUILD_ID], records[MODE_BUILD_ID]);
		rc = 1;
	}
	return rc;
}
