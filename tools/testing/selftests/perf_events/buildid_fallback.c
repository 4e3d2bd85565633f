// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings without a usable build ID: the record must carry maj/min/ino
 * (equal to stat() of the file) and no bit 14.  Falling back is fine, a
 * wrong id is not: many of these files hold a well-formed GNU build-ID note
 * that a sloppy parser would report.  Every file is read first, so the
 * fallback cannot come from a page-cache miss.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"
#include "buildid_fixture_lists.h"

FIXTURE(fallback) {};
FIXTURE_SETUP(fallback) {}
FIXTURE_TEARDOWN(fallback) {}

FIXTURE_VARIANT(fallback) {
	const char *file;
};

#define FALLBACK(name) FIXTURE_VARIANT_ADD(fallback, name) { .file = #name };
BID_FIXTURES_FALLBACK(FALLBACK)

TEST_F(fallback, exec_mapping)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	char path[PATH_MAX], real[PATH_MAX];
	struct bid_mmap2 r;
	struct stat st;
	size_t size;
	void *p = NULL;
	int fd, cnt;

	REQUIRE_BUILD_ID();
	fixture(_metadata, variant->file, path, sizeof(path));
	ASSERT_TRUE(realpath(path, real) != NULL);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bid_read_file(fd, &size));
	ASSERT_EQ(0, fstat(fd, &st));
	/* An empty file can be mapped too (touching it would fault). */
	if (size == 0)
		size = bid_page_size();
	cnt = bid_record_fd(&o, fd, size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, &p, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records for %s: %d", real, cnt);
	ASSERT_STREQ(real, r.filename);
	assert_fallback_fd(_metadata, &r, &st, fd);
	munmap(p, size);
	close(fd);
}

/* No file at all: "//anon", zeros, no bit 14. */
TEST(anon_exec)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_event ev;
	struct bid_mmap2 r;
	void *p;

	REQUIRE_BUILD_ID();
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	p = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(1, bid_find_mmap2(&ev, getpid(), (uintptr_t)p, NULL, &r));
	ASSERT_STREQ("//anon", r.filename);
	assert_no_file(_metadata, &r);
	munmap(p, 8192);
	bid_event_close(&ev);
}

/*
 * Growing the heap with brk(): a data record for the new heap memory.  Its
 * name is "[heap]" or "//anon" depending on the kernel and on whether the
 * new range merged into the old heap VMA (in a forked child it does not),
 * so the record is found by address.
 */
struct brk_ctx {
	uint64_t addr;
	struct bid_mmap2 r;
	int found;
};

static int brk_cb(const struct perf_event_header *h, void *arg)
{
	struct brk_ctx *c = arg;
	struct bid_mmap2 r;

	if (h->type != PERF_RECORD_MMAP2 || bid_parse_mmap2(h, &r) || (pid_t)r.pid != getpid())
		return 0;
	if (r.addr <= c->addr && c->addr < r.addr + r.len && !c->found++)
		c->r = r;
	return 0;
}

TEST(brk_heap)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct brk_ctx c = { 0 };
	struct bid_event ev;
	void *old;

	REQUIRE_BUILD_ID();
	o.mmap_data = true;
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	old = sbrk(0);
	ASSERT_TRUE(old != (void *)-1);
	ASSERT_EQ(0, bid_event_enable(&ev));
	ASSERT_TRUE(sbrk(64 * 1024) != (void *)-1);
	ASSERT_EQ(0, bid_event_disable(&ev));
	c.addr = (uintptr_t)old;
	ASSERT_EQ(0, bid_event_drain(&ev, brk_cb, &c));
	ASSERT_EQ(1, c.found) TH_LOG("MMAP2 records covering the old break %p: %d", old, c.found);
	ASSERT_EQ(PERF_RECORD_MISC_MMAP_DATA, c.r.misc & PERF_RECORD_MISC_MMAP_DATA);
	ASSERT_TRUE(!strcmp(c.r.filename, "[heap]") || !strcmp(c.r.filename, "//anon"))
		TH_LOG("name %s", c.r.filename);
	assert_no_file(_metadata, &c.r);
	bid_event_close(&ev);
	if (brk(old))
		TH_LOG("brk back to %p: %s", old, strerror(errno));
}

/* Making the stack executable: an exec record for "[stack]". */
TEST(stack_exec)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	unsigned long start = 0, end = 0;
	struct bid_event ev;
	struct bid_mmap2 r;
	char line[512];
	FILE *maps;
	int cnt, err;

	REQUIRE_BUILD_ID();
	maps = fopen("/proc/self/maps", "r");
	ASSERT_TRUE(maps != NULL);
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(maps);
	ASSERT_NE(0, end) TH_LOG("no [stack] in /proc/self/maps");
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	err = mprotect((void *)start, end - start, PROT_READ | PROT_WRITE | PROT_EXEC);
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_EQ(0, err) TH_LOG("mprotect of the stack: %s", strerror(errno));
	mprotect((void *)start, end - start, PROT_READ | PROT_WRITE);
	cnt = bid_find_mmap2(&ev, getpid(), start, NULL, &r);
	ASSERT_EQ(1, cnt);
	ASSERT_STREQ("[stack]", r.filename);
	assert_no_file(_metadata, &r);
	bid_event_close(&ev);
}

TEST_HARNESS_MAIN
