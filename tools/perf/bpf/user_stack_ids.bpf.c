// SPDX-License-Identifier: GPL-2.0
/*
 * Attached to each sampling perf event of perf-buildid record: for every sample in user
 * context, the user frames twice, once as instruction pointers and once as (build id, file
 * offset) pairs, sent through a BPF ring buffer.
 *
 * Both bpf_get_stack calls walk the same registers of the same sample (or, on 5.9+, the same
 * recorded callchain), so frame i is the same frame in both lists. The kernel resolves the ids
 * at sample time, in the sampled task, while the mapping exists: this works for processes that
 * have exited and files that are gone by the time user space looks.
 *
 * No CO-RE and no kernel types: a perf_event program sees only its context and helpers, which
 * keeps the object loadable on every kernel since 5.8 (the ring buffer).
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "user_stack_ids.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} stacks SEC(".maps");

/* Samples that found the ring buffer full: user space reports them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

/*
 * Whether the sample interrupted the task in user mode. Only then are build ids asked for:
 * 5.10's lookup calls find_vma() on the task's mm from the interrupt, which updates the task's
 * vmacache. A sample that lands inside the task's own kernel code can catch that cache half
 * flushed (exec_mmap() clears it with 4-byte stores after switching mm), and the interrupted
 * flush then zeroes the upper half of the pointer the lookup just stored: an Oops in
 * vmacache_find() at the next find_vma(), seen in the lab on pristine 5.10 during exec.
 * In user mode the task runs no kernel code, so nothing of its own can be half done.
 */
static __always_inline int sampled_in_user_mode(const struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (ctx->regs.cs & 3) == 3;
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) == 0;	/* PSR_MODE_EL0t */
#else
#error "sampled_in_user_mode() needs this architecture's test"
#endif
}

SEC("perf_event")
int user_stack_ids(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pbid_bpf_stack *s;
	long n;

	/*
	 * The return value decides whether the sample still goes to the perf ring buffer
	 * (bpf_overflow_handler): 1 keeps it, for this program only adds to the recording.
	 * Kernel threads have no user frames; see above for samples in kernel mode.
	 */
	if (pid_tgid >> 32 == 0 || !sampled_in_user_mode(ctx))
		return 1;
	s = bpf_ringbuf_reserve(&stacks, sizeof(*s), 0);
	if (!s) {
		__u32 zero = 0;
		__u64 *d = bpf_map_lookup_elem(&dropped, &zero);

		if (d)
			__sync_fetch_and_add(d, 1);
		return 1;
	}
	s->pid = pid_tgid >> 32;
	s->tid = (__u32)pid_tgid;
	s->time = bpf_ktime_get_ns();
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	s->ips_size = n < 0 ? 0 : n;
	n = bpf_get_stack(ctx, s->ids, sizeof(s->ids),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	s->ids_size = n < 0 ? 0 : n;
	bpf_ringbuf_submit(s, 0);
	return 1;
}
