/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TREE_STOP_H
#define CRIU_TREE_STOP_H

/*
 * Tasks in a group stop (SIGSTOP, ^Z...): what their parents can see of
 * the stop, saved by dump and made again by restore (tree/stop.c).
 */
#include <stdint.h>

#include "task/task.h"
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
 * restore: stopped task @t, still held by criu after its batch, enters its
 * group stop with the dumped signal (@pt's); its parent is notified as the
 * kernel does. Runs before anything of its parent's is released.
 */
int stop_enter(struct rtask *t, const PstreeTask *pt);
/*
 * restore: in @p, still held, once every task of the tree is in its stop:
 * collects again the stop of its stopped child @c (@cpt) if @p had
 * collected it before the dump, with the syscall instruction @insn in @p.
 */
int stop_collect(struct rtask *p, const struct rtask *c, const PstreeTask *cpt, uint64_t insn);
/*
 * restore: then, in a @p that has stopped children, drops the SIGCHLD
 * their new stops sent unless one was pending at the dump (@ppt); @scratch
 * is 32 writable bytes in @p.
 */
int stop_drop_sigchld(struct rtask *p, const PstreeTask *ppt, uint64_t insn, uint64_t scratch);

#endif
