// SPDX-License-Identifier: GPL-2.0
/*
 * perf_event_attr.build_id: which attributes the kernel accepts, and the
 * uapi header's ABI (bit 34, PERF_RECORD_MISC_MMAP_BUILD_ID == 1 << 14).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"

/*
 * The bit is accepted and does what it says: the MMAP2 record of a cached
 * ELF file carries its id (and the same mapping seen without the bit does
 * not).  A kernel that accepts the bit and ignores it fails here, as does
 * one that refuses it when BUILDID_EXPECT says it must not.
 */
TEST(build_id_accepted)
{
	struct bid_opts plain = { .mmap = true, .mmap2 = true };
	struct bid_opts with = BID_OPTS_DEFAULT;
	char path[PATH_MAX];
	uint8_t id[BID_BUILD_ID_MAX];
	struct bid_mmap2 r;
	struct stat st;
	size_t n, size;
	void *p;
	int fd, cnt;

	REQUIRE_BUILD_ID();
	fixture(_metadata, "g_sha1", path, sizeof(path));
	n = expected_id(_metadata, "g_sha1", id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bid_read_file(fd, &size));
	ASSERT_EQ(0, fstat(fd, &st));
	cnt = bid_record_fd(&with, fd, size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, &p, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records with build_id: %d", cnt);
	munmap(p, size);
	assert_build_id(_metadata, &r, id, n);
	/* The same attr without the bit: the bit is what makes the difference. */
	cnt = bid_record_fd(&plain, fd, size, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, &p, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records without build_id: %d", cnt);
	munmap(p, size);
	assert_fallback_fd(_metadata, &r, &st, fd);
	close(fd);
}

struct mmap_rec_ctx {
	uint64_t addr;
	int mmap, mmap2;
	uint16_t misc;
};

static int count_mmap(const struct perf_event_header *h, void *arg)
{
	struct mmap_rec_ctx *c = arg;
	const uint64_t *addr = (const uint64_t *)((const char *)(h + 1) + 8);

	if (h->type != PERF_RECORD_MMAP && h->type != PERF_RECORD_MMAP2)
		return 0;
	if (*addr != c->addr)
		return 0;
	if (h->type == PERF_RECORD_MMAP) {
		c->mmap++;
		c->misc = h->misc;
	} else {
		c->mmap2++;
	}
	return 0;
}

/*
 * Upstream accepts build_id without mmap2; it has no effect then: plain
 * MMAP records, without bit 14.
 */
TEST(build_id_without_mmap2)
{
	struct bid_opts o = { .build_id = true, .mmap = true };
	struct mmap_rec_ctx c = { 0 };
	struct bid_event ev;
	size_t page = bid_page_size();
	char path[PATH_MAX];
	void *p;
	int fd, err;

	REQUIRE_BUILD_ID();
	fixture(_metadata, "g_sha1", path, sizeof(path));
	err = bid_event_open(&ev, &o);
	ASSERT_EQ(0, err) TH_LOG("build_id without mmap2 rejected: %s", strerror(-err));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bid_event_enable(&ev));
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(0, bid_event_disable(&ev));
	c.addr = (uintptr_t)p;
	ASSERT_EQ(0, bid_event_drain(&ev, count_mmap, &c));
	ASSERT_EQ(1, c.mmap);
	ASSERT_EQ(0, c.mmap2);
	ASSERT_EQ(0, c.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
	munmap(p, page);
	close(fd);
	bid_event_close(&ev);
}

/* Bits above build_id stay reserved (or need other bits): still EINVAL. */
FIXTURE(unknown_bit) {};
FIXTURE_SETUP(unknown_bit) {}
FIXTURE_TEARDOWN(unknown_bit) {}

FIXTURE_VARIANT(unknown_bit) {
	int bit;
};

/* Right after build_id: reserved on 5.10 + series; inherit_thread (needs inherit) upstream. */
FIXTURE_VARIANT_ADD(unknown_bit, bit35) { .bit = 35 };
FIXTURE_VARIANT_ADD(unknown_bit, bit62) { .bit = 62 };
FIXTURE_VARIANT_ADD(unknown_bit, bit63) { .bit = 63 };

TEST_F(unknown_bit, einval)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	int fd;

	REQUIRE_BUILD_ID();
	o.extra_flag_bits = bid_flag_bit(variant->bit);
	fd = bid_open(&o);
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(-EINVAL, fd) TH_LOG("bit %d accepted", variant->bit);
}

/* The exported header has the upstream ABI (when it knows build_id at all). */
TEST(uapi_header_abi)
{
	REQUIRE_BUILD_ID();
#if BID_UAPI_HAS_BUILD_ID
	{
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.build_id = 1;
		ASSERT_EQ(bid_flag_bit(BID_ATTR_BUILD_ID_BIT), bid_attr_flags(&attr));
		ASSERT_EQ(1 << 14, PERF_RECORD_MISC_MMAP_BUILD_ID);
		attr.build_id = 0;
		attr.text_poke = 1;
		ASSERT_EQ(bid_flag_bit(BID_ATTR_BUILD_ID_BIT - 1), bid_attr_flags(&attr));
	}
#else
	SKIP(return, "uapi header predates perf_event_attr.build_id");
#endif
}

TEST_HARNESS_MAIN
