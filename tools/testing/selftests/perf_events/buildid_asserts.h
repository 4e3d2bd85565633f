/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Assertions shared by the build-ID mmap2 tests.  Include after
 * kselftest_harness.h; every helper takes the harness' _metadata.
 *
 * Pointers are checked with ASSERT_TRUE(p != NULL), never ASSERT_NE(NULL, p):
 * 5.10's harness casts both sides to a 64-bit integer, which warns on the
 * 32-bit architectures the tests are built for.
 */
#ifndef BUILDID_ASSERTS_H
#define BUILDID_ASSERTS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <sys/sysmacros.h>

#include "buildid_util.h"

/* memfd_create() flags, for libc headers that predate them */
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif

/*
 * Every test starts with this: the feature probe.  5.10 and other kernels
 * before 5.12 reject the attribute bit with EINVAL: a skip, unless
 * BUILDID_EXPECT says that this kernel must have the feature (a series that
 * lost a patch must not look like a kernel without the feature).  Under
 * BUILDID_COLD the case then starts with every fixture evicted.
 */
#define REQUIRE_BUILD_ID() do {						\
	int __expect = bid_expect(), __err;				\
									\
	ASSERT_LE(0, __expect)						\
		TH_LOG("BUILDID_EXPECT=%s: want feature, series or nothing", \
		       getenv("BUILDID_EXPECT"));			\
	__err = bid_probe();						\
	if (__err == -EINVAL && __expect == BID_EXPECT_ANY)		\
		SKIP(return, BID_SKIP_REASON);				\
	if ((__err == -EACCES || __err == -EPERM) && !bid_lab())	\
		SKIP(return, "perf_event_open needs CAP_PERFMON or perf_event_paranoid <= 1"); \
	ASSERT_EQ(0, __err)						\
		TH_LOG("perf_event_open with attr.build_id: %s%s", strerror(-__err), \
		       __err == -EINVAL ? "; BUILDID_EXPECT says this kernel has the feature" : ""); \
	if (bid_cold()) {						\
		char __bad[PATH_MAX + 256];				\
									\
		__err = bid_evict_fixtures(__bad, sizeof(__bad));	\
		ASSERT_EQ(0, __err) TH_LOG("BUILDID_COLD: evicting %s: %s", __bad, \
					   strerror(-__err));		\
	}								\
} while (0)

/*
 * The machine lacks something the case needs (no block device, no huge
 * pages): a skip on any machine, a failure in the lab VM, which provides it.
 */
#define ENV_SKIP(fmt, ...) do {						\
	ASSERT_FALSE(bid_lab()) TH_LOG("the lab VM provides this: " fmt, ##__VA_ARGS__); \
	SKIP(return, fmt, ##__VA_ARGS__);				\
} while (0)

/*
 * A fixture the build could not make for this target (mkfixtures.sh wrote
 * NAME.skip with the reason): the case skips with that reason.
 */
static inline bool fixture_unavailable(const char *name, char *reason, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	if (bid_fixture_path(name, path, sizeof(path) - 5))
		return false;
	strcat(path, ".skip");
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(reason, len, f))
		snprintf(reason, len, "%s could not be built for this target", name);
	reason[strcspn(reason, "\n")] = '\0';
	fclose(f);
	return true;
}

