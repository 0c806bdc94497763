/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RESTORE_TAKEOVER_H
#define CRIU_RESTORE_TAKEOVER_H

/* criu takes the ready tasks over (takeover.c). */
#include "restore/rtree.h"

/*
 * criu takes every live task over once all are ready, and runs their
 * batches and final hooks; the tree stays traced. @stops runs once every
 * batch ran, before the stopped tasks and their parents lose their
 * trampolines.
 */
int take_over_tree(struct rst_ctx *rc, struct rtree *tree,
		   int (*stops)(struct rst_ctx *rc, struct rtree *tree));
/* The executor's syscall instruction in @t's trampoline, while it is there. */
uint64_t trampoline_syscall(struct rtask *t);

#endif
