/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the build-ID mmap2 selftests: open a dummy event with the
 * mmap2/build_id bits, read its ring buffer, parse MMAP2 records, find
 * fixtures and their expected ids.  Errors are negative errno values; no
 * helper asserts (the tests do, with the harness).
 */
#ifndef BUILDID_UTIL_H
#define BUILDID_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/*
 * uapi headers before 5.12 lack these.  The values are the upstream ABI,
 * so compiling against an old header still tests the real ABI.
 */
#ifdef PERF_RECORD_MISC_MMAP_BUILD_ID
#define BID_UAPI_HAS_BUILD_ID 1
#else
#define BID_UAPI_HAS_BUILD_ID 0
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif
#ifndef PERF_RECORD_MISC_MMAP_DATA
#define PERF_RECORD_MISC_MMAP_DATA (1 << 13)
#endif
/* attr.build_id: bit 34 of the flag word that starts with attr.disabled. */
#define BID_ATTR_BUILD_ID_BIT	34

/*
 * Bit @n of the flag word as the header counts its bitfields (disabled is
 * 0), as a mask of the 64-bit word: the ABI is the C bitfields', which the
 * compiler allocates from the least significant bit on little-endian targets
 * and from the most significant on big-endian ones (s390x), where bit n is
 * 1 << (63 - n).
 */
static inline uint64_t bid_flag_bit(unsigned int n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return 1ULL << (63 - n);
#else
	return 1ULL << n;
#endif
}
#define BID_BUILD_ID_MAX	20

#define BID_SKIP_REASON "kernel lacks perf_event_attr.build_id"

/*
 * What the kernel under test must do, from BUILDID_EXPECT (the lab sets it
 * from the kernel's name):
 *  unset:   anything; a kernel that refuses attr.build_id skips every case
 *  feature: attr.build_id works (upstream 6.x); refusing it is a failure
 *  series:  as feature, and the limits of the 5.10 series hold too (the
 *           1024-note cap, no note segment past 4 GiB, hugetlbfs refused)
 */
enum bid_expect { BID_EXPECT_ANY, BID_EXPECT_FEATURE, BID_EXPECT_SERIES };
/* The parsed BUILDID_EXPECT, or -EINVAL for a value it does not know. */
int bid_expect(void);
/*
 * BUILDID_LAB=1: the tests run in the lab VM, which provides an ext4 disk
 * ($BUILDID_BLOCK_DIR), reserved huge pages and root; a case that would
 * skip for lack of them fails instead.
 */
bool bid_lab(void);
/*
 * BUILDID_COLD=1: every case starts with all fixtures evicted from the page
 * cache, so no case passes because an earlier one read its file.
 */
bool bid_cold(void);
/* sysconf(_SC_PAGESIZE): 4 KiB, 16 KiB or 64 KiB depending on the kernel. */
size_t bid_page_size(void);

struct bid_opts {
	bool build_id;
	bool mmap;		/* attr.mmap; perf_event_mmap() bails out without it */
	bool mmap2;
	bool mmap_data;
	bool inherit;
	int cpu;		/* with on_cpu: per-task event on this CPU only */
	bool on_cpu;		/* (inherited per-task events need a CPU to be mmapped) */
	bool cpu_wide;		/* pid -1: every task on @cpu (needs on_cpu) */
	uint64_t extra_flag_bits;	/* bid_flag_bit()s ORed into the flag word */
	unsigned int data_pages;	/* ring size, power of two; 0: 16 */
};

/* The defaults every test uses: mmap, mmap2 and build_id. */
#define BID_OPTS_DEFAULT { .build_id = true, .mmap = true, .mmap2 = true }

/* A perf event (by default on the current task, any CPU) and its ring buffer. */
struct bid_event {
	int fd;
	void *base;
	size_t map_len;
	size_t data_size;
	uint64_t lost;		/* records the kernel reported as lost */
};

