// SPDX-License-Identifier: GPL-2.0
/*
 * epoll: a kind of open file for the fd table (file.c).
 *
 * An epoll instance watches (file, fd number) pairs: /proc/PID/fdinfo
 * lists each watch with its fd number, events and data. A watch names a
 * file, not an fd: if the task closed that fd while another reference
 * kept the file open, the watch stays, and the number may even have been
 * reused for another file. So every watch is checked with
 * kcmp(KCMP_EPOLL_TFD): the file the epoll watches under number N must be
 * the one fd N holds. The first task (pstree order) holding the instance
 * where all watches pass is its owner; when no task passes, the dump is
 * refused, naming the watch.
 *
 * Restore: the instance is created empty (by its task, or by criu when
 * tasks share it), and its owner adds the watches back once all of its
 * own fds are in place. Readiness is the kernel's to find again: a ready
 * fd is reported by the restored instance as by the old one. An
 * edge-triggered watch whose edge was already reported is reported once
 * more if its file is still ready; a one-shot watch that fired comes back
 * armed for EPOLLERR and EPOLLHUP only (the kernel adds those to any watch).
 */
#include <errno.h>
#include <stdio.h>
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

/*
 * Does fd tfd of @pid hold the file each watch of its epoll fd @efd
 * watches? Returns the index of the first watch that fails, or -1.
 */
static int bad_watch(pid_t pid, int efd, const EpollEntry *e)
{
	struct kcmp_epoll_slot slot = { .efd = efd };
	size_t i, j;

	for (i = 0; i < e->n_tfds; i++) {
		slot.tfd = e->tfds[i]->tfd;
		/* toff: which of the watches under this number (fdinfo's order) */
		slot.toff = 0;
		for (j = 0; j < i; j++)
			slot.toff += e->tfds[j]->tfd == slot.tfd;
		/* two watches under one number: one of them is of a closed fd */
		if (slot.toff || syscall(SYS_kcmp, pid, pid, KCMP_EPOLL_TFD, slot.tfd,
					 (unsigned long)&slot))
			return i;
	}
	return -1;
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
	if (bad_watch(f->pid, f->fd, e) < 0)
		e->owner = f->ns_pid;
	pr_debug("Task %d: epoll fd %d: %zu watches%s", f->pid, f->fd, e->n_tfds,
		 e->owner ? "" : ", not all of its fds");
	return 0;
}

/* Another task (or fd) holds it: maybe all of its watches are fds there. */
static int epoll_dump_more(const struct fd_dump *f, FileDesc *d)
{
	if (!d->epoll->owner && bad_watch(f->pid, f->fd, d->epoll) < 0)
		d->epoll->owner = f->ns_pid;
	return 0;
}

static int epoll_dump_done(struct file_ref *files, size_t n)
{
	const EpollEntry *e;
	size_t i;
	int w;

	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_EPOLL || files[i].d->epoll->owner)
			continue;
		e = files[i].d->epoll;
		w = bad_watch(files[i].pid, files[i].fd, e);
		pr_err("Task %d: epoll fd %d watches fd %u, which the task has closed or "
		       "replaced (the file is still registered, kept open elsewhere), which "
		       "is not supported",
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
	for (i = 0; i < d->epoll->n_tfds; i++)
		for (j = 0; j < i; j++)
			if (d->epoll->tfds[i]->tfd == d->epoll->tfds[j]->tfd) {
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

static int epoll_install(pid_t pid, int fd, const FileDesc *d)
{
	struct epoll_event ev;
	size_t i;

	for (i = 0; i < d->epoll->n_tfds; i++) {
		const EpollTfdEntry *w = d->epoll->tfds[i];

		ev.events = w->events;
		ev.data.u64 = w->data;
		if (epoll_ctl(fd, EPOLL_CTL_ADD, w->tfd, &ev)) {
			pr_perror("Task %d: can't watch fd %u (events %#x) with epoll fd %d",
				  pid, w->tfd, w->events, fd);
			return -1;
		}
	}
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
