// SPDX-License-Identifier: GPL-2.0
/*
 * inotify: a kind of open file for the fd table (file.c).
 *
 * /proc/PID/fdinfo lists each watch: its watch descriptor (wd), mask, the
 * watched inode and a file handle for it. The path comes from the handle
 * (task/fhandle.c), or the irmap (task/irmap.c). A watch on a deleted
 * file the task still holds (an fd, an area: a ghost the shmem part saves)
 * is added again on the file the restore makes of it; one on a file under
 * another mount of the tree's own mount namespace, through the fd the
 * mount part opens below it (task/mounts.h); one on a file gone otherwise
 * is refused.
 *
 * Restore adds the watches again by path, in wd order. The kernel hands
 * out wds one after the other (cyclically, never reusing one soon), so a
 * gap is skipped with dummy watches, each removed at once; their removal
 * queues IN_IGNORED events, read away before the task runs. Events that
 * were queued and not read at dump time are lost (the kernel does not show
 * them), as are events between dump and restore; the dump warns about the
 * former. The next wd a new watch gets may be lower than it would have been.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "proc/proc.h"
#include "task/fhandle.h"
#include "task/mounts.h"
#include "task/ptrace.h"
#include "task/rst.h"

/* filesystems that are always there, as dummy watches */
static const char *const dummies[] = { "/", "/proc", "/dev", "/sys", "/tmp", "/etc", "/usr" };

static int inotify_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:inotify");
}

/* ------------------------------------------------------------------ dump */

struct wd_line {
	unsigned int wd, mask, sdev;
	unsigned long ino;
	struct fhandle h;
};

static int parse_line(const char *p, struct wd_line *w)
{
	if (sscanf(p, "inotify wd:%x ino:%lx sdev:%x mask:%x", &w->wd, &w->ino, &w->sdev,
		   &w->mask) != 4)
		return -1;
	/* a malformed handle counts as none: the watch is refused by name */
	fhandle_parse(p, &w->h);
	return 0;
}

/* The path of the watched inode, and how the restore reaches it (task/fhandle.h). */
static int watch_path(const struct fd_dump *f, const struct proc_mounts *ms,
		      const struct wd_line *w, struct stat *st, struct fhandle_mark *m)
{
	char what[64];

	snprintf(what, sizeof(what), "inotify fd %d, wd %u", f->fd, w->wd);
	return fhandle_mark_path(f->pid, ms, w->sdev, w->ino, &w->h, f->opts, what, m, st);
}

static int add_wd(InotifyEntry *e, const struct wd_line *w, const struct fhandle_mark *m,
		  const struct stat *st)
{
	char *path = m->path;
	InotifyWdEntry *n;
	size_t i;

	n = xmalloc(sizeof(*n));
	if (xgrow(e->wds, e->n_wds) || !n) {
		free(n);
		free(path);
		return -1;
	}
	inotify_wd_entry__init(n);
	n->wd = w->wd;
	n->mask = w->mask;
	n->path = path;
	n->ino = st->st_ino;
	n->dev = st->st_dev;
	n->has_deleted = m->deleted;
	n->deleted = m->deleted;
	n->has_hidden = m->hidden > 0;
	n->hidden = m->hidden;
	/* in wd order */
	for (i = e->n_wds; i > 0 && e->wds[i - 1]->wd > n->wd; i--)
		e->wds[i] = e->wds[i - 1];
	e->wds[i] = n;
	e->n_wds++;
	return 0;
}

static void warn_pending(const struct fd_dump *f)
{
	int queued = ptrace_fd_queued(f->pid, f->fd);

	if (queued)
		pr_warn("Task %d: inotify fd %d has %d bytes of events not read yet; they are "
			"not saved", f->pid, f->fd, queued);
}

static int inotify_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	InotifyEntry *e = xzalloc(sizeof(*e));
	struct proc_mounts ms = { 0 };
	struct fhandle_mark m;
	struct wd_line w;
	struct stat st;
	const char *p;
	int ret = -1;

	if (!e)
		return -1;
	inotify_entry__init(e);
	d->inotify = e;
	for (p = f->fdinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "inotify ", 8))
			continue;
		if (parse_line(p, &w)) {
			pr_err("Task %d: can't parse a watch of inotify fd %d", f->pid, f->fd);
			goto out;
		}
		/* read once per fd, and only for an fd that watches something */
		if (!ms.buf && proc_read_mountinfo(f->pid, &ms))
			goto out;
		if (watch_path(f, &ms, &w, &st, &m) || add_wd(e, &w, &m, &st))
			goto out;
		pr_debug("Task %d: inotify fd %d: wd %u on %s, mask %#x", f->pid, f->fd, w.wd,
			 m.path, w.mask);
	}
	warn_pending(f);
	ret = 0;
out:
	proc_mounts_free(&ms);
	return ret;
}

/* Before anything is changed: every wd one the restore can make again. */
static int inotify_check(const struct fd_dump *f)
{
	struct wd_line w;
	const char *p;

	for (p = f->fdinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "inotify ", 8) && !parse_line(p, &w) &&
		    limit_inotify_wd(f->pid, f->fd, w.wd))
			return -1;
	return 0;
}

