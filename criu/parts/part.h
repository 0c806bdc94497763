/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_PART_H
#define CRIU_PARTS_PART_H

/*
 * One kind of task state = one part: a file in parts/ with both halves,
 * next to its images/NAME.proto and its line in the registry,
 * images/kinds.def. The drivers (dump.c, restore/) call the hooks of
 * every part in the registry's order (parts.c); a hook left NULL is
 * skipped. Parts use task/ (the contexts, the restore's services), proc/,
 * image/ and core/, and the files of their own group (the name up to the
 * first dash), never another part: what one kind needs of another goes
 * through the context (CONTRIBUTING.md).
 */
#include "task/rst.h"
#include "task/task.h"

struct part {
	const char *name;
	enum part_id id;
	/*
	 * pre-dump runs this part too (the memory and what its pages need);
	 * every other part waits for the final dump
	 */
	int in_pre_dump;
	/*
	 * dump, in criu, before the tree is frozen (dc->opts->pid is its
	 * root): what must hold from the first frozen task on, such as the
	 * network lock. Undone by after_dump.
	 */
	int (*pre_freeze)(struct dump_ctx *dc);
	/*
	 * dump, in criu, once the tree's fate is known, on every path after
	 * pre_freeze: @runs is 1 when the tree goes on (a failure,
	 * --leave-running, --leave-stopped; called right before it is let
	 * go), 0 when it was killed after a complete checkpoint (called
	 * once it is reaped).
	 */
	void (*after_dump)(struct dump_ctx *dc, int runs);
	/*
	 * dump: each task once the whole tree is frozen, before any check
	 * (the first takes the dump's moment, ns-time.c): the one place a
	 * task may still run a few instructions of its own (mm-vdso.c)
	 */
	int (*frozen)(struct dump_ctx *dc, struct dtask *t);
	/* dump: refuse what is not supported, before anything is changed */
	int (*check)(struct dump_ctx *dc, struct dtask *t);
	/* dump: queue system calls to run inside the task (its leader) */
	int (*prepare)(struct dump_ctx *dc, struct dtask *t, struct batch *b);
	/* dump: the same for what each thread must be asked itself */
	int (*prepare_thread)(struct dump_ctx *dc, struct dtask *t, int th, struct batch *b);
	/* dump: write the image; @b is the leader's batch, t->th[i].b each thread's */
	int (*dump)(struct dump_ctx *dc, struct dtask *t, struct batch *b);
	/* dump: once every task is dumped, write what the tree shares */
	int (*dump_tree)(struct dump_ctx *dc);
	/* restore, in criu, before any task's load: what the tree shares */
	int (*load_tree)(struct rst_ctx *rc);
	/* restore, in criu: read and validate the image into t->img[id] */
	int (*load)(struct rst_ctx *rc, struct rtask *t);
	/* restore, in criu, right before the root is forked (after every load) */
	int (*prefork)(struct rst_ctx *rc);
	/*
	 * restore, in criu, right after the root exists, before it runs any
	 * early hook (it waits until every part's forked hook is done): what
	 * only criu can do to it, from outside (its user namespace's maps, the
	 * cgroups it starts in). @root->host_pid is set.
	 */
	int (*forked)(struct rst_ctx *rc, struct rtask *root);
	/*
	 * restore, in the new task, first of all, before it creates its
	 * children: the namespaces it lives in and they are born into.
	 */
	int (*early)(struct rst_ctx *rc, struct rtask *t);
	/*
	 * restore, in a new session leader right after its setsid(), before
	 * it forks the rest of its session (who inherit its terminal)
	 */
	int (*session)(struct rst_ctx *rc, struct rtask *t);
	/* restore, in the new task, as ordinary code, before it stops */
	int (*child)(struct rst_ctx *rc, struct rtask *t);
	/* restore, in the new task: queue system calls for the executor */
	int (*batch)(struct rst_ctx *rc, struct rtask *t, struct batch *b);
	/*
	 * restore: what thread @th must do itself (set_tid_address, rseq,
	 * credentials...). For the leader it follows every part's batch; the
	 * other threads run theirs once they exist, after the leader's.
	 */
	int (*thread_batch)(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b);
	/* restore, in criu, via ptrace, after the batch and the trampoline are gone */
	int (*final)(struct rst_ctx *rc, struct rtask *t);
	/*
	 * restore, in criu, once every task exists and waits, before the
	 * setup-namespaces notification: fill, from outside, the namespaces
	 * the root was born into (root->host_pid names them in /proc).
	 */
	int (*ns_ready)(struct rst_ctx *rc, struct rtask *root);
	/* restore, in criu, after post-restore, right before the tree is let go */
	int (*resume)(struct rst_ctx *rc, struct rtask *root);
	/* restore, in criu, once the tree was let go (and the stats written): what only held it goes */
	void (*resumed)(struct rst_ctx *rc, struct rtask *root);
	void (*release)(struct rtask *t);
	void (*release_tree)(struct rst_ctx *rc);
};

extern const struct part *const parts[PART_NR];

#endif
