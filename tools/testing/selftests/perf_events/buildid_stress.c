// SPDX-License-Identifier: GPL-2.0
/*
 * buildid_stress: everything around build IDs in MMAP2 records at once, for a long run under
 * KASAN and lockdep, seeded so that a failing run can be replayed.
 *
 *   buildid_stress [-s SEED] [-t SECONDS] [-f FILES] [-d DIR] [-n OPS]
 *
 * DIR (default: a directory beside the fixtures' copies in /tmp) holds FILES copies of the
 * g_sha1 fixture, every other one with its note moved past the first page (the ELF header and
 * program headers stay in page 0, so a parse reads two pages). Each file has VERSIONS versions that differ only in the bytes of the build-ID
 * note's descriptor: every byte of version v's ID differs from the same byte of every other
 * version's, so that an ID read while a rewrite is halfway through is recognised as torn.
 * At once, for SECONDS:
 *   - mappers map the files executable (whole, or from a page offset), mprotect, mremap and
 *     unmap them;
 *   - a rewriter writes another version's ID into a file in place (in two halves, to widen the
 *     window), truncates a file and restores it, extends it and restores it, punches a hole
 *     over the note and restores it, flips the note's n_descsz between 20 and 32 (512 times
 *     in a row with pwrite(), then 16,384 times by stores through a shared mapping), and
 *     drops files from the page cache, whole or all but their first page (a parse then finds
 *     page 0 and not the note's page, and must let go of page 0 once);
 *   - a forker forks children that map a file and exit, and children that exec this program
 *     (-x: map a file, exit);
 *   - consumers open perf events on every CPU with random attributes around the feature
 *     (build_id with and without mmap2, mmap, mmap_data, sample_id_all, older and newer
 *     attr.size), let them run a random while, drain them (or let the ring overflow), and
 *     close them.
 * -n leaves out rewriter operations, each a letter: r (an ID rewritten in place), t (truncate
 * and restore), e (extend and restore), h (punch a hole and restore), z (n_descsz flipped),
 * d (drop from the page cache), to narrow down what a failure needs. z is there for a parser
 * that reads n_descsz twice, once to check it and once to copy (5.10's BPF stack map did): the
 * copy would then take 32 bytes into a 20-byte id.
 * Every MMAP2 record that carries a build ID and names one of the files is checked: the ID
 * must be one the file had (a version) or torn between versions; anything else is wrong and
 * fails the run. At the end, the pages of the files still held by someone once their unheld
 * pages are dropped (a page reference never released) fail the run too. Prints the seed, the
 * operations per second, the records checked, the IDs found torn, the wrong ones (and which of
 * them are all zeros, what a descriptor read from a page a truncation zeroed gives), and the
 * pages held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buildid_util.h"

#define VERSIONS 4
#define MAX_FILES 64
#define MAPPERS 2
#define CONSUMERS 2
/* n_descsz stores of one burst through a shared mapping: even, so that it ends on id_len */
#define DESCSZ_STORES (1 << 14)

static unsigned int nfiles = 8;
static char dir[4096];
static char paths[MAX_FILES][4200];
/* Room for the fixture and its note moved past a 64 KiB page. */
#define IMAGE_MAX (160 << 10)
static uint8_t base[IMAGE_MAX];		/* the fixture's bytes */
/* File i's layout is layouts[i % 2]: the fixture as it is, and with its note past page 0. */
static struct layout {
	uint8_t images[VERSIONS][IMAGE_MAX];	/* the file with each version's ID */
	size_t size;
	size_t desc_off;			/* offset of the build ID's bytes in the file */
} layouts[2];
#define LAYOUT(i) (&layouts[(i) % 2])
static size_t id_len;
static uint8_t ids[VERSIONS][BID_BUILD_ID_MAX];
static const uint8_t zero_id[BID_BUILD_ID_MAX];
static atomic_bool stop;
static char skip_ops[16];		/* -n: rewriter operations left out (r t e h z d) */

static atomic_ulong n_maps, n_rewrites, n_truncs, n_holes, n_descsz, n_drops, n_forks, n_execs,
	n_opens, n_records, n_with_id, n_torn, n_wrong, n_zero, n_lost, n_leaked;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

