/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TREE_PLAN_H
#define CRIU_TREE_PLAN_H

#include <stdint.h>

/*
 * Who forks whom at restore, worked out from the ids alone, so that dump
 * can refuse a tree restore could not rebuild and restore can check the
 * images it is given with the same rules.
 */
struct plan_task {
	uint32_t pid, ppid, sid, pgid;
	int zombie;
	/* filled in by tree_plan() */
	int helper;	/* stands in for a gone leader while it forks, then exits */
	int parent;	/* index of the parent, -1 for the root */
	int creator;	/* index of the task that forks it: the parent or a sibling */
};

/*
 * @t holds @nr tasks, parents before children, the root first, with room
 * for @cap; helpers are appended. Returns the new number of tasks, or -1
 * after saying which task can't be rebuilt and why.
 */
int tree_plan(struct plan_task *t, int nr, int cap);

/* Room tree_plan() may need for @nr tasks. */
static inline int tree_plan_cap(int nr)
{
	return 2 * nr + 1;
}

#endif
