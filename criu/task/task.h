/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_TASK_H
#define CRIU_TASK_TASK_H

/*
 * A task as the parts see it, being dumped (struct dtask, frozen by the
 * dump driver) or restored (struct rtask), and the context of each run:
 * what the drivers hand every hook of parts/part.h. Each part has a slot
 * of its own in them, by its id.
 */
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "core/opts.h"
#include "proc/proc.h"
#include "task/batch.h"

/* The parts, in the registry's order (images/kinds.def): the restore's. */
enum part_id {
#define KIND(name, NAME, ...)	PART_##NAME,
#define PART(name, NAME)	PART_##NAME,
#include "kinds.def"
	PART_NR,
};

struct idmap;

struct dump_ctx {
	int dirfd;			/* the images directory */
	const struct opts *opts;
	void *shared[PART_NR];		/* a part's tree-wide data during a dump */
	/*
	 * fds the restore opens for the whole tree, which every task holds
	 * until its batch closes them (limit_fd_room()): parts add theirs
	 * in dump_tree.
	 */
	int64_t restore_shared;
};

/* A thread of a task being dumped, stopped by the driver. */
struct dthread {
	pid_t tid;
	struct user_regs_struct regs;	/* as it stopped */
	uint64_t sigmask;
	int seized;
	int pending;			/* interrupted, its stop not collected (--freeze-cgroup) */
	struct batch b;			/* its in-task questions and answers */
	/* its /proc status but the leader's (dtask.status): thread_status() */
	struct proc_status status;
};

/*
 * A task being dumped, frozen by the driver. Two views of its ids: pid and
 * tids are criu's (its /proc and ptrace); ns_pid and ns_tids are the task's
 * own, in its pid namespace: images record those and are named by them.
 * They differ only when the tree has a pid namespace of its own.
 */
struct dtask {
	pid_t pid;
	pid_t *tids;			/* th[i].tid, sorted, th[0] the leader */
	int nr_threads;
	pid_t ns_pid;
	pid_t *ns_tids;			/* ns_tids[i] is tids[i] as the task sees it */
	pid_t ns_pgid, ns_sid;		/* 0: outside the task's pid namespace */
	struct dthread *th;
	struct dtask *parent;		/* NULL for the root */
	int zombie;			/* dead, not reaped: only pstree data */
	int stopped;			/* in a group stop (SIGSTOP and the like) */
	int stop_sig;			/* the signal of that stop */
	int stop_waited;		/* its parent had collected the stop (tree/stop.c) */
	uint64_t stop_query;		/* where the parent's answer lands in its batch */
	int exit_code;			/* a zombie's wait status */
	int64_t nr_fds;			/* its fds (fdinfo's check) */
	int64_t restore_own;		/* criu's own fds in it at restore, at most (mm) */
	/*
	 * Read once per thread while the task is frozen, before the parts'
	 * frozen hooks: a thread's status costs 75 us in a task of 10,000
	 * threads, and four parts ask for it (vdso, seccomp, creds, signal).
	 */
	struct proc_status status;
	struct proc_stat stat;
	struct proc_maps maps;		/* smaps, read after the task was cured */
	struct user_regs_struct regs;	/* as the task stopped */
	uint64_t sigmask;
	void *priv[PART_NR];		/* a part's own data from prepare to dump */
};

/* Thread @i's /proc status (read once: see dtask.status). */
static inline const struct proc_status *thread_status(const struct dtask *t, int i)
{
	return i ? &t->th[i].status : &t->status;
}

struct rst_ctx {
	int dirfd;
	const struct opts *opts;
	void *shared[PART_NR];		/* a part's tree-wide data during a restore */
	unsigned long root_flags;	/* extra clone3 flags for the root (CLONE_NEW*) */
	int failed;			/* at release_tree: undo what the parts made */
	/*
	 * criu's /proc (O_PATH), inherited by every task, when /proc inside
	 * may become the tree's own, whose pids are not criu's (the tree has a
	 * mount namespace of its own: the mount part opens it); else -1, and
	 * /proc is criu's.
	 */
	int proc_fd;
	/*
	 * fds criu opened before the first fork (objects several tasks share):
	 * every task inherits them and keeps them until its batch closes them.
	 * They are numbered above every fd of every task (rst_inherit_fd).
	 */
	int *inherited;
	int nr_inherited;
	int next_inherit;
	int *all_fds;			/* every task's fds, sorted: theirs to avoid */
	int nr_all_fds;
	/* what criu made for the whole tree, by dump-time identity (rst_object_*) */
	struct rst_object {
		uint64_t dev, ino;
		int fd;			/* inherited by every task; -1 until made */
	} *objects;
	int nr_objects;
	/* CLONE_NEW* of namespaces the root joins (setns) rather than makes */
	unsigned long joined_ns;
	int released;		/* the tree was let go: release_tree undoes nothing */
	const struct idmap *idmap;	/* the tree's user namespace's maps (task/idmap.h) */
	/*
	 * A CPU list of the dumping machine as this one runs it (a cgroup's
	 * cpuset.cpus), by the rules the cpu part applies to affinities
	 * (every CPU online at dump, @online_then, may be NULL, becomes every
	 * CPU online here; --cpu-map; one online here stays...): offered by
	 * that part in its load (parts/cpu.c), NULL before. @what names the
	 * list in messages. 0 with @out, -1 logged.
	 */
	int (*map_cpus)(const struct opts *o, const char *online_then, const char *list,
			char *out, size_t len, const char *what);
};

/*
 * A task being restored. Image data is loaded in the parent. pid and tids
 * are the ids in the task's own pid namespace, as the images have them:
 * what it is created with and what the batch passes to the kernel from
 * inside. host_pid and host_tids are criu's view, for everything criu
 * does from outside (ptrace, /proc, sched_setaffinity...); the driver sets
 * them once the task (and its threads) exist, before the final hooks.
 */
struct rtask {
	pid_t pid;
	pid_t *tids;		/* tids[0] == pid */
	int nr_threads;
	pid_t host_pid;
	pid_t *host_tids;
	/*
	 * Who forks it: its parent, or a sibling on the parent's behalf
	 * (restore/task.c); its early hooks ran before. NULL for the root.
	 */
	struct rtask *creator;
	int *task_fds;		/* the task's fd numbers, sorted (fdinfo load) */
	int nr_task_fds;
	int next_slot;		/* criu's own fds take free slots from the top */
	int *priv_fds;		/* criu's own fds there, closed by the batch */
	int nr_priv_fds;
	int ordered;		/* its batch must follow every earlier task's (load) */
	uint64_t area;		/* the trampoline: executor + batch */
	size_t area_size;
	void *img[PART_NR];	/* each part's loaded image */
	/*
	 * Filled by loads: how big the batch must be (the leader's, with its
	 * own per-thread steps), the most any other thread's needs beyond
	 * the steps every thread has (THREAD_BATCH_*), what the task will map.
	 */
	int batch_entries;
	size_t batch_data;
	int thread_entries;
	size_t thread_data;
	int own_fds;		/* criu's own fds the task will hold, at most (limit_fd_room) */
	struct rst_range {
		uint64_t start, end;
	} *used;
	int nr_used;
	/*
	 * What the kernel writes into the task's own memory while its batch
	 * runs (the rseq areas, task.c): a lazy restore fills those pages
	 * first (mm-lazy.c).
	 */
	struct rst_range *written;
	int nr_written;
};

#endif
