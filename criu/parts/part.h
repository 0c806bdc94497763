/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_PART_H
#define CRIU_PARTS_PART_H

/*
 * One kind of task state = one part: a file in parts/ with both halves,
 * next to its images/NAME.proto. The drivers (dump.c, restore.c) call the
 * hooks of every part in table order (parts.c); a hook left NULL is
 * skipped. Parts use task/, proc/, image/ and core/, never each other.
 */
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "core/opts.h"
#include "proc/proc.h"
#include "task/batch.h"
#include "task/infect.h"

enum part_id {
	PART_NS,		/* first: refusals before anything else is asked */
	PART_NS_PID,
	PART_NS_UTS,
	PART_TIMENS,
	PART_SHMEM,		/* before the fds and areas that name its objects */
	PART_FDINFO,
	PART_FS,
	PART_SCHED,
	PART_CPU,
	PART_VDSO,		/* before mm: it says where the kernel's vDSO goes */
	PART_MM,
	PART_SYSVIPC,
	PART_RLIMIT,
	PART_TASK,
	PART_SIGACT,
	PART_SIGNAL,
	PART_ITIMER,
	PART_POSIX_TIMER,
	PART_REGS,
	PART_SECCOMP,		/* filters: before creds may drop CAP_SYS_ADMIN */
	PART_CREDS,
	PART_SECCOMP_STRICT,	/* strict mode: the very last step */
	PART_NR,
};

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
	struct batch b;			/* its in-task questions and answers */
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
	int stop_waited;		/* its parent had collected the stop (stop.c) */
	uint64_t stop_query;		/* where the parent's answer lands in its batch */
	int exit_code;			/* a zombie's wait status */
	int64_t nr_fds;			/* its fds (fdinfo's check) */
	int64_t restore_own;		/* criu's own fds in it at restore, at most (mm) */
	struct proc_status status;
	struct proc_stat stat;
	struct proc_maps maps;		/* smaps, read after the task was cured */
	struct user_regs_struct regs;	/* as the task stopped */
	uint64_t sigmask;
	void *priv[PART_NR];		/* a part's own data from prepare to dump */
};

struct rst_ctx {
	int dirfd;
	const struct opts *opts;
	void *shared[PART_NR];		/* a part's tree-wide data during a restore */
	unsigned long root_flags;	/* extra clone3 flags for the root (CLONE_NEW*) */
	/*
	 * fds criu opened before the first fork (objects several tasks share):
	 * every task inherits them and keeps them until its batch closes them.
	 * They are numbered above every fd of every task (rst_inherit_fd).
	 */
	int *inherited;
	int nr_inherited;
	int next_inherit;
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
};

struct part {
	const char *name;
	enum part_id id;
	/*
	 * dump: each task once the whole tree is frozen, before any check
	 * (the first takes the dump's moment, timens.c): the one place a
	 * task may still run a few instructions of its own (vdso.c)
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
	 * restore, in the new task, first of all, before it creates its
	 * children: the namespaces it lives in and they are born into.
	 */
	int (*early)(struct rst_ctx *rc, struct rtask *t);
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
	void (*release)(struct rtask *t);
	void (*release_tree)(struct rst_ctx *rc);
};

extern const struct part *const parts[PART_NR];

/*
 * In the new task: move @fd to a slot the task does not use, at the top of
 * the fd table. A private fd stays until the batch closes it; a parked one
 * is the caller's to close.
 */
int rst_private_fd(struct rtask *t, int fd);
int rst_park_fd(struct rtask *t, int fd);
/* In criu before the fork: move @fd where every task will find it; returns the new fd. */
int rst_inherit_fd(struct rst_ctx *rc, int fd);

#endif
