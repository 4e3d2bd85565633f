// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP2 records carrying a build ID: the record layout, byte by byte, and
 * the ids of every kind of ELF file that has one (toolchain-built and
 * crafted layouts).  Expected ids come from readelf (g_*) or from the
 * fixture generator, cross-checked by readelf at build time (c_*).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"
#include "buildid_fixture_lists.h"

static size_t round_page(size_t n)
{
	return (n + bid_page_size() - 1) & ~(bid_page_size() - 1);
}

/*
 * Before 5.15 the kernel also reported MAP_DENYWRITE and MAP_EXECUTABLE
 * (from VM_DENYWRITE/VM_MAYEXEC); both flags are gone since.  They are
 * not part of this feature, so they are masked out.
 */
static uint32_t map_flags(uint32_t flags)
{
	return flags & ~(uint32_t)(MAP_DENYWRITE | MAP_EXECUTABLE);
}

/* ---- one record of g_sha1, checked field by field ---- */

FIXTURE(layout) {
	struct bid_mmap2 r;
	uint8_t id[BID_BUILD_ID_MAX];
	size_t id_len;
	char real[PATH_MAX];
	uint64_t t0, t1;
	uint64_t addr;
	size_t len;
};

FIXTURE_SETUP(layout) {}
FIXTURE_TEARDOWN(layout) {}

static void record_layout(struct __test_metadata *_metadata,
			  FIXTURE_DATA(layout) *self, int flags)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct bid_event ev;
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd, n;

	fixture(_metadata, "g_sha1", path, sizeof(path));
	self->id_len = expected_id(_metadata, "g_sha1", self->id);
	ASSERT_TRUE(realpath(path, self->real) != NULL);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bid_read_file(fd, NULL));
	ASSERT_EQ(0, fstat(fd, &st));
	self->len = st.st_size;
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	self->t0 = bid_now_ns();
	ASSERT_EQ(0, bid_event_enable(&ev));
	p = mmap(NULL, self->len, PROT_READ | PROT_EXEC, flags, fd, 0);
	ASSERT_EQ(0, bid_event_disable(&ev));
	self->t1 = bid_now_ns();
	ASSERT_TRUE(p != MAP_FAILED);
	self->addr = (uintptr_t)p;
	n = bid_find_mmap2(&ev, getpid(), self->addr, NULL, &self->r);
	ASSERT_EQ(1, n) TH_LOG("MMAP2 records for the mapping: %d", n);
	ASSERT_EQ(0, ev.lost);
	bid_event_close(&ev);
	munmap(p, self->len);
	close(fd);
}

/* misc is exactly USER | MMAP_BUILD_ID: no MMAP_DATA for an exec mapping. */
TEST_F(layout, misc_bit_14)
{
	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	ASSERT_EQ(PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, self->r.misc);
}

/* build_id_size first, then three zero bytes (not the 20 bytes first). */
TEST_F(layout, size_byte_then_zeros)
{
	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	ASSERT_EQ(self->id_len, self->r.raw[0]);
	ASSERT_EQ(0, self->r.raw[1]);
	ASSERT_EQ(0, self->r.raw[2]);
	ASSERT_EQ(0, self->r.raw[3]);
}

/* Bytes 4..23 of the union: readelf's id, zero-padded to 20. */
TEST_F(layout, id_equals_readelf)
{
	uint8_t want[24] = { 0 };
	size_t i;

	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	want[0] = self->id_len;
	memcpy(want + 4, self->id, self->id_len);
	for (i = 0; i < sizeof(want); i++)
		ASSERT_EQ(want[i], self->r.raw[i]) TH_LOG("union byte %zu", i);
}

/* header.size = fixed part + name padded to 8 bytes + sample_id trailer. */
TEST_F(layout, header_size)
{
	size_t name;

	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	name = (strlen(self->real) + 1 + 7) & ~(size_t)7;
	ASSERT_EQ(name, self->r.filename_field);
	ASSERT_EQ(BID_MMAP2_FIXED_SIZE + name + BID_SAMPLE_ID_SIZE, self->r.size);
	ASSERT_TRUE(self->r.filename_padding_zero);
}

/* The sample_id_all trailer (TID, TIME) sits right after the padded name. */
TEST_F(layout, sample_id_trailer)
{
	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	ASSERT_EQ(getpid(), self->r.sid_pid);
	ASSERT_EQ(syscall(SYS_gettid), self->r.sid_tid);
	ASSERT_LE(self->t0, self->r.sid_time);
	ASSERT_GE(self->t1, self->r.sid_time);
	ASSERT_EQ(getpid(), self->r.pid);
	ASSERT_EQ(syscall(SYS_gettid), self->r.tid);
}

