/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU buffer of exec_race.bpf.c, shared by the BPF program and pbid-exec-race, which
 * reads its counters: one definition of the layout on both sides.
 */
#ifndef PBID_BPF_EXEC_RACE_H
#define PBID_BPF_EXEC_RACE_H

#include <linux/bpf.h>
#include <linux/types.h>

#define EXEC_RACE_FRAMES 32

struct exec_race_buf {
	struct bpf_stack_build_id frames[EXEC_RACE_FRAMES];
	__u64 samples;		/* samples the program saw */
	__u64 with_ids;		/* of them, with a valid build id in the first user frame */
};

#endif /* PBID_BPF_EXEC_RACE_H */
