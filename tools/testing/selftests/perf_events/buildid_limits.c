// SPDX-License-Identifier: GPL-2.0
/*
 * Where the 5.10 series deliberately stops: at most 1024 notes per file, no
 * note segment reaching past 4 GiB, no hugetlbfs files; page caches of
 * large pages (hugetlbfs, tmpfs with transparent huge pages); and a note
 * segment aligned to 8, which the kernel does not walk (nor does 6.12).
 *
 * The limits are the series' own: upstream walks every note and keeps the
 * low 32 bits of p_filesz.  Under BUILDID_EXPECT=series the limit must
 * hold; elsewhere a kernel without it skips, naming what it did.  A wrong
 * id fails everywhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)
#endif

#define HUGE_2M (2UL << 20)

/* The contents of @f, which fx_open() has read. */
static unsigned char *fx_data(struct __test_metadata *_metadata, const struct fx *f)
{
	unsigned char *data = malloc(f->size);

	ASSERT_TRUE(data != NULL);
	ASSERT_EQ((ssize_t)f->size, pread(f->fd, data, f->size, 0));
	return data;
}

/* The record of an exec mapping of @len bytes of @fd. */
static void record(struct __test_metadata *_metadata, int fd, size_t len, int flags,
		   struct bid_mmap2 *r)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	void *p = NULL;
	int cnt;

	cnt = bid_record_fd(&o, fd, len, 0, PROT_READ | PROT_EXEC, flags, &p, r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records for the mapping: %d", cnt);
	munmap(p, len);
}

/* The fixture's own id or the fallback, as a mapping of the fixture itself. */
static bool fixture_outcome(struct __test_metadata *_metadata, const char *name)
{
	struct bid_mmap2 r;
	struct fx f;
	bool got;

	fx_open(_metadata, name, &f);
	record(_metadata, f.fd, f.size, MAP_PRIVATE, &r);
	ASSERT_STREQ(f.real, r.filename);
	got = assert_id_or_fallback(_metadata, &r, f.id, f.id_len, &f.st, f.fd);
	close(f.fd);
	return got;
}

/* 1023 other notes, then the id: the 1024th note, inside every cap. */
TEST(notes_1023)
{
	REQUIRE_BUILD_ID();
	ASSERT_TRUE(fixture_outcome(_metadata, "l_notes_1023"))
		TH_LOG("the id behind 1023 notes must be found: the cap is 1024 notes");
}

/* 1025 other notes first: the series stops walking after 1024. */
TEST(notes_1025)
{
	bool got;

	REQUIRE_BUILD_ID();
	got = fixture_outcome(_metadata, "l_notes_1025");
	SERIES_LIMIT(got, "the id behind 1025 notes (the series walks at most 1024)");
}

/* A note segment of 4 GiB + 36 bytes: the series looks in the first 4 GiB only. */
TEST(p_filesz_4g)
{
	bool got;

	REQUIRE_BUILD_ID();
	got = fixture_outcome(_metadata, "l_filesz_4g");
	SERIES_LIMIT(got, "a note segment with p_filesz >= 4 GiB");
}

/*
 * An 8-byte aligned note segment (p_align 8): the id follows a note whose
 * 20-byte descriptor is padded to 24.  Stepping by 4, as the series and
 * 6.12 both do, misses it; the walk must end in the fallback, never in
 * another id.  A known limit: linkers put build-id notes in segments
 * aligned to 4.
 */
TEST(note_align8)
{
	REQUIRE_BUILD_ID();
	ASSERT_FALSE(fixture_outcome(_metadata, "l_align8"))
		TH_LOG("the id in an 8-aligned note segment: documented as not found, as on 6.12");
}

/*
 * Write "1" to a root-only /proc/sys/vm knob; false when it cannot be
 * written at all.  stat_refresh may answer EINVAL after it has done its work
 * (it reports counters that went negative): that still counts as done.
 */
