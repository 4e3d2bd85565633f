/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record user_stack_ids.bpf.c sends for a sample, shared by the BPF program and its
 * loader: one definition of the layout on both sides.
 */
#ifndef PBID_BPF_USER_STACK_IDS_H
#define PBID_BPF_USER_STACK_IDS_H

#include <linux/bpf.h>
#include <linux/types.h>

/* Frames kept per sample: perf's default kernel.perf_event_max_stack is 127. */
#define PBID_BPF_MAX_FRAMES 64

struct pbid_bpf_stack {
	__u32 pid;
	__u32 tid;
	__u64 time;
	/* Bytes that bpf_get_stack filled in each array. */
	__u32 ips_size;
	__u32 ids_size;
	__u64 ips[PBID_BPF_MAX_FRAMES];
	struct bpf_stack_build_id ids[PBID_BPF_MAX_FRAMES];
};

#endif /* PBID_BPF_USER_STACK_IDS_H */