static void inotify_free(FileDesc *d)
{
	size_t i;

	if (!d->inotify)
		return;
	for (i = 0; i < d->inotify->n_wds; i++) {
		free(d->inotify->wds[i]->path);
		free(d->inotify->wds[i]);
	}
	free(d->inotify->wds);
	free(d->inotify);
	d->inotify = NULL;
}

/* --------------------------------------------------------------- restore */

static int inotify_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const InotifyEntry *e = d->inotify;
	size_t i;

	if (!e)
		goto bad;
	for (i = 0; i < e->n_wds; i++) {
		if (!e->wds[i]->wd || e->wds[i]->path[0] != '/' ||
		    (i && e->wds[i]->wd <= e->wds[i - 1]->wd))
			goto bad;
		if (limit_inotify_wd(pid, -1, e->wds[i]->wd))
			return -1;
		if (e->wds[i]->deleted && !rst_object_known(rc, e->wds[i]->dev, e->wds[i]->ino)) {
			pr_err("Task %d: inotify #%u watches the deleted file %s, which the "
			       "images do not hold (shmem.img)", pid, d->id, e->wds[i]->path);
			return -1;
		}
	}
	return 0;
bad:
	pr_err("Task %d: image files.img has an invalid inotify #%u", pid, d->id);
	return -1;
}

/* A path to watch for a moment: none of the instance's own inodes. */
static const char *pick_dummy(const InotifyEntry *e)
{
	struct stat st;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(dummies); i++) {
		if (stat(dummies[i], &st))
			continue;
		for (j = 0; j < e->n_wds; j++) {
			struct stat ws;

			if (!stat(e->wds[j]->path, &ws) && ws.st_ino == st.st_ino &&
			    ws.st_dev == st.st_dev)
				break;
		}
		if (j == e->n_wds)
			return dummies[i];
	}
	return NULL;
}

/* Dummy watches until the next wd the kernel hands out is @wd. */
static int skip_to(pid_t pid, int fd, const InotifyEntry *e, int *next, unsigned int wd)
{
	const char *dummy = NULL;
	int got;

	while ((unsigned int)*next < wd) {
		if (!dummy)
			dummy = pick_dummy(e);
		if (!dummy) {
			pr_err("Task %d: no path to skip inotify wd %d with", pid, *next);
			return -1;
		}
		got = inotify_add_watch(fd, dummy, IN_DONT_FOLLOW | IN_ATTRIB);
		if (got < 0 || inotify_rm_watch(fd, got)) {
			pr_perror("Task %d: can't skip inotify wd %d", pid, *next);
			return -1;
		}
		if (got != *next) {
			pr_err("Task %d: inotify gave wd %d instead of %d", pid, got, *next);
			return -1;
		}
		(*next)++;
	}
	return 0;
}

/* Reads away the IN_IGNORED events of the dummy watches. */
static int drain(pid_t pid, int fd)
{
	char buf[4096];
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return -1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (fcntl(fd, F_SETFL, flags)) {
		pr_perror("Task %d: can't set the flags of an inotify instance", pid);
		return -1;
	}
	return 0;
}

/*
 * Watch @w again: by its path; a deleted file on the one criu made of it;
 * one under another mount through the fd the mount part opened below it.
 */
static int add_watch(struct rst_ctx *rc, pid_t pid, int fd, const InotifyWdEntry *w)
{
	char self[64];
	int obj, ret;

	/* the path leads to the watched inode itself, a symlink too */
	if (!w->deleted && !w->hidden)
		return inotify_add_watch(fd, w->path, w->mask | IN_DONT_FOLLOW);
	obj = w->deleted ? rst_object_fd(rc, w->dev, w->ino) :
	      mnt_open_hidden(pid, w->hidden, w->path);
	if (obj < 0)
		return -1;
	/* the magic link leads to the file, followed */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
	ret = inotify_add_watch(fd, self, w->mask);
	if (w->hidden)
		close(obj);
	return ret;
}

static int inotify_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const InotifyEntry *e = d->inotify;
	int fd, got, next = 1, skipped = 0;
	size_t i;

	fd = inotify_init1(IN_CLOEXEC | (d->flags & O_NONBLOCK ? IN_NONBLOCK : 0));
	if (fd < 0) {
		pr_perror("Task %d: can't create an inotify instance", pid);
		return -1;
	}
	for (i = 0; i < e->n_wds; i++) {
		const InotifyWdEntry *w = e->wds[i];

		skipped |= (unsigned int)next < w->wd;
		if (skip_to(pid, fd, e, &next, w->wd))
			goto err;
		got = add_watch(rc, pid, fd, w);
		if (got < 0) {
			pr_perror("Task %d: can't watch %s again (inotify wd %u)", pid, w->path,
				  w->wd);
			goto err;
		}
		if ((unsigned int)got != w->wd) {
			pr_err("Task %d: watching %s again gave inotify wd %d, not %u", pid,
			       w->path, got, w->wd);
			goto err;
		}
		next = got + 1;
	}
	if (skipped && drain(pid, fd))
		goto err;
	return fd;
err:
	close(fd);
	return -1;
}

const struct file_kind fk_inotify = {
	.name = "inotify",
	.kind = FILE_KIND__FILE_INOTIFY,
	.match = inotify_match,
	.check = inotify_check,
	.dump = inotify_dump,
	.free = inotify_free,
	.validate = inotify_validate,
	.open = inotify_open,
};
