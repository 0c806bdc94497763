/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_STOP_H
#define CRIU_STOP_H

/*
 * Tasks in a group stop (SIGSTOP, ^Z...): what their parents can see of
 * the stop, saved by dump and made again by restore (stop.c).
 */
#include <stdint.h>

#include "parts/part.h"
#include "restore.h"
#include "pstree.pb-c.h"

/* A signal that stops a task by default. */
int stop_signal_valid(uint32_t sig);

/* dump: queue in @parent's batch one question per stopped child: still to be reported? */
int stop_ask_parent(struct dtask **tasks, int nr, struct dtask *parent, struct batch *b);
/* dump: the answers, once @parent's batch ran */
void stop_read_answers(struct dtask **tasks, int nr, struct dtask *parent, struct batch *b);
/* dump: the pstree fields of @t */
void stop_fill(const struct dtask *t, PstreeTask *pt);

/*
 * restore: the stopped task of @n, still held by criu after its batch,
 * enters its group stop with the dumped signal; its parent is notified as
 * the kernel does. Runs before anything of its parent's is released.
 */
int stop_enter(struct rnode *n);
/*
 * restore: in @p, still held, after every stop of the tree: collects again
 * the stops its children's parent had collected, and drops the SIGCHLD the
 * new stops sent unless one was pending at the dump. @insn is a syscall
 * instruction in @p, @scratch 32 writable bytes there.
 */
int stop_settle(struct rtree *tree, struct rnode *p, uint64_t insn, uint64_t scratch);

#endif
