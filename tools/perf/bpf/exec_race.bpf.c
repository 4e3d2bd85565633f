// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's reproducer of 5.10's vmacache race (kernel/scripts/vm-exec-race.sh): on every
 * sample, in user mode or not, bpf_get_stack() with BPF_F_USER_BUILD_ID, as any tool that
 * asks for build-id stacks does. In a sample that lands in exec_mmap() the kernel's lookup
 * runs find_vma() on the task's vmacache while the task is flushing it. perf-buildid's own
 * program (user_stack_ids.bpf.c) asks only in user mode, which is why it does not hit this.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "exec_race.h"

char LICENSE[] SEC("license") = "GPL";

/* Per CPU: the frames are too large for the BPF stack, and no two CPUs share one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_race_buf);
} bufs SEC(".maps");

SEC("perf_event")
int exec_race(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct exec_race_buf *b = bpf_map_lookup_elem(&bufs, &zero);
	long n;

	if (!b)
		return 0;
	b->samples++;
	n = bpf_get_stack(ctx, b->frames, sizeof(b->frames),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	if (n >= (long)sizeof(b->frames[0]) &&
	    b->frames[0].status == BPF_STACK_BUILD_ID_VALID)
		b->with_ids++;
	return 0;
}