static bool vm_sysctl_poke(const char *name)
{
	char path[64];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "1", 1) == 1 || errno == EINVAL;
	close(fd);
	return ok;
}

static long meminfo_kb(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * An ELF file in a hugetlbfs memfd of 2 MiB pages, with a decoy build-ID
 * note 2 MiB after the real one's page offset.  5.10 indexes the hugetlbfs
 * page cache in huge pages: a reader that asks it for 4 KiB page 1 gets
 * huge page 1 and reports the decoy.  The series refuses hugetlbfs files
 * (fallback); upstream, whose page cache is indexed in base pages there
 * too, may report the real id.  The decoy never.
 */
/* The number in a sysfs file, 0 when it cannot be read. */
static unsigned long read_ulong(const char *path)
{
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Whether the machine can have huge pages at all, whatever the kernel's
 * config: s390x needs the EDAT-1 facility (the "edat" hardware capability),
 * which QEMU's TCG does not emulate; without it the kernel disables
 * hugetlbfs and transparent huge pages.
 */
#define NO_HUGE_PAGES \
	"no huge pages on this machine: s390x without EDAT-1 (QEMU's TCG has none)"
static bool machine_has_huge_pages(void)
{
#ifdef __s390x__
	return getauxval(AT_HWCAP) & HWCAP_S390_HPAGE;
#else
	return true;
#endif
}

TEST(hugetlbfs_memfd)
{
	uint8_t decoy[BID_BUILD_ID_MAX];
	struct bid_mmap2 r;
	size_t len = 2 * HUGE_2M;
	struct stat st;
	struct fx f;
	char hex[2 * BID_BUILD_ID_MAX + 1];
	unsigned char *data;
	void *p;
	bool got;
	int fd;

	REQUIRE_BUILD_ID();
	fx_open(_metadata, "l_hugetlb", &f);
	data = fx_data(_metadata, &f);
	ASSERT_GE(len, f.size);
	/* the decoy note's descriptor: after "GNU\0", 2 MiB + 0x100 in */
	ASSERT_LE(HUGE_2M + 0x100 + 16 + BID_BUILD_ID_MAX, f.size);
	memcpy(decoy, data + HUGE_2M + 0x100 + 16, BID_BUILD_ID_MAX);
	fd = memfd_create("buildid-hugetlb", MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB);
	if (fd < 0 && !machine_has_huge_pages())
		SKIP(return, "%s", NO_HUGE_PAGES);
	/*
	 * hugetlbfs there, but no 2 MiB size: the architecture's huge pages are
	 * others (s390x: 1 MiB and 2 GiB), which the lab cannot change.
	 */
	if (fd < 0 && !access("/sys/kernel/mm/hugepages", F_OK) &&
	    access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK))
		SKIP(return, "no 2 MiB huge pages on this architecture (the decoy lies 2 MiB in)");
	if (fd < 0)
		ENV_SKIP("memfd_create(MFD_HUGETLB | MFD_HUGE_2MB): %s (no hugetlbfs or no 2 MiB pages)",
			 strerror(errno));
	ASSERT_EQ(0, ftruncate(fd, len)) TH_LOG("ftruncate: %s", strerror(errno));
	/* hugetlbfs has no write(): fill it through a shared mapping. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		ENV_SKIP("no free 2 MiB huge pages (HugePages_Free %ld; boot with hugepagesz=2M hugepages=4): %s",
			 meminfo_kb("HugePages_Free"), strerror(errno));
	memcpy(p, data, f.size);
	munmap(p, len);
	ASSERT_EQ(0, fstat(fd, &st));
	record(_metadata, fd, len, MAP_SHARED, &r);
	if (r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		ASSERT_NE(0, memcmp(r.build_id, decoy, sizeof(decoy)))
			TH_LOG("reported the decoy %s from 2 MiB further on: the reader took a huge page for a 4 KiB one",
			       bid_hex(decoy, sizeof(decoy), hex));
	got = assert_id_or_fallback(_metadata, &r, f.id, f.id_len, &st, fd);
	close(fd);
	close(f.fd);
	free(data);
	SERIES_LIMIT(got, "a file on hugetlbfs (the series refuses them)");
}

/*
 * The same ELF file (2 MiB, its id 1 MiB in) on a tmpfs mounted huge=always,
 * so that one transparent huge page caches it.  Every kernel must find the
 * id, and not the decoy sitting at the same offset in the first 4 KiB page,
 * where a reader that used the huge page's head page would look.  The
 * mount lives in a mount namespace of this test's own.
 */
TEST(tmpfs_huge)
{
	char dir[] = "/tmp/buildid-thp.XXXXXX", path[PATH_MAX];
	long before, after;
	bool refreshed;
	struct bid_mmap2 r;
	struct stat st;
	unsigned char *data;
	unsigned long pmd;
	struct fx f;
	int fd;

	REQUIRE_BUILD_ID();
	/*
	 * Not a lab failure either: a kernel built without THP has no such
	 * page cache (5.10's PREEMPT_RT patch makes TRANSPARENT_HUGEPAGE depend
	 * on !PREEMPT_RT).
	 */
	if (!machine_has_huge_pages())
		SKIP(return, "%s", NO_HUGE_PAGES);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "the kernel has no transparent huge pages (CONFIG_TRANSPARENT_HUGEPAGE off)");
	/* arm64 with 64 KiB pages: a PMD maps 512 MiB, no 2 MiB file fills one. */
	pmd = read_ulong("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
	if (pmd > HUGE_2M)
		SKIP(return, "transparent huge pages are %lu KiB here: the 2 MiB l_thp cannot be one",
		     pmd >> 10);
	fx_open(_metadata, "l_thp", &f);
	data = fx_data(_metadata, &f);
	if (unshare(CLONE_NEWNS))
		ENV_SKIP("unshare(CLONE_NEWNS): %s (mounting tmpfs needs root)", strerror(errno));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	if (mount("tmpfs", dir, "tmpfs", 0, "huge=always,size=8m")) {
		rmdir(dir);
		ENV_SKIP("tmpfs huge=always: %s (no transparent huge pages in the page cache)",
			 strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/elf", dir);
	/*
	 * The lab must not fail for want of a free 2 MiB block: compact first
	 * (only there; on a shared host that is not the test's business).
	 */
	if (bid_lab())
		vm_sysctl_poke("compact_memory");
	/*
	 * ShmemHugePages is a vmstat counter: each CPU batches its changes
	 * and folds them in when they pass a threshold or once a second.
	 * 5.10 counts it in huge pages (one per THP; later kernels count 512
	 * base pages and pass the threshold at once), so there a new THP stays
	 * in the batch and meminfo shows nothing: fold every CPU's batch
	 * (stat_refresh) before each reading.
	 */
	refreshed = vm_sysctl_poke("stat_refresh");
	before = meminfo_kb("ShmemHugePages");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0755);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)f.size, pwrite(fd, data, f.size, 0));
	refreshed = vm_sysctl_poke("stat_refresh") && refreshed;
	after = meminfo_kb("ShmemHugePages");
	if (after - before < (long)(HUGE_2M >> 10)) {
		close(fd);
		umount(dir);
		rmdir(dir);
		ENV_SKIP("no transparent huge page under the tmpfs file (ShmemHugePages %ld -> %ld kB%s)",
			 before, after, refreshed ? "" : ", may be stale: no stat_refresh");
	}
	ASSERT_EQ(0, fstat(fd, &st));
	record(_metadata, fd, f.size, MAP_PRIVATE, &r);
	ASSERT_STREQ(path, r.filename);
	assert_build_id(_metadata, &r, f.id, f.id_len);
	close(fd);
	umount(dir);
	rmdir(dir);
	close(f.fd);
	free(data);
}

TEST_HARNESS_MAIN
