// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds (pidfd_open(), clone(CLONE_PIDFD)): a kind of open file for the fd
 * table (file.c).
 *
 * The fdinfo names the process ("Pid:", as criu's /proc sees it; -1 once
 * it exited and was reaped). It must be a task of the dumped tree, the root
 * or one of its descendants, or the restore could not point the pidfd at
 * it; a pidfd of a process elsewhere is refused by name. One of a reaped
 * process refers to nothing that can come back, and needs nothing to: it
 * polls readable, signals fail with ESRCH, as before.
 *
 * Restore opens the pidfd in the task that holds it, with pidfd_open() of
 * the process's pid in the tree's pid namespace. That process may not
 * exist yet (a sibling forked later): every task of the tree is forked
 * before any of them installs its fds, whatever the others do, so the task
 * waits for it. A reaped process's pidfd is made by cloning a child that
 * exits at once, without an exit signal the task could see, and reaping it.
 * A pidfd that several tasks share can't be opened by criu before the
 * first fork, as shared descriptions are: its process does not exist yet.
 * The task that showed it first at the dump makes it; the others take that
 * very description from it with pidfd_getfd(), once it is in place there.
 * A pidfd of a thread (PIDFD_THREAD) other than the leader is refused: the
 * thread is made only by the leader's batch, after the fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

#include "core/file.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/file-fown.h"
#include "pstree.pb-c.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* Linux 6.9 */
#endif

/* How long a task waits for the process its pidfd names to be forked. */
#define PIDFD_WAIT_MS	30000

static int pidfd_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[pidfd]");
}

/* The fdinfo's "Pid:" (criu's view; -1: reaped) and whether it is a thread's. */
static int pidfd_target(const struct fd_dump *f, pid_t *pid, int *thread)
{
	const char *p = proc_fdinfo_field(f->fdinfo, "Pid:");
	const char *fl = proc_fdinfo_field(f->fdinfo, "flags:");
	unsigned int flags;

	if (!p || sscanf(p, "%d", pid) != 1 || !fl || sscanf(fl, "%o", &flags) != 1) {
		pr_err("Task %d: the fdinfo of pidfd %d does not name its process", f->pid, f->fd);
		return -1;
	}
	*thread = !!(flags & PIDFD_THREAD);
	return 0;
}

static int pidfd_check(const struct fd_dump *f)
{
	struct proc_status st;
	int thread, ret = 0;
	pid_t pid;

	if (pidfd_target(f, &pid, &thread))
		return -1;
	if (pid < 0)
		return 0;
	/* a thread's parent is its leader's: the tree is walked from the leader */
	if (proc_read_status(pid, &st)) {
		pr_err("Task %d: can't read process %d of its pidfd %d", f->pid, pid, f->fd);
		return -1;
	}
	if (!file_in_tree(st.tgid, f->opts->pid)) {
		pr_err("Task %d: fd %d is a pidfd of process %d, which is outside the dumped tree",
		       f->pid, f->fd, pid);
		ret = -1;
	} else if (thread && st.tgid != pid) {
		pr_err("Task %d: fd %d is a pidfd of thread %d of process %d (PIDFD_THREAD), "
		       "which is not supported for a thread other than the leader", f->pid,
		       f->fd, pid, st.tgid);
		ret = -1;
	}
	proc_status_free(&st);
	return ret;
}

static int pidfd_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	PidfdEntry *e;
	int thread;
	pid_t pid, ns_pid = 0;

	if (pidfd_target(f, &pid, &thread))
		return -1;
	if (pid > 0) {
		ns_pid = proc_ns_pid(pid);
		if (!ns_pid) {
			pr_err("Task %d: can't find process %d of pidfd %d in its pid namespace",
			       f->pid, pid, f->fd);
			return -1;
		}
	}
	e = xmalloc(sizeof(*e));
	if (!e)
		return -1;
	pidfd_entry__init(e);
	e->pid = ns_pid;
	e->has_thread = 1;
	e->thread = thread;
	e->has_holder = e->has_holder_fd = 1;
	e->holder = f->ns_pid;
	e->holder_fd = f->fd;
	d->pidfd = e;
	pr_debug("Task %d: fd %d is a pidfd of %d (%d here)%s", f->pid, f->fd, ns_pid, pid,
		 pid < 0 ? ", reaped" : "");
	return 0;
}

static void pidfd_free(FileDesc *d)
{
	free(d->pidfd);
	d->pidfd = NULL;
}

/* ------------------------------------------------------------- restore */

static int pstree_has(struct rst_ctx *rc, uint32_t pid)
{
	PstreeEntry *pe = NULL;
	int found = 0;
	size_t i;

	if (img_read(rc->dirfd, IMG_PSTREE, 0, (void **)&pe, 0) < 0)
		return -1;
	for (i = 0; i < pe->n_tasks && !found; i++)
		found = pe->tasks[i]->pid == pid;
	img_free(IMG_PSTREE, pe);
	return found;
}