TEST_F(layout, filename_prot_flags)
{
	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_PRIVATE);
	ASSERT_STREQ(self->real, self->r.filename);
	ASSERT_EQ(PROT_READ | PROT_EXEC, self->r.prot);
	ASSERT_EQ(MAP_PRIVATE, map_flags(self->r.flags));
	ASSERT_EQ(self->addr, self->r.addr);
	ASSERT_EQ(round_page(self->len), self->r.len);
	ASSERT_EQ(0, self->r.pgoff);
}

TEST_F(layout, map_shared)
{
	REQUIRE_BUILD_ID();
	record_layout(_metadata, self, MAP_SHARED);
	ASSERT_EQ(MAP_SHARED, map_flags(self->r.flags));
	assert_build_id(_metadata, &self->r, self->id, self->id_len);
}

/* ---- every ELF kind and layout that must yield its id ---- */

FIXTURE(has_id) {};
FIXTURE_SETUP(has_id) {}
FIXTURE_TEARDOWN(has_id) {}

FIXTURE_VARIANT(has_id) {
	const char *file;
};

#define HAS_ID(name) FIXTURE_VARIANT_ADD(has_id, name) { .file = #name };
BID_FIXTURES_WITH_ID(HAS_ID)

TEST_F(has_id, exec_mapping)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	char path[PATH_MAX], real[PATH_MAX];
	uint8_t id[BID_BUILD_ID_MAX];
	struct bid_mmap2 r;
	size_t n, size;
	void *p = NULL;
	int fd, cnt;

	REQUIRE_BUILD_ID();
	if (fixture_unavailable(variant->file, path, sizeof(path)))
		SKIP(return, "%.900s", path);
	fixture(_metadata, variant->file, path, sizeof(path));
	n = expected_id(_metadata, variant->file, id);
	ASSERT_TRUE(realpath(path, real) != NULL);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	/* The kernel reads the page cache only: make every page resident. */
	ASSERT_EQ(0, bid_read_file(fd, &size));
	cnt = bid_record_fd(&o, fd, size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, &p, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records for %s: %d", real, cnt);
	ASSERT_STREQ(real, r.filename);
	assert_build_id(_metadata, &r, id, n);
	munmap(p, size);
	close(fd);
}

/*
 * Many records through a one-page ring: the reader reassembles records that
 * wrap around, and every one of them carries the id.
 */
struct wrap_ctx {
	const char *real;
	const uint8_t *id;
	size_t id_len;
	int good, bad;
};

static int wrap_cb(const struct perf_event_header *h, void *arg)
{
	struct wrap_ctx *c = arg;
	struct bid_mmap2 r;

	if (h->type != PERF_RECORD_MMAP2 || bid_parse_mmap2(h, &r) || strcmp(r.filename, c->real))
		return 0;
	if ((r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && r.build_id_size == c->id_len &&
	    !memcmp(r.build_id, c->id, c->id_len))
		c->good++;
	else
		c->bad++;
	return 0;
}

TEST(ring_wraparound)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	char path[PATH_MAX], real[PATH_MAX];
	uint8_t id[BID_BUILD_ID_MAX];
	struct wrap_ctx c = { .real = real, .id = id };
	size_t page = bid_page_size();
	struct bid_event ev;
	int fd, i;

	REQUIRE_BUILD_ID();
	fixture(_metadata, "g_md5", path, sizeof(path));
	c.id_len = expected_id(_metadata, "g_md5", id);
	ASSERT_TRUE(realpath(path, real) != NULL);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	/* The kernel reads the page cache only: make every page resident. */
	ASSERT_EQ(0, bid_read_file(fd, NULL));
	o.data_pages = 1;
	ASSERT_EQ(0, bid_event_open(&ev, &o));
	ASSERT_EQ(0, bid_event_enable(&ev));
	for (i = 1; i <= 100; i++) {
		void *p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		ASSERT_TRUE(p != MAP_FAILED);
		munmap(p, page);
		/* a few records per drain: less than the ring, so none is lost */
		if (i % 7 == 0)
			ASSERT_EQ(0, bid_event_drain(&ev, wrap_cb, &c));
	}
	ASSERT_EQ(0, bid_event_disable(&ev));
	ASSERT_EQ(0, bid_event_drain(&ev, wrap_cb, &c));
	ASSERT_EQ(0, ev.lost);
	ASSERT_EQ(0, c.bad);
	ASSERT_EQ(100, c.good);
	bid_event_close(&ev);
	close(fd);
}

TEST_HARNESS_MAIN
