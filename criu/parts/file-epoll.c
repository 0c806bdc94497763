// SPDX-License-Identifier: GPL-2.0
/*
 * epoll: a kind of open file for the fd table (file.c).
 *
 * An epoll instance watches (file, fd number) pairs: /proc/PID/fdinfo
 * lists each watch with its fd number, events and data. A watch names a
 * file, not an fd: if the task closed that fd while another reference
 * kept the file open, the watch stays, and the number may even have been
 * reused for another file. So every watch is checked with
 * kcmp(KCMP_EPOLL_TFD): the file the epoll watches under number N is the
 * one fd N holds, or else one another fd M of the task holds (the watch
 * is saved "via" M). The first task (pstree order) holding the instance
 * where every watched file is among its fds is its owner; when no task
 * holds them all (a file kept open only by another process), the dump is
 * refused, naming the watch.
 *
 * Restore: the instance is created empty (by its task, or by criu when
 * tasks share it), and its owner adds the watches back once all of its
 * own fds are in place; a watch saved via M is added under its own number
 * N with fd M's file put at N for that moment (and whatever N holds put
 * back after). Readiness is the kernel's to find again: a ready
 * fd is reported by the restored instance as by the old one. An
 * edge-triggered watch whose edge was already reported is reported once
 * more if its file is still ready; a one-shot watch that fired comes back
 * armed for EPOLLERR and EPOLLHUP only (the kernel adds those to any watch).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"

static int epoll_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[eventpoll]");
}

static int parse_watches(const struct fd_dump *f, EpollEntry *e)
{
	const char *p;
	EpollTfdEntry *w;
	unsigned int tfd, events;
	unsigned long long data;

	for (p = f->fdinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "tfd:", 4))
			continue;
		if (sscanf(p, "tfd: %u events: %x data: %llx", &tfd, &events, &data) != 3) {
			pr_err("Task %d: can't parse a watch of epoll fd %d", f->pid, f->fd);
			return -1;
		}
		if (xgrow(e->tfds, e->n_tfds))
			return -1;
		w = xmalloc(sizeof(*w));
		if (!w)
			return -1;
		epoll_tfd_entry__init(w);
		w->tfd = tfd;
		w->events = events;
		w->data = data;
		e->tfds[e->n_tfds++] = w;
	}
	return 0;
}

/* Is watch @i of epoll fd @efd of @pid's file the one fd @fd of @pid holds? */
static int same_file(pid_t pid, int efd, const EpollEntry *e, size_t i, int fd)
{
	struct kcmp_epoll_slot slot = { .efd = efd, .tfd = e->tfds[i]->tfd };
	size_t j;

	/* toff: which of the watches under this number (fdinfo's order) */
	for (j = 0; j < i; j++)
		slot.toff += e->tfds[j]->tfd == slot.tfd;
	return !syscall(SYS_kcmp, pid, pid, KCMP_EPOLL_TFD, fd, (unsigned long)&slot);
}

/* An fd of @pid that holds the file of watch @i, or -1. */
static int holder_of(pid_t pid, int efd, const EpollEntry *e, size_t i)
{
	char path[64];
	struct dirent *de;
	int fd, found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && found < 0 && (de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd != efd && same_file(pid, efd, e, i, fd))
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * Does task @pid hold the file of every watch of its epoll fd @efd, at
 * fd tfd or elsewhere (then noted in the watch's via)? Returns the index
 * of the first watch whose file it does not hold, or -1.
 */
static int bad_watch(pid_t pid, int efd, EpollEntry *e)
{
	size_t i;
	int via;

	for (i = 0; i < e->n_tfds; i++) {
		e->tfds[i]->has_via = 0;
		if (same_file(pid, efd, e, i, e->tfds[i]->tfd))
			continue;
		via = holder_of(pid, efd, e, i);
		if (via < 0)
			return i;
		e->tfds[i]->has_via = 1;
		e->tfds[i]->via = via;
	}
	return -1;
}

static void log_via(pid_t pid, int efd, const EpollEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_tfds; i++)
		if (e->tfds[i]->has_via)
			pr_info("Task %d: epoll fd %d watches fd %u, closed or reused: its file is "
				"fd %u's", pid, efd, e->tfds[i]->tfd, e->tfds[i]->via);
}

static int epoll_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	EpollEntry *e = xzalloc(sizeof(*e));

	if (!e)
		return -1;
	epoll_entry__init(e);
	d->epoll = e;
	if (parse_watches(f, e))
		return -1;
	if (bad_watch(f->pid, f->fd, e) < 0) {
		e->owner = f->ns_pid;
		log_via(f->pid, f->fd, e);
	}
	pr_debug("Task %d: epoll fd %d: %zu watches%s", f->pid, f->fd, e->n_tfds,
		 e->owner ? "" : ", not all of its fds");
	return 0;
}

