/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RESTORE_RTREE_H
#define CRIU_RESTORE_RTREE_H

/*
 * The tree being restored, as the restore driver alone sees it: criu's
 * side (restore.c, takeover.c) and the new tasks' (task.c). The parts see
 * only each node's struct rtask.
 */
#include "task/task.h"
#include "pstree.pb-c.h"

#define AREA_RESERVE		(32 * PAGE_SIZE)	/* room to move the vDSO through */
/* room in each thread's own batch beyond what the loads ask for (thread_entries) */
#define THREAD_BATCH_ENTRIES	16
#define THREAD_BATCH_DATA	(1 << 10)

enum {
	CHILD_PREPARING,
	CHILD_READY,
	CHILD_FAILED,
};

/* One per task, in memory shared by criu and every new task. */
struct child_report {
	int state;
	pid_t host_pid;		/* the task's pid in criu's view, its first write */
	char error[1016];
};

struct rnode {
	struct rtask t;			/* what the parts see */
	PstreeTask *pt;
	struct rnode *parent;
	struct rnode *creator;		/* forks it: the parent, or a sibling (CLONE_PARENT) */
	struct rnode **kids;		/* the tasks it forks */
	int nr_kids;
	int helper;			/* a gone leader's stand-in: forks, then exits */
	struct child_report *rep;
	size_t main_size;		/* the leader's batch area */
	size_t thread_size;		/* each other thread's */
	int main_max, thread_max;	/* entries of each */
};

struct rtree {
	struct rnode *nodes;		/* parents before children; [0] is the root */
	int nr;				/* helpers last */
	PstreeTask *helper_pts;
	int *ready;			/* shared: tasks that are ready or failed */
	pid_t criu;
};

/* A task criu takes over: neither a zombie nor a helper. */
static inline int rnode_live(const struct rnode *n)
{
	return !n->helper && !n->pt->zombie;
}

#endif
