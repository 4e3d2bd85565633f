// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF stack map's build IDs against MMAP2's, for every fixture.
 *
 * A stack map created with BPF_F_STACK_BUILD_ID names each user frame by
 * the build ID of the file behind it (BPF_STACK_BUILD_ID_VALID), or by its
 * address when the file has none (BPF_STACK_BUILD_ID_IP).  The kernel must
 * give the same answer there as in the MMAP2 record of the same mapping:
 * the same id, or no id in both.  On the 5.10 series both come from one
 * parser (patch 0003 replaced the stack map's own); on 6.12 both come from
 * lib/buildid.c.  A kernel that parses the file twice in two ways fails
 * here on the fixtures where the two parsers disagree.
 *
 * The program is a few raw instructions loaded with bpf(2), so the guest
 * needs neither clang nor libbpf: bpf_get_stackid(ctx, map, user stack) on
 * a page-fault software event of this thread with a sample period of 1.
 * A page fault samples in task context with interrupts on, where the stack
 * map may take mmap_lock and parse: a timer sample runs with interrupts
 * off, where PREEMPT_RT always falls back to addresses.
 *
 * The fault comes from a store to a fresh anonymous page while the frame
 * pointer register points to three fake frames whose return addresses lie
 * inside the fixture's mapping.  The user callchain walks frame records
 * (rbp, ebp, x29, and r11 on ARM) and never reads the code at a return
 * address, so the fixture need not be executable code, nor even mapped
 * from a file with bytes at that offset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "kselftest_harness.h"
#include "buildid_asserts.h"
#include "buildid_fixture_lists.h"

/*
 * The frame records the user callchain walks.  The frame pointer holds the
 * link of the first: x86's (both widths) and arm64's records start at their
 * link, ARM's APCS frame tail ends at it.  A 0 link ends the walk (ARM and
 * arm64 stop at a link not above the record, x86 when reading it faults).
 */
#ifdef __arm__
struct fake_frame {
	uintptr_t next;		/* the caller's link, 0 ends the walk */
	uintptr_t sp;
	uintptr_t ret;		/* return address, stored in the callchain */
};
#define FRAME_LINK(f)	((uintptr_t)((f) + 1))
#else
struct fake_frame {
	uintptr_t next;		/* the caller's link, 0 ends the walk */
	uintptr_t ret;		/* return address, stored in the callchain */
};
#define FRAME_LINK(f)	((uintptr_t)(f))
#endif

#define NR_FAKE		3
/* Inside the first page of every mapping, and no offset a real stack would hold. */
#define FAKE_OFF	0x123
/* Stack depth the map keeps: the faulting address, the fake frames, room to spare. */
#define MAX_DEPTH	16
#define MAP_ENTRIES	64

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
#define HAVE_FAKE_FRAMES 1
#else
#define HAVE_FAKE_FRAMES 0
#endif

/*
 * Store to @page with the frame pointer register set to @link: the page
 * fault it takes samples a user stack of [this store, frames[0].ret, ...].
 * The frame pointer is saved in a scratch register and restored in the same
 * asm, and the operands are pinned to registers that are not the frame
 * pointer, which the compiler could otherwise pick when it omits frames.
 */
static void fault_with_frames(uintptr_t link, char *page)
{
#if defined(__x86_64__)
	asm volatile("mov %%rbp, %%r11\n\t"
		     "mov %0, %%rbp\n\t"
		     "movb $1, (%1)\n\t"
		     "mov %%r11, %%rbp\n\t"
		     : : "S" (link), "D" (page) : "r11", "memory");
#elif defined(__i386__)
	asm volatile("mov %%ebp, %%ecx\n\t"
		     "mov %0, %%ebp\n\t"
		     "movb $1, (%1)\n\t"
		     "mov %%ecx, %%ebp\n\t"
		     : : "S" (link), "D" (page) : "ecx", "memory");
#elif defined(__aarch64__)
	register uintptr_t fp asm("x10") = link;
	register char *p asm("x11") = page;

	asm volatile("mov x9, x29\n\t"
		     "mov x29, %0\n\t"
		     "strb wzr, [%1]\n\t"
		     "mov x29, x9\n\t"
		     : : "r" (fp), "r" (p) : "x9", "memory");
#elif defined(__arm__)
	/* r11, the frame pointer the kernel's walk reads in ARM and Thumb code alike */
	register uintptr_t fp asm("r4") = link;
	register char *p asm("r5") = page;

	asm volatile("mov r6, r11\n\t"
		     "mov r11, %0\n\t"
		     "strb %0, [%1]\n\t"
		     "mov r11, r6\n\t"
		     : : "r" (fp), "r" (p) : "r6", "memory");
#else
	(void)link;
	*page = 1;
#endif
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int bpf_map(uint32_t type, uint32_t key, uint32_t value, uint32_t entries, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = entries;
	a.map_flags = flags;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

static int bpf_elem(int cmd, int fd, const void *key, void *value_or_next)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uintptr_t)value_or_next;
	else
		a.value = (uintptr_t)value_or_next;
	return sys_bpf(cmd, &a);
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
						.src_reg = (s), .off = (o), .imm = (i) })