/* The fields of one MMAP2 record, with its sample_id_all trailer. */
struct bid_mmap2 {
	uint16_t misc;
	uint16_t size;		/* header.size */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[BID_BUILD_ID_MAX];
		};
		uint8_t raw[24];
	};
	uint32_t prot, flags;
	char filename[4096];
	size_t filename_field;	/* bytes the name takes in the record, padding included */
	bool filename_padding_zero;
	uint32_t sid_pid, sid_tid;	/* sample_id_all: TID */
	uint64_t sid_time;		/* sample_id_all: TIME */
};

/* Size of everything before the filename; fixed by the ABI. */
#define BID_MMAP2_FIXED_SIZE (8 + 4 + 4 + 8 + 8 + 8 + 24 + 4 + 4)
#define BID_SAMPLE_ID_SIZE (4 + 4 + 8)

void bid_attr_init(struct perf_event_attr *attr, const struct bid_opts *o);
uint64_t bid_attr_flags(const struct perf_event_attr *attr);
void bid_attr_set_flags(struct perf_event_attr *attr, uint64_t bits);
/* perf_event_open() as @o says; fd or -errno. */
int bid_open(const struct bid_opts *o);
/* 0 if the kernel accepts attr.build_id, -EINVAL if it lacks it, else -errno. */
int bid_probe(void);

int bid_event_open(struct bid_event *ev, const struct bid_opts *o);
void bid_event_close(struct bid_event *ev);
int bid_event_enable(struct bid_event *ev);
int bid_event_disable(struct bid_event *ev);

/*
 * Calls @fn on every unread record, in order, with a contiguous copy (records
 * that wrap around the ring are reassembled), then frees the space.  Stops
 * early when @fn returns nonzero and returns that value.
 */
int bid_event_drain(struct bid_event *ev,
		    int (*fn)(const struct perf_event_header *h, void *arg), void *arg);

/* Parses an MMAP2 record written with sample_id_all and TID|TIME. */
int bid_parse_mmap2(const struct perf_event_header *h, struct bid_mmap2 *out);

/*
 * Drains @ev and returns how many MMAP2 records of @pid match @addr (or
 * every address if @addr is 0) and, if @path is set, name it; the first is
 * copied to @out.
 */
int bid_find_mmap2(struct bid_event *ev, pid_t pid, uint64_t addr, const char *path,
		   struct bid_mmap2 *out);

/* <dir of this program>/buildid_fixtures/<name> */
int bid_fixture_path(const char *name, char *buf, size_t len);
/* Reads <fixture>.id: the id the fixture carries.  Length or -errno. */
int bid_expected_id(const char *name, uint8_t *id, size_t max);
char *bid_hex(const uint8_t *p, size_t n, char *buf);

/*
 * Opens @path, starts an event, mmaps @len bytes at @off with @prot/@flags,
 * stops the event, and finds the MMAP2 record of the mapping.  The
 * mapping stays (for mprotect tests); *addr_out gets it.  Returns the
 * number of matching records or -errno.
 */
int bid_record_mapping(const struct bid_opts *o, const char *path, size_t len,
		       off_t off, int prot, int flags, void **addr_out,
		       struct bid_mmap2 *rec);

/* The same for a file already open (unlinked files, memfds). */
int bid_record_fd(const struct bid_opts *o, int fd, size_t len, off_t off,
		  int prot, int flags, void **addr_out, struct bid_mmap2 *rec);

/*
 * Reads the whole file, so that every page is in the page cache (the
 * kernel parses from the page cache only); *size gets its length.
 */
int bid_read_file(int fd, size_t *size);

uint64_t bid_now_ns(void);

/* How many pages of the first @size bytes of @fd are in the page cache (mincore). */
int bid_resident_pages(int fd, size_t size, size_t *resident);
/*
 * Drops the page cache pages of @fd (POSIX_FADV_DONTNEED, with an
 * fdatasync first if dirty pages stay) and checks with mincore that none
 * is left; -EBUSY if some stay, -ENOTBLK if the file is on a filesystem without a backing device
 * (tmpfs and ramfs pages cannot be evicted).
 */
int bid_evict_fd(int fd);
/* bid_evict_fd() on every fixture; the first file that failed goes to @bad. */
int bid_evict_fixtures(char *bad, size_t len);

#endif
