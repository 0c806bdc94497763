/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_INFECT_H
#define CRIU_TASK_INFECT_H

#include <stdint.h>
#include <sys/user.h>

#include "proc/proc.h"
#include "task/batch.h"
#include "task/sigframe.h"

/*
 * Running system calls inside a stopped (seized) task: each borrowed
 * thread gets a scratch area mapped with one injected mmap, the executor
 * and a batch are copied there and run in one round trip, and everything
 * is removed again by infect_stop().
 *
 * Each borrowed thread gets a way home first (task/sigframe.h), so that a
 * criu killed at any moment leaves the task running as it was: the
 * injected syscalls run at a `syscall; ret` of the task's libraries, the
 * executor ends with a signal the task ignores instead of int3, and while
 * criu is away every thread is parked on the munmap of its own area. A
 * task without those (no C library, no ignored signal, no room on a
 * thread's stack) is dumped the old way: a lone syscall instruction of
 * its vDSO and int3.
 */
struct infect_thread {
	pid_t tid;
	struct user_regs_struct regs;	/* its own registers */
	uint64_t sigmask;
	int64_t frame;			/* its way home; 0: none */
	uint64_t area;			/* its scratch area */
	size_t size;			/* of that area */
};

struct infect {
	pid_t pid;
	uint64_t sc_ip;			/* a syscall instruction in the vDSO */
	const struct proc_maps *maps;
	struct gadgets g;
	int sig;			/* how the executor calls; 0: int3 */
	size_t lead, per;		/* the leader's area, each other thread's, at first */
	uint64_t hole, hole_end;	/* the free range the areas go into */
	struct infect_thread *th;
	int nr, max;
};

int infect_start(struct infect *inf, pid_t pid, const struct proc_maps *maps,
		 const struct proc_status *st, size_t lead, size_t per, int nr_threads);
/* Takes a thread on loan (the leader first) and maps its area: *@area. */
int infect_borrow(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
		  uint64_t sigmask, uint64_t *area);
/*
 * Makes the area of the @idx-th borrowed thread @size bytes at least: the
 * leader's grows as its batch needs (batch_seal() says how much).
 */
int infect_resize(struct infect *inf, int idx, size_t size);
/* Runs @b (sealed) in the @idx-th borrowed thread. */
int infect_run(struct infect *inf, int idx, struct batch *b);
/* Removes the areas, puts back registers and masks. Idempotent. */
int infect_stop(struct infect *inf);

/* Runs the executor over @b in a stopped task; shared with restore. */
int executor_run(pid_t pid, const struct user_regs_struct *base, struct batch *b,
		 uint64_t sp);

#endif
