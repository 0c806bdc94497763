/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RESTORE_TASK_H
#define CRIU_RESTORE_TASK_H

/* The new task's half of the restore (task.c). */
#include "restore/rtree.h"

/* Creates the task of @n with its pid; in the new task, never returns. */
pid_t restore_fork(struct rst_ctx *rc, struct rtree *tree, struct rnode *n);

/* Address of thread @th's batch in the trampoline of @n. */
uint64_t thread_batch_addr(struct rnode *n, int th);

#endif
