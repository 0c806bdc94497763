/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_LIMITS_H
#define CRIU_CORE_LIMITS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The bounds a checkpoint is held to, one function each, called by both
 * sides: the dump checks a task before it changes anything (a task past
 * one is refused and goes on as it was), the restore checks the images
 * before it creates anything. So no dump is taken that its restore would
 * refuse. The bounds are the kernel's: its fixed maxima, and this
 * machine's sysctls and criu's own rlimits (read once); where criu needs
 * a little more than the task had (an area of its own), that is said.
 * Each refusal is one error line: task, resource, count, bound, why.
 */

/* PID_MAX_LIMIT of a 64-bit kernel: no pid or tid is above it */
#define LIMIT_PID	(1 << 22)
/* MAX_LFS_FILESIZE: shmem objects, memfds, System V segments */
#define LIMIT_FILE_SIZE	INT64_MAX

/* A pid or tid of a task (@what names it): 1 ... pid_max - 1. */
int limit_pid(pid_t task, const char *what, int64_t pid);
/* Threads of a task: at most kernel.threads-max. */
int limit_threads(pid_t task, int64_t nr);
/* Tasks of a tree: at most kernel.pid_max - 1 (each takes a pid). */
int limit_tasks(int64_t nr);
/*
 * Memory areas of a task: with the one criu maps in it at dump (its
 * scratch area) and at restore (its trampoline), at most vm.max_map_count.
 */
int limit_areas(pid_t task, int64_t nr);
/*
 * File descriptors: each below the most a task restored by this criu can
 * use (criu's RLIMIT_NOFILE hard limit, or fs.nr_open where criu may
 * raise its own, CAP_SYS_RESOURCE); @top the highest, @nr how many.
 */
int limit_fds(pid_t task, int64_t nr, int64_t top);
/*
 * The fds a task holds while it is restored, together below the same
 * bound: its own @task_fds and criu's, which are those criu opens for the
 * whole tree (@shared: each new task inherits them all until its batch
 * closes them) and its own few (@own: the images directory, the log, page
 * stores, the executable, one per mapped file or object). A task whose fd
 * table is full up to that bound leaves criu no room.
 */
int limit_fd_room(pid_t task, int64_t task_fds, int64_t shared, int64_t own);
/*
 * An inotify watch descriptor: restore gets wd N by adding and removing
 * N - 1 dummy watches (the kernel has no way to ask for one), a few
 * microseconds each; above LIMIT_INOTIFY_WD that is more than a restore
 * should take.
 */
#define LIMIT_INOTIFY_WD	(1 << 20)
int limit_inotify_wd(pid_t task, int fd, int64_t wd);

/*
 * POSIX timer ids: before Linux 6.16 (no PR_TIMER_CREATE_RESTORE_IDS) the
 * kernel hands them out in order, so restore makes id N by creating every
 * id below it and dropping the fillers afterwards; each timer takes one
 * of its user's RLIMIT_SIGPENDING slots while it exists. @room: the slots
 * free now (SigQ). On a kernel that has the prctl, nothing to check.
 */
int limit_timer_ids(pid_t task, int64_t timers, int64_t top_id, int64_t room);

/* The values in use (tests, messages): sysctls and criu's fd limit. */
struct limits {
	int64_t pid_max;	/* kernel.pid_max */
	int64_t threads_max;	/* kernel.threads-max */
	int64_t max_map_count;	/* vm.max_map_count */
	int64_t nofile;		/* fds a restored task may have: see limit_fds() */
};
const struct limits *limits_get(void);

#endif