/* The record carries exactly @id, laid out as the ABI says. */
static inline void assert_build_id(struct __test_metadata *_metadata,
				   const struct bid_mmap2 *r, const uint8_t *id, size_t n)
{
	char want[2 * BID_BUILD_ID_MAX + 1], got[2 * BID_BUILD_ID_MAX + 1];
	size_t i;

	bid_hex(id, n, want);
	bid_hex(r->build_id, BID_BUILD_ID_MAX, got);
	ASSERT_EQ(PERF_RECORD_MISC_MMAP_BUILD_ID, r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		TH_LOG("%s: no build ID (maj %u min %u ino %llu), want %s",
		       r->filename, r->maj, r->min, (unsigned long long)r->ino, want);
	ASSERT_EQ(n, r->build_id_size)
		TH_LOG("%s: want %s, got size %u bytes %s", r->filename, want,
		       r->build_id_size, got);
	ASSERT_EQ(0, r->reserved_1);
	ASSERT_EQ(0, r->reserved_2);
	for (i = 0; i < n; i++)
		ASSERT_EQ(id[i], r->build_id[i])
			TH_LOG("%s: byte %zu: want %s, got %s", r->filename, i, want, got);
	for (i = n; i < BID_BUILD_ID_MAX; i++)
		ASSERT_EQ(0, r->build_id[i])
			TH_LOG("%s: padding byte %zu not zero: %s", r->filename, i, got);
}

/*
 * The record has maj/min/ino of @st and no bit 14; and ino_generation of the
 * file @fd when its filesystem tells (ext4 does, tmpfs does not).
 */
static inline void assert_fallback_fd(struct __test_metadata *_metadata,
				      const struct bid_mmap2 *r, const struct stat *st, int fd)
{
	char raw[2 * sizeof(r->raw) + 1];
	int gen;

	bid_hex(r->raw, sizeof(r->raw), raw);
	ASSERT_EQ(0, r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		TH_LOG("%s: reported a build ID where the kernel must fall back: %s",
		       r->filename, raw);
	ASSERT_EQ(major(st->st_dev), r->maj) TH_LOG("%s: payload %s", r->filename, raw);
	ASSERT_EQ(minor(st->st_dev), r->min) TH_LOG("%s: payload %s", r->filename, raw);
	ASSERT_EQ(st->st_ino, r->ino) TH_LOG("%s: payload %s", r->filename, raw);
	if (fd >= 0 && !ioctl(fd, FS_IOC_GETVERSION, &gen))
		ASSERT_EQ((uint32_t)gen, r->ino_generation)
			TH_LOG("%s: payload %s", r->filename, raw);
}

static inline void assert_fallback(struct __test_metadata *_metadata,
				   const struct bid_mmap2 *r, const struct stat *st)
{
	assert_fallback_fd(_metadata, r, st, -1);
}

/* Anonymous memory, heap, stack: no file, so zeros and no bit 14. */
static inline void assert_no_file(struct __test_metadata *_metadata,
				  const struct bid_mmap2 *r)
{
	ASSERT_EQ(0, r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
	ASSERT_EQ(0, r->maj);
	ASSERT_EQ(0, r->min);
	ASSERT_EQ(0, r->ino);
	ASSERT_EQ(0, r->ino_generation);
}

/*
 * Either the file's own id or the fallback: which one depends on the
 * kernel's limits, a wrong id never.  Returns true for the id.
 */
static inline bool assert_id_or_fallback(struct __test_metadata *_metadata,
					 const struct bid_mmap2 *r, const uint8_t *id,
					 size_t n, const struct stat *st, int fd)
{
	if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		assert_build_id(_metadata, r, id, n);
		return true;
	}
	assert_fallback_fd(_metadata, r, st, fd);
	return false;
}

/*
 * A limit of the series that upstream does not have.  The kernel fell back
 * (the limit held): pass.  It reported the file's id: a failure where
 * BUILDID_EXPECT=series promises the limit, else a skip that says this
 * kernel has no such limit (6.12 for instance).
 */
#define SERIES_LIMIT(got_id, fmt, ...) do {				\
	if (got_id) {							\
		ASSERT_NE(BID_EXPECT_SERIES, bid_expect())		\
			TH_LOG("the series must fall back here: " fmt, ##__VA_ARGS__); \
		SKIP(return, "no such limit on this kernel (it reported the id): " fmt, \
		     ##__VA_ARGS__);					\
	}								\
} while (0)

/* Fixture path and expected id, asserting both exist. */
static inline void fixture(struct __test_metadata *_metadata, const char *name,
			   char *path, size_t len)
{
	int err = bid_fixture_path(name, path, len);

	ASSERT_EQ(0, err) TH_LOG("fixture path for %s: %s", name, strerror(-err));
	ASSERT_EQ(0, access(path, R_OK)) TH_LOG("%s: %s", path, strerror(errno));
}

static inline size_t expected_id(struct __test_metadata *_metadata, const char *name,
				 uint8_t *id)
{
	int n = bid_expected_id(name, id, BID_BUILD_ID_MAX);

	ASSERT_LT(0, n) TH_LOG("%s.id: %s", name, strerror(-n));
	return n;
}

/* Opens fixture @name, reads it into the page cache, loads its expected id. */
struct fx {
	char path[PATH_MAX];
	char real[PATH_MAX];
	uint8_t id[BID_BUILD_ID_MAX];
	size_t id_len;
	size_t size;
	struct stat st;
	int fd;
};

static inline void fx_open(struct __test_metadata *_metadata, const char *name, struct fx *f)
{
	fixture(_metadata, name, f->path, sizeof(f->path));
	f->id_len = expected_id(_metadata, name, f->id);
	ASSERT_TRUE(realpath(f->path, f->real) != NULL);
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, f->fd);
	ASSERT_EQ(0, bid_read_file(f->fd, &f->size));
	ASSERT_EQ(0, fstat(f->fd, &f->st));
}

#endif