/* a 64-bit load takes two instructions: the map's fd, then the upper half (0) */
#define LD_MAP_FD(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd)
#define LD_IMM64_HI	INSN(0, 0, 0, 0, 0)
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * r0 = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
 * result[0] = r0;	(what the last call returned, for the failure message)
 * return 0;		(no sample in a ring buffer: there is none)
 * REUSE_STACKID: a stack whose hash bucket an earlier fault of this thread
 * took replaces it instead of being dropped with -EEXIST.
 */
static int load_prog(int stacks, int result, char *log, size_t log_len)
{
	struct bpf_insn insns[] = {
		LD_MAP_FD(BPF_REG_2, stacks),
		LD_IMM64_HI,
		MOV_IMM(BPF_REG_3, BPF_F_USER_STACK | BPF_F_REUSE_STACKID),
		CALL(BPF_FUNC_get_stackid),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0),
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -12, 0),
		LD_MAP_FD(BPF_REG_1, result),
		LD_IMM64_HI,
		MOV_REG(BPF_REG_2, BPF_REG_10),
		ADD_IMM(BPF_REG_2, -12),
		MOV_REG(BPF_REG_3, BPF_REG_10),
		ADD_IMM(BPF_REG_3, -8),
		MOV_IMM(BPF_REG_4, BPF_ANY),
		CALL(BPF_FUNC_map_update_elem),
		MOV_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = ARRAY_SIZE(insns);
	/* bpf_get_stackid() is GPL-only */
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = log_len;
	a.log_level = 1;
	log[0] = '\0';
	return sys_bpf(BPF_PROG_LOAD, &a);
}