/* xorshift64*, one state per thread, each seeded from the run's seed and its role. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t seeded(uint64_t seed, uint64_t role)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + role * 0xbf58476d1ce4e5b9ULL + 1;

	next(&s);
	return s ? s : 1;
}

static void die(const char *what)
{
	fprintf(stderr, "buildid_stress: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Writes version @v of the whole file @i, in one write. */
static void write_version(unsigned int i, int v)
{
	const struct layout *l = LAYOUT(i);
	int fd = open(paths[i], O_WRONLY | O_CREAT, 0755);

	if (fd < 0)
		die(paths[i]);
	if (pwrite(fd, l->images[v], l->size, 0) != (ssize_t)l->size || ftruncate(fd, l->size))
		die("write version");
	close(fd);
}

/* What an ID from a record of one of the files is: 0 a version, 1 torn, 2 wrong. */
static int classify(const uint8_t *id, size_t len)
{
	size_t b;
	int v;

	if (len != id_len)
		return 2;
	for (v = 0; v < VERSIONS; v++)
		if (!memcmp(id, ids[v], len))
			return 0;
	for (b = 0; b < len; b++) {
		for (v = 0; v < VERSIONS; v++)
			if (id[b] == ids[v][b])
				break;
		if (v == VERSIONS)
			return 2;
	}
	return 1;
}

static int file_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < nfiles; i++)
		if (!strcmp(name, paths[i]))
			return i;
	return -1;
}

/* @arg: whether the record's event asked for build IDs (only then is bit 14 one). */
static int check_record(const struct perf_event_header *h, void *arg)
{
	const bool *asked = arg;
	struct bid_mmap2 m;
	char hex[2 * BID_BUILD_ID_MAX + 1];
	size_t shown;
	int verdict;

	if (h->type == PERF_RECORD_LOST) {
		atomic_fetch_add(&n_lost, 1);
		return 0;
	}
	if (h->type != PERF_RECORD_MMAP2)
		return 0;
	atomic_fetch_add(&n_records, 1);
	if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
		return 0;
	if (!*asked) {
		/*
		 * The bit on a record of an event that did not ask: another event's build ID
		 * setting leaked onto it (what b9d1fdc6f4ac fixed upstream). Its fields are
		 * maj/min/ino, read as an ID they would be wrong.
		 */
		atomic_fetch_add(&n_leaked, 1);
		return 0;
	}
	if (bid_parse_mmap2(h, &m) || file_index(m.filename) < 0)
		return 0;
	atomic_fetch_add(&n_with_id, 1);
	verdict = classify(m.build_id, m.build_id_size);
	/* A size past the field (a kernel bug, wrong anyway): only the field's bytes are read. */
	shown = m.build_id_size < BID_BUILD_ID_MAX ? m.build_id_size : BID_BUILD_ID_MAX;
	if (verdict == 1)
		atomic_fetch_add(&n_torn, 1);
	/*
	 * An ID of zeros is wrong too, but it has one known cause: a descriptor read from a page
	 * that a truncation zeroed before it shrank i_size. The series reads i_size again after
	 * the copy and refuses an all-zero descriptor; upstream does neither, so its count
	 * says how often that race was won.
	 */
	if (verdict == 2 && shown && !memcmp(m.build_id, zero_id, shown))
		atomic_fetch_add(&n_zero, 1);
	if (verdict == 2 && atomic_fetch_add(&n_wrong, 1) < 5) {
		pthread_mutex_lock(&report_lock);
		printf("# WRONG build id %s (size %u) in MMAP2 of %s pid %u\n",
		       bid_hex(m.build_id, shown, hex), m.build_id_size, m.filename, m.pid);
		pthread_mutex_unlock(&report_lock);
	}
	return 0;
}

/* Maps file @i (whole or from a page), sometimes mprotects or mremaps it, and unmaps it. */
static void map_once(uint64_t *rs, unsigned int i)
{
	size_t page = bid_page_size(), len = LAYOUT(i)->size;
	off_t off = 0;
	void *p;
	int fd = open(paths[i], O_RDONLY);

	if (fd < 0)
		return;		/* between a truncate and its restore: fine */
	if (next(rs) % 4 == 0 && len > page) {
		off = page;
		len -= page;
	}
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);
	close(fd);
	if (p == MAP_FAILED)
		return;
	atomic_fetch_add(&n_maps, 1);
	switch (next(rs) % 4) {
	case 0:
		mprotect(p, page, PROT_READ);
		mprotect(p, page, PROT_READ | PROT_EXEC);
		break;
	case 1: {
		void *q = mremap(p, len, len + page, MREMAP_MAYMOVE);

		if (q != MAP_FAILED) {
			p = q;
			len += page;
		}
		break;
	}
	default:
		break;
	}
	munmap(p, len);
}

