// SPDX-License-Identifier: GPL-2.0
/*
 * Build IDs for the ways a file gets mapped: at a nonzero offset, as data,
 * by mprotect(PROT_EXEC), unlinked, as a memfd, by exec in an inherited
 * child, to a CPU-wide event; with two consumers of one mmap; and after the
 * file's pages left the page cache.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"


/* The parse reads the file from offset 0, whatever the mapping's pgoff. */
TEST(nonzero_pgoff)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	size_t page = bid_page_size();
	struct bid_mmap2 r;
	struct fx f;
	void *p;

	REQUIRE_BUILD_ID();
	fx_open(_metadata, "g_static", &f);
	ASSERT_LT(3 * page, f.size);
	ASSERT_EQ(1, bid_record_fd(&o, f.fd, page, 2 * page, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE, &p, &r));
	ASSERT_EQ(2 * page, r.pgoff);
	ASSERT_EQ(page, r.len);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	munmap(p, page);
	close(f.fd);
}

/* A PROT_READ mapping with attr.mmap_data: MMAP_DATA plus the id. */
TEST(data_mapping)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_mmap2 r;
	struct fx f;
	void *p;

	REQUIRE_BUILD_ID();
	o.mmap_data = true;
	fx_open(_metadata, "g_sha1", &f);
	ASSERT_EQ(1, bid_record_fd(&o, f.fd, f.size, 0, PROT_READ, MAP_PRIVATE, &p, &r));
	ASSERT_EQ(PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA |
		  PERF_RECORD_MISC_MMAP_BUILD_ID, r.misc);
	ASSERT_EQ(PROT_READ, r.prot);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	munmap(p, f.size);
	close(f.fd);
}

/* mprotect(PROT_EXEC) of a data mapping emits a new MMAP2, with the id. */
TEST(mprotect_exec)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_event ev;
	struct bid_mmap2 r;
	struct fx f;
	void *p;
	int err;

	REQUIRE_BUILD_ID();
	fx_open(_metadata, "g_uuid", &f);
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	p = mmap(NULL, f.size, PROT_READ, MAP_PRIVATE, f.fd, 0);
	err = p == MAP_FAILED ? -errno : 0;
	/* without mmap_data, the PROT_READ mapping itself gives no record */
	if (!err)
		err = mprotect(p, f.size, PROT_READ | PROT_EXEC) ? -errno : 0;
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_EQ(0, err) TH_LOG("%s", strerror(-err));
	ASSERT_EQ(1, bid_find_mmap2(&ev, getpid(), (uintptr_t)p, NULL, &r));
	ASSERT_EQ(PROT_READ | PROT_EXEC, r.prot);
	ASSERT_STREQ(f.real, r.filename);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	bid_event_close(&ev);
	munmap(p, f.size);
	close(f.fd);
}

/*
 * A copy of @f in a new file (next to the fixtures) or a memfd, every page
 * of it cached and up to date.  Writing part of a page into a new file
 * leaves that page cached but not up to date where the filesystem's blocks
 * are smaller than a page (the lab disk's ext4 has 1 KiB blocks): the
 * blocks the write did not cover were never read.  The kernel parses only
 * up-to-date pages, so a small copy would fall back; it is written back,
 * dropped and read in whole, as an executable loaded from disk is.
 */