/* Every user page fault of this thread runs the program; the kernel's own are left out. */
static int open_fault_event(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* What the stack map said about the fake frames. */
struct stack_seen {
	int stacks;		/* stacks in the map */
	int found;		/* stacks that end in the fake frames */
	struct bpf_stack_build_id frame[NR_FAKE];
	char all[1024];		/* every stack, for the failure message */
};

static const char *status_name(int status)
{
	switch (status) {
	case BPF_STACK_BUILD_ID_EMPTY: return "empty";
	case BPF_STACK_BUILD_ID_VALID: return "id";
	case BPF_STACK_BUILD_ID_IP: return "ip";
	}
	return "?";
}

/*
 * The stack ends in the fake frames when its last NR_FAKE entries are
 * FAKE_OFF + 0, 1, 2 into the mapping at @addr: as addresses (IP) or as file
 * offsets (VALID, the mapping starts at file offset 0).
 */
static bool ends_in_fake(const struct bpf_stack_build_id *s, int nr, uint64_t addr)
{
	int i;

	if (nr < NR_FAKE + 1)
		return false;
	for (i = 0; i < NR_FAKE; i++) {
		const struct bpf_stack_build_id *e = &s[nr - NR_FAKE + i];

		if (e->status == BPF_STACK_BUILD_ID_IP && e->ip == addr + FAKE_OFF + i)
			continue;
		if (e->status == BPF_STACK_BUILD_ID_VALID && e->offset == FAKE_OFF + i)
			continue;
		return false;
	}
	return true;
}

static int read_stacks(int fd, uint64_t addr, struct stack_seen *seen)
{
	struct bpf_stack_build_id s[MAX_DEPTH];
	uint32_t key, next;
	char id[2 * BPF_BUILD_ID_SIZE + 1];
	size_t used = 0;
	int nr, i, err;
	bool first = true;

	memset(seen, 0, sizeof(*seen));
	for (;;) {
		err = bpf_elem(BPF_MAP_GET_NEXT_KEY, fd, first ? NULL : &key, &next);
		if (err)
			return errno == ENOENT ? 0 : -errno;
		first = false;
		key = next;
		if (bpf_elem(BPF_MAP_LOOKUP_ELEM, fd, &key, s))
			continue;	/* replaced meanwhile */
		seen->stacks++;
		for (nr = 0; nr < MAX_DEPTH && s[nr].status != BPF_STACK_BUILD_ID_EMPTY; nr++)
			;
		for (i = 0; i < nr && used < sizeof(seen->all) - 1; i++) {
			const char *what = s[i].status == BPF_STACK_BUILD_ID_VALID ?
				bid_hex(s[i].build_id, BPF_BUILD_ID_SIZE, id) : "";

			used += snprintf(seen->all + used, sizeof(seen->all) - used,
					 "%s%s %s+%#llx", i ? ", " : (seen->stacks > 1 ? "; " : ""),
					 status_name(s[i].status), what,
					 (unsigned long long)s[i].ip);
		}
		if (used >= sizeof(seen->all))
			used = sizeof(seen->all) - 1;
		if (ends_in_fake(s, nr, addr) && !seen->found++)
			memcpy(seen->frame, &s[nr - NR_FAKE], sizeof(seen->frame));
	}
}

enum want { WANT_ID, WANT_FALLBACK, WANT_EITHER };

FIXTURE(stackmap) {
	int stacks, result, prog, event;
	void *map;
	size_t len;
};

FIXTURE_SETUP(stackmap)
{
	self->stacks = self->result = self->prog = self->event = -1;
	self->map = NULL;
}

FIXTURE_TEARDOWN(stackmap)
{
	if (self->event >= 0)
		close(self->event);
	if (self->prog >= 0)
		close(self->prog);
	if (self->stacks >= 0)
		close(self->stacks);
	if (self->result >= 0)
		close(self->result);
	if (self->map)
		munmap(self->map, self->len);
}

FIXTURE_VARIANT(stackmap) {
	const char *file;
	enum want want;
};

#define ID(name) FIXTURE_VARIANT_ADD(stackmap, name) { .file = #name, .want = WANT_ID };
#define FALLBACK(name) \
	FIXTURE_VARIANT_ADD(stackmap, name) { .file = #name, .want = WANT_FALLBACK };
/* the series' limits: the id on a kernel without the limit, else the fallback */
#define EITHER(name) FIXTURE_VARIANT_ADD(stackmap, name) { .file = #name, .want = WANT_EITHER };

BID_FIXTURES_WITH_ID(ID)
BID_FIXTURES_FALLBACK(FALLBACK)

/*
 * buildid_limits' files, mapped as plain files: l_hugetlb and l_thp are
 * read in base pages here (their id, not a decoy), l_align8 falls back on
 * the series and on 6.12.
 */
ID(l_notes_1023)
EITHER(l_notes_1025)
EITHER(l_filesz_4g)
ID(l_hugetlb)
ID(l_thp)
FALLBACK(l_align8)

/*
 * The stack map, the result array, the program and the page-fault event
 * with the program attached, disabled.  A kernel or a user that cannot run
 * BPF on perf events skips (the lab's kernels all can: a failure there).
 */
static void bpf_setup(struct __test_metadata *_metadata, FIXTURE_DATA(stackmap) *self)
{
	static char log[8192];
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	int64_t never = INT64_MIN;
	uint32_t zero = 0;

	/*
	 * Before 5.11 a map is charged to RLIMIT_MEMLOCK, and the charge of the
	 * previous case's maps is returned only when a work item frees them:
	 * under the guest's default limit about half the cases got EPERM.  Not
	 * being allowed to raise it is the EPERM below.
	 */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	self->stacks = bpf_map(BPF_MAP_TYPE_STACK_TRACE, sizeof(uint32_t),
			       MAX_DEPTH * sizeof(struct bpf_stack_build_id), MAP_ENTRIES,
			       BPF_F_STACK_BUILD_ID);
	if (self->stacks < 0 && (errno == EPERM || errno == EACCES) && !bid_lab())
		SKIP(return, "a BPF stack map needs CAP_SYS_ADMIN or CAP_BPF");
	if (self->stacks < 0)
		ENV_SKIP("a build-ID stack map: %s (CONFIG_BPF_SYSCALL)", strerror(errno));
	self->result = bpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(int64_t), 1, 0);
	ASSERT_LE(0, self->result) TH_LOG("BPF array map: %s", strerror(errno));
	ASSERT_EQ(0, bpf_elem(BPF_MAP_UPDATE_ELEM, self->result, &zero, &never));
	self->prog = load_prog(self->stacks, self->result, log, sizeof(log));
	if (self->prog < 0 && errno == EINVAL && !log[0])
		ENV_SKIP("BPF_PROG_TYPE_PERF_EVENT refused: %s (CONFIG_BPF_EVENTS)",
			 strerror(errno));
	ASSERT_LE(0, self->prog) TH_LOG("loading the program: %s; verifier: %.2000s",
					strerror(errno), log);
	self->event = open_fault_event();
	if (self->event < 0 && (errno == EACCES || errno == EPERM) && !bid_lab())
		SKIP(return, "perf_event_open: %s (perf_event_paranoid)", strerror(errno));
	ASSERT_LE(0, self->event) TH_LOG("page-fault event: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->event, PERF_EVENT_IOC_SET_BPF, self->prog))
		TH_LOG("PERF_EVENT_IOC_SET_BPF: %s", strerror(errno));
}

TEST_F(stackmap, same_as_mmap2)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	struct fake_frame frames[NR_FAKE] __attribute__((aligned(16)));
	char path[PATH_MAX], real[PATH_MAX];
	char got[2 * BPF_BUILD_ID_SIZE + 1], want[2 * BPF_BUILD_ID_SIZE + 1];
	uint8_t id[BID_BUILD_ID_MAX];
	struct stack_seen seen;
	struct bid_mmap2 r;
	struct stat st;
	size_t n = 0, size;
	uint64_t addr;
	int64_t last;
	uint32_t zero = 0;
	char *page;
	bool has_id;
	int fd, cnt, i;

	REQUIRE_BUILD_ID();
	if (fixture_unavailable(variant->file, path, sizeof(path)))
		SKIP(return, "%.900s", path);
	if (!HAVE_FAKE_FRAMES)
		SKIP(return, "no fake frames on this architecture: %s",
		     "the test has them for x86, arm and arm64; 5.10 walks no user stack on s390");
	bpf_setup(_metadata, self);
	if (self->event < 0)
		return;		/* skipped */

	fixture(_metadata, variant->file, path, sizeof(path));
	if (variant->want != WANT_FALLBACK)
		n = expected_id(_metadata, variant->file, id);
	ASSERT_TRUE(realpath(path, real) != NULL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* Both parse from the page cache only: every page resident, for both. */
	ASSERT_EQ(0, bid_read_file(fd, &size));
	ASSERT_EQ(0, fstat(fd, &st));
	self->len = size ? size : bid_page_size();
	cnt = bid_record_fd(&o, fd, self->len, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			    &self->map, &r);
	ASSERT_EQ(1, cnt) TH_LOG("MMAP2 records for %s: %d", real, cnt);
	ASSERT_STREQ(real, r.filename);
	/* MMAP2 as buildid_record, buildid_fallback and buildid_limits expect it */
	if (variant->want == WANT_ID)
		assert_build_id(_metadata, &r, id, n);
	else if (variant->want == WANT_FALLBACK)
		assert_fallback_fd(_metadata, &r, &st, fd);
	else
		assert_id_or_fallback(_metadata, &r, id, n, &st, fd);
	has_id = r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID;

	addr = (uintptr_t)self->map;
	memset(frames, 0, sizeof(frames));
	for (i = 0; i < NR_FAKE; i++) {
		frames[i].next = i + 1 < NR_FAKE ? FRAME_LINK(&frames[i + 1]) : 0;
		frames[i].ret = addr + FAKE_OFF + i;
	}
	page = mmap(NULL, bid_page_size(), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(page != MAP_FAILED);
	ASSERT_EQ(0, ioctl(self->event, PERF_EVENT_IOC_ENABLE, 0));
	fault_with_frames(FRAME_LINK(&frames[0]), page);
	ASSERT_EQ(0, ioctl(self->event, PERF_EVENT_IOC_DISABLE, 0));
	munmap(page, bid_page_size());
	ASSERT_EQ(0, bpf_elem(BPF_MAP_LOOKUP_ELEM, self->result, &zero, &last));

	ASSERT_EQ(0, read_stacks(self->stacks, addr, &seen));
	ASSERT_EQ(1, seen.found)
		TH_LOG("stacks ending in the fake frames: %d of %d (last bpf_get_stackid: %lld): %s",
		       seen.found, seen.stacks, (long long)last, seen.all);
	for (i = 0; i < NR_FAKE; i++) {
		const struct bpf_stack_build_id *e = &seen.frame[i];

		bid_hex(e->build_id, BPF_BUILD_ID_SIZE, got);
		bid_hex(r.build_id, BID_BUILD_ID_MAX, want);
		if (has_id) {
			ASSERT_EQ(BPF_STACK_BUILD_ID_VALID, e->status)
				TH_LOG("%s: MMAP2 has id %s, the stack map falls back to ip %#llx",
				       variant->file, want, (unsigned long long)e->ip);
			ASSERT_EQ(0, memcmp(e->build_id, r.build_id, BPF_BUILD_ID_SIZE))
				TH_LOG("%s: MMAP2 has id %s, the stack map %s", variant->file,
				       want, got);
		} else {
			ASSERT_EQ(BPF_STACK_BUILD_ID_IP, e->status)
				TH_LOG("%s: MMAP2 has no id, the stack map reports %s at offset %#llx",
				       variant->file, got, (unsigned long long)e->offset);
			ASSERT_EQ(addr + FAKE_OFF + i, e->ip);
		}
	}
	close(fd);
}

TEST_HARNESS_MAIN