static void *mapper(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;

	while (!atomic_load(&stop))
		map_once(&rs, next(&rs) % nfiles);
	return NULL;
}

static void *rewriter(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;
	size_t half = id_len / 2;

	while (!atomic_load(&stop)) {
		unsigned int i = next(&rs) % nfiles;
		int v = next(&rs) % VERSIONS, fd = open(paths[i], O_RDWR);
		const size_t desc_off = LAYOUT(i)->desc_off, base_size = LAYOUT(i)->size;

		if (fd < 0)
			die(paths[i]);
		int op = next(&rs) % 9;
		static const char op_letter[9] = "rrrtehddz";
		/*
		 * n_descsz: the note header's second word. After it come n_type and the
		 * name, "GNU\0", then the descriptor: 12 bytes before it.
		 */
		const off_t descsz_off = desc_off - 12;
		uint32_t descsz;

		if (strchr(skip_ops, op_letter[op])) {
			close(fd);
			continue;
		}
		switch (op) {
		case 0: case 1: case 2:
			/* Another version's ID, in two writes: a parse between them reads a mix. */
			if (pwrite(fd, ids[v], half, desc_off) < 0 ||
			    pwrite(fd, ids[v] + half, id_len - half, desc_off + half) < 0)
				die("rewrite");
			atomic_fetch_add(&n_rewrites, 1);
			break;
		case 3:
			if (ftruncate(fd, desc_off) || ftruncate(fd, 0))
				die("truncate");
			close(fd);
			write_version(i, v);
			fd = -1;
			atomic_fetch_add(&n_truncs, 1);
			break;
		case 4:
			if (ftruncate(fd, base_size + 3 * bid_page_size()) || ftruncate(fd, base_size))
				die("extend");
			atomic_fetch_add(&n_truncs, 1);
			break;
		case 5:
			if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       desc_off & ~(bid_page_size() - 1), bid_page_size())) {
				atomic_fetch_add(&n_holes, 1);
				close(fd);
				write_version(i, v);
				fd = -1;
			}
			break;
		case 8: {
			/*
			 * Longer than any id, back and forth, many times: a parser that reads it
			 * once refuses the note or takes it whole, and one that reads it twice
			 * needs a flip between its two reads, a window of a few instructions.
			 * Through write(2) first, then by stores into the page cache's page
			 * through a shared mapping: a system call per flip is far longer than
			 * the window, a store is not. Every burst ends on id_len. This thread
			 * alone truncates the files, so the mapping cannot fault past the end.
			 */
			const size_t page = bid_page_size();
			const off_t map_off = descsz_off & ~(off_t)(page - 1);
			uint8_t *m;

			for (int k = 0; k < 512; k++) {
				descsz = k & 1 ? id_len : id_len + 12;
				if (pwrite(fd, &descsz, 4, descsz_off) != 4)
					die("descsz");
			}
			m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map_off);
			if (m == MAP_FAILED)
				die("mmap descsz");
			for (int k = 0; k < DESCSZ_STORES; k++)
				((volatile uint32_t *)(m + (descsz_off - map_off)))[0] =
					k & 1 ? id_len : id_len + 12;
			munmap(m, page);
			atomic_fetch_add(&n_descsz, 1);
			break;
		}
		default:
			/* All but page 0, half the time: page 0 found, the note's page not. */
			posix_fadvise(fd, next(&rs) % 2 ? bid_page_size() : 0, 0, POSIX_FADV_DONTNEED);
			atomic_fetch_add(&n_drops, 1);
			break;
		}
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static void *forker(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		die("/proc/self/exe");
	self[n] = 0;
	while (!atomic_load(&stop)) {
		unsigned int i = next(&rs) % nfiles;
		bool exec = next(&rs) % 2;
		pid_t pid = fork();

		if (pid < 0) {
			usleep(1000);
			continue;
		}
		if (pid == 0) {
			if (exec) {
				execl(self, self, "-x", paths[i], (char *)NULL);
				_exit(127);
			}
			map_once(&rs, i);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		atomic_fetch_add(exec ? &n_execs : &n_forks, 1);
	}
	return NULL;
}

/* One consumer's events: one per CPU, random attributes, for a random while. */
static void *consumer(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct bid_event *evs = calloc(ncpu, sizeof(*evs));

	if (!evs)
		die("calloc");
	while (!atomic_load(&stop)) {
		struct bid_opts o = {
			.build_id = next(&rs) % 4 != 0,
			.mmap = next(&rs) % 8 != 0,
			.mmap2 = next(&rs) % 8 != 0,
			.mmap_data = next(&rs) % 4 == 0,
			.on_cpu = true,
			.cpu_wide = true,
			.data_pages = 1u << (next(&rs) % 5),
		};
		bool drain = next(&rs) % 4 != 0;
		long c, opened = 0;

		for (c = 0; c < ncpu; c++) {
			o.cpu = c;
			evs[c].fd = -1;
			if (!bid_event_open(&evs[c], &o)) {
				bid_event_enable(&evs[c]);
				opened++;
			}
		}
		atomic_fetch_add(&n_opens, opened);
		for (int t = next(&rs) % 20 + 1; t > 0 && !atomic_load(&stop); t--) {
			usleep(10000);
			for (c = 0; drain && c < ncpu; c++)
				if (evs[c].fd >= 0)
					bid_event_drain(&evs[c], check_record, &o.build_id);
		}
		for (c = 0; c < ncpu; c++) {
			if (evs[c].fd < 0)
				continue;
			bid_event_disable(&evs[c]);
			bid_event_drain(&evs[c], check_record, &o.build_id);
			bid_event_close(&evs[c]);
		}
	}
	free(evs);
	return NULL;
}

/*
 * Layout 1: @l0's bytes with the PT_NOTE segment that holds the ID copied to the first page
 * boundary past the end of the file and its program header pointed there. The ELF header and
 * program headers stay in page 0. Returns -1 if the fixture is not laid out as expected.
 */
static uint64_t get_n(const uint8_t *p, size_t n)
{
	uint64_t v64 = 0;
	uint32_t v32 = 0;
	uint16_t v16 = 0;

	if (n == 8)
		return memcpy(&v64, p, 8), v64;
	if (n == 4)
		return memcpy(&v32, p, 4), v32;
	return memcpy(&v16, p, 2), v16;
}

static void put_n(uint8_t *p, size_t n, uint64_t v)
{
	uint32_t v32 = v;

	if (n == 8)
		memcpy(p, &v, 8);
	else
		memcpy(p, &v32, 4);
}

static int move_note(const struct layout *l0, struct layout *l1)
{
	bool elf64 = base[4] == 2;
	size_t w = elf64 ? 8 : 4;	/* the width of an address or offset */
	uint64_t phoff, off, filesz, to, k;
	uint64_t phentsize, phnum;

	phoff = get_n(base + (elf64 ? 0x20 : 0x1c), w);
	phentsize = get_n(base + (elf64 ? 0x36 : 0x2a), 2);
	phnum = get_n(base + (elf64 ? 0x38 : 0x2c), 2);
	to = (l0->size + bid_page_size() - 1) & ~(uint64_t)(bid_page_size() - 1);
	for (k = 0; k < phnum; k++) {
		uint8_t *ph = base + phoff + k * phentsize;

		if (phoff + (k + 1) * phentsize > l0->size || get_n(ph, 4) != 4)
			continue;	/* not PT_NOTE */
		off = get_n(ph + (elf64 ? 8 : 4), w);
		filesz = get_n(ph + (elf64 ? 0x20 : 0x10), w);
		if (l0->desc_off < off || l0->desc_off + id_len > off + filesz)
			continue;	/* another note segment */
		if (to + filesz > IMAGE_MAX || off + filesz > l0->size)
			return -1;
		memcpy(base + to, base + off, filesz);
		put_n(ph + (elf64 ? 8 : 4), w, to);
		l1->size = to + filesz;
		l1->desc_off = to + (l0->desc_off - off);
		return 0;
	}
	return -1;
}

static int copy_fixture(void)
{
	char path[4096], idhex[2 * BID_BUILD_ID_MAX + 1];
	uint8_t id[BID_BUILD_ID_MAX];
	ssize_t n;
	int fd, len, v, l;
	size_t b;

	if (bid_fixture_path("g_sha1", path, sizeof(path)))
		return -1;
	len = bid_expected_id("g_sha1", id, sizeof(id));
	if (len <= 0)
		return -1;
	id_len = len;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, base, sizeof(base));
	close(fd);
	if (n <= 0 || (size_t)n == sizeof(base))
		return -1;
	layouts[0].size = n;
	/* The descriptor: the one place the fixture's ID bytes occur. */
	for (b = 0; b + id_len <= layouts[0].size; b++)
		if (!memcmp(base + b, id, id_len))
			break;
	if (b + id_len > layouts[0].size)
		return -1;
	layouts[0].desc_off = b;
	/* Version v: byte b is v * 0x40 + b (mod 256): each byte differs between versions. */
	for (v = 0; v < VERSIONS; v++) {
		for (b = 0; b < id_len; b++)
			ids[v][b] = (uint8_t)(v * 0x40 + b + 1);
	}
	for (l = 0; l < 2; l++) {
		if (l == 1 && move_note(&layouts[0], &layouts[1]))
			return -1;
		for (v = 0; v < VERSIONS; v++) {
			memcpy(layouts[l].images[v], base, layouts[l].size);
			memcpy(layouts[l].images[v] + layouts[l].desc_off, ids[v], id_len);
		}
	}
	printf("# fixture g_sha1: %zu bytes, id at %zu; with its note past page 0: %zu bytes, id at %zu; versions %s ...\n",
	       layouts[0].size, layouts[0].desc_off, layouts[1].size, layouts[1].desc_off,
	       bid_hex(ids[0], id_len, idhex));
	return 0;
}