/* Another task (or fd) holds it: maybe it holds all of the watched files. */
static int epoll_dump_more(const struct fd_dump *f, FileDesc *d)
{
	if (!d->epoll->owner && bad_watch(f->pid, f->fd, d->epoll) < 0) {
		d->epoll->owner = f->ns_pid;
		log_via(f->pid, f->fd, d->epoll);
	}
	return 0;
}

static int epoll_dump_done(struct file_ref *files, size_t n)
{
	EpollEntry *e;
	size_t i;
	int w;

	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_EPOLL || files[i].d->epoll->owner)
			continue;
		e = files[i].d->epoll;
		w = bad_watch(files[i].pid, files[i].fd, e);
		pr_err("Task %d: epoll fd %d watches fd %u, which the task has closed or "
		       "replaced, and the file is kept open only outside the task (no fd of "
		       "a task holding the epoll has it), which is not supported",
		       files[i].pid, files[i].fd, w >= 0 ? e->tfds[w]->tfd : 0);
		return -1;
	}
	return 0;
}

static void epoll_free(FileDesc *d)
{
	size_t i;

	if (!d->epoll)
		return;
	for (i = 0; i < d->epoll->n_tfds; i++)
		free(d->epoll->tfds[i]);
	free(d->epoll->tfds);
	free(d->epoll);
	d->epoll = NULL;
}

static int epoll_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	size_t i, j;

	if (!d->epoll || !d->epoll->owner) {
		pr_err("Task %d: image files.img has an epoll #%u without its owner", pid, d->id);
		return -1;
	}
	/* under one number one file at most is at that number itself */
	for (i = 0; i < d->epoll->n_tfds; i++)
		for (j = 0; j < i; j++)
			if (d->epoll->tfds[i]->tfd == d->epoll->tfds[j]->tfd &&
			    !d->epoll->tfds[i]->has_via && !d->epoll->tfds[j]->has_via) {
				pr_err("Task %d: image files.img has epoll #%u watching fd %u "
				       "twice", pid, d->id, d->epoll->tfds[i]->tfd);
				return -1;
			}
	return 0;
}

static int epoll_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0) {
		pr_perror("Task %d: can't create an epoll instance", pid);
		return -1;
	}
	if (fcntl(fd, F_SETFL, d->flags & O_NONBLOCK)) {
		pr_perror("Task %d: can't set the flags of an epoll instance", pid);
		close(fd);
		return -1;
	}
	return fd;
}

static pid_t epoll_installer(const FileDesc *d)
{
	return d->epoll->owner;
}

/*
 * A watch under number tfd of the file fd via holds: that file at tfd for
 * the add, then tfd as it was (closed, or its own file with its own
 * close-on-exec flag). The watch stays: it goes with its file, not its fd.
 */
static int add_via(pid_t pid, int efd, const EpollTfdEntry *w, struct epoll_event *ev)
{
	int fl = fcntl(w->tfd, F_GETFD), saved = -1, ret;

	if (fl >= 0) {
		saved = fcntl(w->tfd, F_DUPFD_CLOEXEC, 0);
		if (saved < 0)
			goto err;
	}
	if (dup2(w->via, w->tfd) < 0)
		goto err;
	ret = epoll_ctl(efd, EPOLL_CTL_ADD, w->tfd, ev);
	if (saved >= 0) {
		if (dup3(saved, w->tfd, fl & FD_CLOEXEC ? O_CLOEXEC : 0) < 0)
			goto err;
		close(saved);
	} else {
		close(w->tfd);
	}
	return ret;
err:
	pr_perror("Task %d: can't put fd %u's file at fd %u for epoll fd %d", pid, w->via,
		  w->tfd, efd);
	if (saved >= 0)
		close(saved);
	return -1;
}

static int add_watch(pid_t pid, int fd, const EpollTfdEntry *w)
{
	struct epoll_event ev = { .events = w->events, .data.u64 = w->data };

	if (w->has_via ? add_via(pid, fd, w, &ev) : epoll_ctl(fd, EPOLL_CTL_ADD, w->tfd, &ev)) {
		pr_perror("Task %d: can't watch fd %u%s (events %#x) with epoll fd %d", pid,
			  w->tfd, w->has_via ? " (its file at another fd)" : "", w->events, fd);
		return -1;
	}
	return 0;
}

/* The watches under their own number first: a watch via another fd moves what is there. */
static int epoll_install(pid_t pid, int fd, const FileDesc *d)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < d->epoll->n_tfds; i++)
			if (d->epoll->tfds[i]->has_via == pass &&
			    add_watch(pid, fd, d->epoll->tfds[i]))
				return -1;
	return 0;
}

const struct file_kind fk_epoll = {
	.name = "epoll",
	.kind = FILE_KIND__FILE_EPOLL,
	.match = epoll_match,
	.dump = epoll_dump,
	.dump_more = epoll_dump_more,
	.dump_done = epoll_dump_done,
	.free = epoll_free,
	.validate = epoll_validate,
	.open = epoll_open,
	.installer = epoll_installer,
	.install = epoll_install,
};