static int pidfd_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	int known = 1;

	if (!d->pidfd || !d->pidfd->has_holder || d->pidfd->holder_fd > INT32_MAX) {
		pr_err("Task %d: image files.img has a pidfd #%u without its process or holder",
		       pid, d->id);
		return -1;
	}
	if (d->pidfd->pid)
		known = pstree_has(rc, d->pidfd->pid);
	if (known > 0)
		known = pstree_has(rc, d->pidfd->holder);
	if (known < 0)
		return -1;
	if (!known) {
		pr_err("Task %d: image files.img has a pidfd #%u of process %u held by %u, "
		       "which are not both tasks of the tree", pid, d->id, d->pidfd->pid,
		       d->pidfd->holder);
		return -1;
	}
	return 0;
}

/* A pidfd of a process that is gone: a child's that exits at once, reaped. */
static int open_reaped(pid_t pid)
{
	struct clone_args args = { 0 };
	int fd = -1;
	siginfo_t si;
	long child;

	args.flags = CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)&fd;
	args.exit_signal = 0;		/* no SIGCHLD for the task to find pending */
	child = syscall(SYS_clone3, &args, sizeof(args));
	if (child == 0)
		syscall(SYS_exit, 0);
	if (child < 0) {
		pr_perror("Task %d: can't make a process to stand for a reaped one", pid);
		return -1;
	}
	while (waitid(P_PID, child, &si, WEXITED | __WALL) < 0)
		if (errno != EINTR) {
			pr_perror("Task %d: can't reap its stand-in process %ld", pid, child);
			close(fd);
			return -1;
		}
	return fd;
}

/*
 * pidfd_open() of @target, once it was forked (ESRCH until then: every
 * task of the tree is forked before any installs its fds, so it comes).
 */
static int open_pid(pid_t pid, pid_t target, unsigned int flags)
{
	struct timespec ms = { 0, 1000000 };
	int fd = -1, waited;

	for (waited = 0; waited < PIDFD_WAIT_MS; waited++) {
		fd = syscall(SYS_pidfd_open, target, flags);
		if (fd >= 0 || errno != ESRCH)
			break;
		nanosleep(&ms, NULL);
	}
	if (fd < 0)
		pr_perror("Task %d: can't open a pidfd of process %d%s", pid, target,
			  errno == ESRCH ? " (it never appeared)" : "");
	return fd;
}

/* The last NSpid of pidfd @fd: its process in its own namespace, -1 reaped; -2: no pidfd. */
static long pidfd_ns_pid(int fd)
{
	char path[64], *buf;
	const char *p;
	long last = -2;
	char *end;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf = read_file(-1, path, NULL);
	p = buf ? proc_fdinfo_field(buf, "NSpid:") : NULL;
	while (p && *p && *p != '\n') {
		last = strtol(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	free(buf);
	return last;
}

/*
 * The holder's description, from its fd once it is in place there: until
 * then that fd is empty or one of criu's, which is no pidfd of the process.
 */
static int fetch_from_holder(pid_t pid, const FileDesc *d)
{
	long want = d->pidfd->pid ? (long)d->pidfd->pid : -1;
	struct timespec ms = { 0, 1000000 };
	int holder, fd = -1, low, waited;

	holder = open_pid(pid, d->pidfd->holder, 0);
	if (holder < 0)
		return -1;
	for (waited = 0; waited < PIDFD_WAIT_MS; waited++) {
		fd = syscall(SYS_pidfd_getfd, holder, d->pidfd->holder_fd, 0);
		if (fd >= 0 && pidfd_ns_pid(fd) == want)
			break;
		if (fd < 0 && errno != EBADF)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		nanosleep(&ms, NULL);
	}
	if (fd < 0)
		pr_perror("Task %d: can't take pidfd #%u from fd %u of task %u", pid, d->id,
			  d->pidfd->holder_fd, d->pidfd->holder);
	close(holder);
	if (fd < 0)
		return -1;
	/* the lowest free fd, as the fd table wants (install_fd()) */
	low = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (low < 0 || low > fd) {
		if (low >= 0)
			close(low);
		return fd;
	}
	close(fd);
	return low;
}

static int pidfd_open_file(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	unsigned int flags = (d->flags & O_NONBLOCK) | (d->pidfd->thread ? PIDFD_THREAD : 0);
	int fd;

	if ((uint32_t)pid != d->pidfd->holder)
		return fetch_from_holder(pid, d);
	if (d->pidfd->pid)
		return open_pid(pid, d->pidfd->pid, flags);
	fd = open_reaped(pid);
	if (fd >= 0 && (d->flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK)) {
		pr_perror("Task %d: can't make pidfd #%u non-blocking", pid, d->id);
		close(fd);
		return -1;
	}
	return fd;
}

const struct file_kind fk_pidfd = {
	.name = "pidfd",
	.kind = FILE_KIND__FILE_PIDFD,
	.match = pidfd_match,
	.check = pidfd_check,
	.dump = pidfd_dump,
	.free = pidfd_free,
	.validate = pidfd_validate,
	.open = pidfd_open_file,
	.each_task = 1,
};