/*
 * A page reference that the parser takes and never drops pins the page: no
 * memory is ever freed wrongly, so neither KASAN nor lockdep can see it.
 * Once the run is over, nothing maps the files, and bid_evict_fd() drops
 * every page of a file that no one holds (POSIX_FADV_DONTNEED drains the
 * per-CPU LRU lists, whose references are not leaks, and it retries for a
 * second); the pages it cannot drop are held by someone.  Returns the pages
 * of all files so held, or -1 when the check cannot run: on tmpfs and ramfs
 * the page cache is the file, and nothing drops it.
 */
static long held_pages(void)
{
	long held = 0;
	unsigned int i;

	for (i = 0; i < nfiles; i++) {
		int fd = open(paths[i], O_RDONLY), err;
		size_t resident = 0;
		struct stat st;

		if (fd < 0)
			return -1;
		err = bid_evict_fd(fd);
		if (err == -EBUSY && (fstat(fd, &st) || bid_resident_pages(fd, st.st_size, &resident)))
			err = -EIO;
		close(fd);
		if (err && err != -EBUSY)
			return -1;
		held += resident;
	}
	return held;
}

/* -x FILE: a child that exec'd this program maps FILE executable once and exits. */
static int child(const char *file)
{
	int fd = open(file, O_RDONLY);
	void *p;

	if (fd < 0)
		return 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) ^ getpid();
	unsigned int secs = 10, i;
	pthread_t th[MAPPERS + CONSUMERS + 2];
	int nth = 0, opt, r;
	long held;
	uint64_t t0;
	double dt;

	snprintf(dir, sizeof(dir), "/tmp/buildid_stress.%d", getpid());
	while ((opt = getopt(argc, argv, "s:t:f:d:n:x:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': secs = atoi(optarg); break;
		case 'f': nfiles = atoi(optarg); break;
		case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
		case 'n': snprintf(skip_ops, sizeof(skip_ops), "%s", optarg); break;
		case 'x': return child(optarg);
		default:
			fprintf(stderr, "usage: buildid_stress [-s SEED] [-t SECONDS] [-f FILES] [-d DIR] [-n OPS]\n");
			return 2;
		}
	}
	if (!nfiles || nfiles > MAX_FILES) {
		fprintf(stderr, "buildid_stress: -f 1 to %d\n", MAX_FILES);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# seed %llu (replay: -s %llu -t %u -f %u%s%s), %ld CPUs online\n",
	       (unsigned long long)seed, (unsigned long long)seed, secs, nfiles,
	       skip_ops[0] ? " -n " : "", skip_ops, sysconf(_SC_NPROCESSORS_ONLN));
	r = bid_probe();
	if (r) {
		printf("# SKIP: %s (%d)\n", BID_SKIP_REASON, r);
		return 4;	/* kselftest's skip */
	}
	if (copy_fixture()) {
		fprintf(stderr, "buildid_stress: cannot read the g_sha1 fixture and its id\n");
		return 2;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	for (i = 0; i < nfiles; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/f%u", dir, i);
		write_version(i, 0);
	}
	t0 = bid_now_ns();
	for (i = 0; i < MAPPERS; i++)
		pthread_create(&th[nth++], NULL, mapper, (void *)(uintptr_t)seeded(seed, 10 + i));
	for (i = 0; i < CONSUMERS; i++)
		pthread_create(&th[nth++], NULL, consumer, (void *)(uintptr_t)seeded(seed, 20 + i));
	pthread_create(&th[nth++], NULL, rewriter, (void *)(uintptr_t)seeded(seed, 30));
	pthread_create(&th[nth++], NULL, forker, (void *)(uintptr_t)seeded(seed, 40));
	sleep(secs);
	atomic_store(&stop, true);
	for (r = 0; r < nth; r++)
		pthread_join(th[r], NULL);
	dt = (bid_now_ns() - t0) / 1e9;
	held = held_pages();
	for (i = 0; i < nfiles; i++)
		unlink(paths[i]);
	rmdir(dir);

	printf("# %.1f s: %lu maps, %lu rewrites, %lu truncates/extends, %lu holes, "
	       "%lu descsz flip bursts, %lu cache drops, "
	       "%lu forks, %lu execs, %lu events opened: %.0f operations/s\n", dt,
	       atomic_load(&n_maps), atomic_load(&n_rewrites), atomic_load(&n_truncs),
	       atomic_load(&n_holes), atomic_load(&n_descsz), atomic_load(&n_drops),
	       atomic_load(&n_forks),
	       atomic_load(&n_execs), atomic_load(&n_opens),
	       (atomic_load(&n_maps) + atomic_load(&n_rewrites) + atomic_load(&n_truncs) +
		atomic_load(&n_holes) + atomic_load(&n_descsz) + atomic_load(&n_drops) +
		atomic_load(&n_forks) + atomic_load(&n_execs) + atomic_load(&n_opens)) / dt);
	printf("# %lu MMAP2 records read (%lu lost records), %lu with a build id of the files: "
	       "%lu torn by a rewrite, %lu wrong (%lu of them all zeros); %lu with the build-id "
	       "bit from an event that did not ask\n", atomic_load(&n_records),
	       atomic_load(&n_lost), atomic_load(&n_with_id), atomic_load(&n_torn),
	       atomic_load(&n_wrong), atomic_load(&n_zero), atomic_load(&n_leaked));
	if (held < 0)
		printf("# the page-reference check could not run (the files are on tmpfs?)\n");
	else
		printf("# %ld pages of the files still in the page cache after the run, dropped as "
		       "no one holds them (a page the parser took and never put stays)\n", held);
	if (atomic_load(&n_leaked)) {
		printf("not ok 1 buildid_stress: the build-id bit on records of events that did not "
		       "ask for it (seed %llu)\n", (unsigned long long)seed);
		return 1;
	}
	if (atomic_load(&n_wrong)) {
		printf("not ok 1 buildid_stress: wrong build ids (seed %llu)\n",
		       (unsigned long long)seed);
		return 1;
	}
	if (held > 0) {
		printf("not ok 1 buildid_stress: pages of the files held after the run: a page "
		       "reference leak (seed %llu)\n", (unsigned long long)seed);
		return 1;
	}
	if (!atomic_load(&n_with_id)) {
		printf("not ok 1 buildid_stress: no MMAP2 record with a build id was checked\n");
		return 1;
	}
	printf("ok 1 buildid_stress\n");
	return 0;
}