static int copy_of(struct __test_metadata *_metadata, struct fx *f, bool memfd,
		   char *name, size_t len)
{
	char *buf = malloc(f->size);
	int fd, err;

	ASSERT_TRUE(buf != NULL);
	ASSERT_EQ((ssize_t)f->size, pread(f->fd, buf, f->size, 0));
	if (memfd) {
		fd = memfd_create("buildid-elf", MFD_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("memfd_create: %s", strerror(errno));
		snprintf(name, len, "/memfd:buildid-elf (deleted)");
	} else {
		snprintf(name, len, "%s.unlinked.XXXXXX", f->real);
		fd = mkostemp(name, O_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("mkostemp %s: %s", name, strerror(errno));
		ASSERT_EQ(0, unlink(name));
		strcat(name, " (deleted)");
	}
	ASSERT_EQ((ssize_t)f->size, pwrite(fd, buf, f->size, 0));
	/*
	 * A page that the write filled only in part is not up to date when the
	 * filesystem's blocks are smaller than the page (the lab's 1 KiB ext4
	 * disk, any ext4 under 64 KiB pages), and the parser must not read it.
	 * Write it out (a page that is not up to date looks evicted already),
	 * evict it and read it back, as a file that was read before, so that
	 * the case is about the missing name (tmpfs has no disk: -ENOTBLK).
	 */
	if (!memfd) {
		int err = fdatasync(fd) ? -errno : bid_evict_fd(fd);

		ASSERT_TRUE(err == 0 || err == -ENOTBLK) TH_LOG("evicting the copy: %s",
								strerror(-err));
		if (!err)
			ASSERT_EQ((ssize_t)f->size, pread(fd, buf, f->size, 0));
	}
	free(buf);
	/* tmpfs and ramfs pages are up to date once written */
	err = memfd ? -ENOTBLK : bid_evict_fd(fd);
	ASSERT_TRUE(!err || err == -ENOTBLK) TH_LOG("evicting %s: %s", name, strerror(-err));
	ASSERT_EQ(0, bid_read_file(fd, NULL));
	return fd;
}

FIXTURE(nameless) {};
FIXTURE_SETUP(nameless) {}
FIXTURE_TEARDOWN(nameless) {}
FIXTURE_VARIANT(nameless) {
	bool memfd;
};
FIXTURE_VARIANT_ADD(nameless, unlinked_file) { .memfd = false };
FIXTURE_VARIANT_ADD(nameless, memfd) { .memfd = true };

/* A file without a name still has its id: the parse goes by the VMA's file. */
TEST_F(nameless, exec_mapping)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	char name[PATH_MAX + 32];
	struct bid_mmap2 r;
	struct fx f;
	void *p;
	int fd;

	REQUIRE_BUILD_ID();
	fx_open(_metadata, "g_hex8", &f);
	fd = copy_of(_metadata, &f, variant->memfd, name, sizeof(name));
	ASSERT_EQ(1, bid_record_fd(&o, fd, f.size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				   &p, &r));
	ASSERT_STREQ(name, r.filename);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	munmap(p, f.size);
	close(fd);
	close(f.fd);
}

/*
 * Two events on one task, with and without build_id, created in both
 * orders, and two that both have it; one mmap is delivered to both.  An
 * event without build_id must get the classic payload and never bit 14;
 * every event with it must get the id (the parse runs once per mmap and
 * its result serves them all).  Kernels that OR bit 14 into the header
 * shared by all consumers fail the order in which the build_id event is
 * visited first (the newest event comes first in the context's list, so
 * that is "plain_first").
 */
FIXTURE(mixed) {};
FIXTURE_SETUP(mixed) {}
FIXTURE_TEARDOWN(mixed) {}
FIXTURE_VARIANT(mixed) {
	bool first_build_id, second_build_id;
};
FIXTURE_VARIANT_ADD(mixed, build_id_first) { .first_build_id = true };
FIXTURE_VARIANT_ADD(mixed, plain_first) { .second_build_id = true };
FIXTURE_VARIANT_ADD(mixed, both_build_id) { .first_build_id = true, .second_build_id = true };

#define KNOWN_MISC_LEAK \
	"known kernel bug (bit 14 ORed into the shared header), not a test bug: the event without build_id got bit 14 over a maj/min/ino payload; upstream computes misc per event"

static void check_consumer(struct __test_metadata *_metadata, struct bid_event *ev,
			   bool build_id, void *p, const struct fx *f)
{
	struct bid_mmap2 r;

	ASSERT_EQ(1, bid_find_mmap2(ev, getpid(), (uintptr_t)p, NULL, &r));
	if (build_id) {
		assert_build_id(_metadata, &r, f->id, f->id_len);
		return;
	}
	if ((r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && r.maj == major(f->st.st_dev) &&
	    r.min == minor(f->st.st_dev) && r.ino == f->st.st_ino)
		TH_LOG("%s", KNOWN_MISC_LEAK);
	assert_fallback_fd(_metadata, &r, &f->st, f->fd);
}

TEST_F(mixed, consumers)
{
	struct bid_opts with = BID_OPTS_DEFAULT;
	struct bid_opts without = { .mmap = true, .mmap2 = true };
	struct bid_event first, second;
	struct fx f;
	void *p;

	REQUIRE_BUILD_ID();
	fx_open(_metadata, "g_sha1", &f);
	ASSERT_EQ(0, bid_event_open(&first, variant->first_build_id ? &with : &without));
	ASSERT_EQ(0, bid_event_open(&second, variant->second_build_id ? &with : &without));
	ASSERT_EQ(0, bid_event_enable(&first));
	ASSERT_EQ(0, bid_event_enable(&second));
	p = mmap(NULL, f.size, PROT_READ | PROT_EXEC, MAP_PRIVATE, f.fd, 0);
	ASSERT_EQ(0, bid_event_disable(&first));
	ASSERT_EQ(0, bid_event_disable(&second));
	ASSERT_TRUE(p != MAP_FAILED);
	check_consumer(_metadata, &first, variant->first_build_id, p, &f);
	check_consumer(_metadata, &second, variant->second_build_id, p, &f);
	bid_event_close(&first);
	bid_event_close(&second);
	munmap(p, f.size);
	close(f.fd);
}

/* Pins the test to the CPU it runs on, and points @o's event there. */
static void pin_to_cpu(struct __test_metadata *_metadata, struct bid_opts *o)
{
	cpu_set_t set;

	o->on_cpu = true;
	o->cpu = sched_getcpu();
	ASSERT_LE(0, o->cpu);
	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
}

/*
 * A CPU-wide event (pid -1) is not in the task's context: the kernel
 * delivers the mmap to it through the per-CPU list of side-band events.
 * It must get the id all the same.
 */
TEST(cpu_wide)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_event ev;
	struct bid_mmap2 r;
	struct fx f;
	int err, cnt;
	void *p;

	REQUIRE_BUILD_ID();
	o.cpu_wide = true;
	pin_to_cpu(_metadata, &o);
	fx_open(_metadata, "g_hex20", &f);
	err = bid_event_open(&ev, &o);
	if (err == -EACCES || err == -EPERM)
		ENV_SKIP("a CPU-wide event needs CAP_PERFMON or perf_event_paranoid <= 0");
	ASSERT_EQ(0, err) TH_LOG("CPU-wide event on CPU %d: %s", o.cpu, strerror(-err));
	ASSERT_EQ(0, bid_event_enable(&ev));
	p = mmap(NULL, f.size, PROT_READ | PROT_EXEC, MAP_PRIVATE, f.fd, 0);
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_TRUE(p != MAP_FAILED);
	cnt = bid_find_mmap2(&ev, getpid(), (uintptr_t)p, NULL, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records of our mapping on CPU %d: %d", o.cpu, cnt);
	ASSERT_STREQ(f.real, r.filename);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	bid_event_close(&ev);
	munmap(p, f.size);
	close(f.fd);
}

/*
 * fork + exec with an inherited event: the child's exec mapping has the id.
 * The kernel refuses to mmap an inherited event with cpu -1, so the event
 * is per CPU, and parent and child are pinned to that CPU.
 */
TEST(inherit_exec)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_event ev;
	struct bid_mmap2 r;
	int status, cnt;
	struct fx f;
	pid_t pid;

	REQUIRE_BUILD_ID();
	o.inherit = true;
	pin_to_cpu(_metadata, &o);
	fx_open(_metadata, "g_sha1", &f);
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *argv[] = { f.path, NULL }, *envp[] = { NULL };

		execve(f.path, argv, envp);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("exec of %s failed", f.path);
	cnt = bid_find_mmap2(&ev, pid, 0, f.real, &r);
	ASSERT_LE(1, cnt) TH_LOG("no MMAP2 of %s from child %d", f.real, pid);
	ASSERT_EQ(PROT_EXEC, r.prot & PROT_EXEC);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	bid_event_close(&ev);
	close(f.fd);
}

/*
 * The parse runs under mmap_lock and must not start I/O: with the file's
 * pages evicted it falls back (never a wrong id), and afterwards the pages
 * are still not resident, so it did not read them in (not even by
 * readahead).  Once they are read back the id is there, which shows that the
 * fallback came from the eviction.  Needs a block-backed filesystem (tmpfs
 * pages cannot be evicted): the lab's ext4 disk, $BUILDID_BLOCK_DIR.
 */
TEST(page_cache_miss)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	const char *dir = getenv("BUILDID_BLOCK_DIR");
	char path[PATH_MAX];
	struct bid_mmap2 r;
	size_t resident;
	struct fx f;
	struct stat st;
	int fd, err;
	void *p;

	REQUIRE_BUILD_ID();
	if (!dir || !*dir)
		ENV_SKIP("BUILDID_BLOCK_DIR not set: no block-backed filesystem to evict pages from");
	ASSERT_EQ(0, stat(dir, &st)) TH_LOG("BUILDID_BLOCK_DIR=%s: %s", dir, strerror(errno));
	if (major(st.st_dev) == 0)
		ENV_SKIP("BUILDID_BLOCK_DIR=%s is not block-backed (device %u:%u)", dir,
			 major(st.st_dev), minor(st.st_dev));
	/* the expected id of the same fixture, from the installed copy */
	fx_open(_metadata, "g_static", &f);
	close(f.fd);
	snprintf(path, sizeof(path), "%s/buildid_fixtures/g_static", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_EQ(f.size, st.st_size);
	err = bid_evict_fd(fd);
	if (err == -EBUSY)
		ENV_SKIP("%.200s: pages stay in the page cache after POSIX_FADV_DONTNEED", path);
	ASSERT_EQ(0, err) TH_LOG("evicting %s: %s", path, strerror(-err));
	ASSERT_EQ(1, bid_record_fd(&o, fd, st.st_size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				   &p, &r));
	munmap(p, st.st_size);
	assert_fallback_fd(_metadata, &r, &st, fd);
	ASSERT_EQ(0, bid_resident_pages(fd, st.st_size, &resident));
	ASSERT_EQ(0, resident)
		TH_LOG("%zu pages of %s are resident after the fallback: the parse read them in",
		       resident, path);

	ASSERT_EQ(0, bid_read_file(fd, NULL));
	ASSERT_EQ(1, bid_record_fd(&o, fd, st.st_size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				   &p, &r));
	munmap(p, st.st_size);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	close(fd);
}

/*
 * A writer flips the note's n_descsz between 20 and 0xffffffff while the
 * file is being mapped again and again.  Whatever the interleaving, each
 * record must carry either the file's id or the fallback payload: a
 * parser that reads a header field twice (check one value, use another)
 * would copy garbage or crash.  The id bytes themselves never change.  Both
 * kinds of record must show up, each after the other: a kernel that always
 * falls back (or never does) has not parsed the file at all (or not under
 * the writer), and one whose records stop falling back once it found the
 * id has kept that id instead of parsing the file again.
 */
struct rewrite_ctx {
	const char *name;
	const uint8_t *id;
	size_t id_len;
	const struct stat *st;
	int with_id, fallback, wrong;
	/* changes of kind from one record to the next: to the id, to the fallback */
	int to_id, to_fallback, last;
	struct bid_mmap2 bad;
};

static int rewrite_cb(const struct perf_event_header *h, void *arg)
{
	struct rewrite_ctx *c = arg;
	struct bid_mmap2 r;
	bool ok;

	if (h->type != PERF_RECORD_MMAP2 || bid_parse_mmap2(h, &r) || strcmp(r.filename, c->name))
		return 0;
	if (r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		ok = r.build_id_size == c->id_len && !memcmp(r.build_id, c->id, c->id_len);
		c->with_id += ok;
		c->to_id += ok && c->last == 'f';
		c->last = ok ? 'i' : c->last;
	} else {
		ok = r.maj == major(c->st->st_dev) && r.min == minor(c->st->st_dev) &&
		     r.ino == c->st->st_ino;
		c->fallback += ok;
		c->to_fallback += ok && c->last == 'i';
		c->last = ok ? 'f' : c->last;
	}
	if (!ok && !c->wrong++)
		c->bad = r;
	return 0;
}

TEST(concurrent_rewrite)
{
	/* The note's header in the fixture's byte order, the machine's own. */
	static const uint32_t note_hdr[3] = { 4, 20, 3 /* NT_GNU_BUILD_ID */ };
	uint8_t pattern[16];
	struct bid_opts o = BID_OPTS_DEFAULT;
	char name[PATH_MAX + 32], raw[64];
	struct rewrite_ctx c = { 0 };
	struct bid_event ev;
	uint8_t *buf;
	uint64_t now, min_end, max_end;
	pid_t parent = getpid();
	off_t descsz_off = -1;
	size_t resident = 0;
	struct stat st;
	struct fx f;
	size_t i;
	pid_t pid;
	int fd;

	REQUIRE_BUILD_ID();
	memcpy(pattern, note_hdr, sizeof(note_hdr));
	memcpy(pattern + sizeof(note_hdr), "GNU", 4);
	fx_open(_metadata, "c_elf64_dyn", &f);
	fd = copy_of(_metadata, &f, false, name, sizeof(name));
	ASSERT_EQ(0, fstat(fd, &st));
	buf = malloc(f.size);
	ASSERT_TRUE(buf != NULL);
	ASSERT_EQ((ssize_t)f.size, pread(fd, buf, f.size, 0));
	for (i = 0; i + sizeof(pattern) <= f.size; i += 4)
		if (!memcmp(buf + i, pattern, sizeof(pattern)))
			descsz_off = i + 4;
	free(buf);
	ASSERT_LE(0, descsz_off) TH_LOG("no GNU build-ID note header in c_elf64_dyn");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t v[2] = { 20, 0xffffffff };

		/* Dies with the test, whichever way the test ends. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		/*
		 * Yielding after each write lets a single-CPU machine see both
		 * values too: without it, the writer is preempted at the same
		 * point of its loop every time and the mapper sees one value.
		 */
		for (i = 0;; i++) {
			if (pwrite(fd, &v[i & 1], 4, descsz_off) != 4)
				_exit(1);
			sched_yield();
		}
	}
	c.name = name;
	c.id = f.id;
	c.id_len = f.id_len;
	c.st = &st;
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	/* 1.5 s, and up to 10 s until each kind of record followed the other */
	now = bid_now_ns();
	min_end = now + 1500000000ull;
	max_end = now + 10000000000ull;
	for (i = 0; now < max_end && (now < min_end || !c.to_id || !c.to_fallback);
	     i++, now = bid_now_ns()) {
		void *p = mmap(NULL, f.size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED)
			munmap(p, f.size);
		if (i % 8 == 7)
			bid_event_drain(&ev, rewrite_cb, &c);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, bid_event_disable(&ev));
	bid_event_drain(&ev, rewrite_cb, &c);
	TH_LOG("%d records with the id, %d fallbacks; %d changes to the id, %d to the fallback",
	       c.with_id, c.fallback, c.to_id, c.to_fallback);
	ASSERT_EQ(0, c.wrong) TH_LOG("wrong record: misc %#x union %s", c.bad.misc,
				     bid_hex(c.bad.raw, sizeof(c.bad.raw), raw));
	ASSERT_EQ(0, ev.lost);
	if (!c.with_id)
		bid_resident_pages(fd, f.size, &resident);
	ASSERT_LT(0, c.with_id) TH_LOG("no record carried the id (%zu page(s) of the copy cached)",
				       resident);
	ASSERT_LT(0, c.fallback) TH_LOG("no record fell back while n_descsz was 0xffffffff");
	ASSERT_LT(0, c.to_fallback)
		TH_LOG("no fallback after a record with the id: the id was kept, not parsed");
	ASSERT_LT(0, c.to_id) TH_LOG("no record had the id after one fell back");
	bid_event_close(&ev);
	close(fd);
	close(f.fd);
}

TEST_HARNESS_MAIN
