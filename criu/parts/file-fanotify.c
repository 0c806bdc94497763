// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify: a kind of open file for the fd table (file.c).
 *
 * /proc/PID/fdinfo shows the group's fanotify_init() flags and event flags,
 * then each mark: on an inode (its number, device and file handle), on a
 * mount (its id) or on a whole filesystem (its device), with its flags,
 * mask and ignore mask. Each is saved by a path in the task's view: the
 * inode's from its handle (task/fhandle.c), the mount's mount point, a
 * mount point of the filesystem. A mark on a file that is gone (deleted,
 * or on a filesystem without handles) is refused.
 *
 * Restore makes the group with the same flags and adds each mark by its
 * path: the mask, then the ignore mask (FAN_MARK_IGNORE where it was set
 * so, else FAN_MARK_IGNORED_MASK). Events queued and not read at dump time
 * are lost (the kernel does not show them), as are events between dump
 * and restore; the dump warns about the former. A permission event that was
 * read but not answered yet is answered by the kernel (allowed) when the
 * dumped group goes away.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "proc/proc.h"
#include "task/fhandle.h"
#include "task/mounts.h"
#include "task/ptrace.h"

/* kernels after 6.1's headers */
#ifndef FAN_MARK_EVICTABLE
#define FAN_MARK_EVICTABLE	0x00000200	/* Linux 5.19 */
#endif
#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE		0x00000400	/* Linux 6.0 */
#endif

#define MFLAGS_KNOWN	(FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE | FAN_MARK_IGNORE)

static int fanotify_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[fanotify]");
}

/* ------------------------------------------------------------------ dump */

struct mark_line {
	FanotifyMarkKind kind;
	unsigned int mnt_id, sdev, mflags, mask, ignored;
	unsigned long ino;
	struct fhandle h;
};

/* One "fanotify ..." mark line; 1 when it is one, 0 when not a mark, -1 if malformed. */
static int parse_mark(const char *p, struct mark_line *m)
{
	const char *rest;

	memset(m, 0, sizeof(*m));
	if (sscanf(p, "fanotify ino:%lx sdev:%x ", &m->ino, &m->sdev) == 2) {
		m->kind = FANOTIFY_MARK_KIND__FANOTIFY_INODE;
		/* a malformed handle counts as none: the mark is refused by name */
		fhandle_parse(p, &m->h);
	} else if (sscanf(p, "fanotify mnt_id:%x ", &m->mnt_id) == 1) {
		m->kind = FANOTIFY_MARK_KIND__FANOTIFY_MOUNT;
	} else if (sscanf(p, "fanotify sdev:%x ", &m->sdev) == 1) {
		m->kind = FANOTIFY_MARK_KIND__FANOTIFY_SB;
	} else {
		return 0;
	}
	rest = strstr(p, " mflags:");
	if (!rest || sscanf(rest, " mflags:%x mask:%x ignored_mask:%x", &m->mflags, &m->mask,
			    &m->ignored) != 3)
		return -1;
	return 1;
}

/*
 * The path a mark is saved by, and for an inode how the restore reaches
 * it (@fm, with its stat() in @st); NULL when it has none (logged).
 */
static char *mark_path(const struct fd_dump *f, struct proc_mounts *ms,
		       const struct mark_line *m, struct fhandle_mark *fm, struct stat *st)
{
	const struct proc_mount *pm;
	char what[64];

	memset(fm, 0, sizeof(*fm));
	switch (m->kind) {
	case FANOTIFY_MARK_KIND__FANOTIFY_INODE:
		snprintf(what, sizeof(what), "fanotify fd %d", f->fd);
		if (fhandle_mark_path(f->pid, ms, m->sdev, m->ino, &m->h, f->opts, what, fm, st))
			return NULL;
		return fm->path;
	case FANOTIFY_MARK_KIND__FANOTIFY_MOUNT:
		pm = proc_mount_by_id(ms, (int)m->mnt_id);
		if (!pm) {
			pr_err("Task %d: fanotify fd %d marks mount %u, which is not in its mount "
			       "namespace", f->pid, f->fd, m->mnt_id);
			return NULL;
		}
		return xstrdup(pm->mountpoint);
	default:
		pm = fhandle_mount_of(ms, m->sdev);
		if (!pm) {
			pr_err("Task %d: fanotify fd %d marks the filesystem of device %u:%u, "
			       "which is not mounted in its mount namespace", f->pid, f->fd,
			       KDEV_MAJOR(m->sdev), KDEV_MINOR(m->sdev));
			return NULL;
		}
		return xstrdup(pm->mountpoint);
	}
}

static int add_mark(FanotifyEntry *e, const struct mark_line *m, char *path,
		    const struct fhandle_mark *fm, const struct stat *st)
{
	FanotifyMarkEntry *n = xmalloc(sizeof(*n));

	if (!n || xgrow(e->marks, e->n_marks)) {
		free(n);
		free(path);
		return -1;
	}
	fanotify_mark_entry__init(n);
	n->kind = m->kind;
	n->mflags = m->mflags;
	n->mask = m->mask;
	n->ignored_mask = m->ignored;
	n->path = path;
	if (fm->deleted || fm->hidden > 0) {
		n->has_deleted = n->deleted = fm->deleted;
		n->has_hidden = fm->hidden > 0;
		n->hidden = fm->hidden;
		n->has_ino = n->has_dev = 1;
		n->ino = st->st_ino;
		n->dev = st->st_dev;
	}
	e->marks[e->n_marks++] = n;
	return 0;
}

static void warn_pending(const struct fd_dump *f)
{
	int queued = ptrace_fd_queued(f->pid, f->fd);

	if (queued)
		pr_warn("Task %d: fanotify fd %d has %d bytes of events not read yet; they are "
			"not saved", f->pid, f->fd, queued);
}

static int parse_group(const struct fd_dump *f, FanotifyEntry *e)
{
	const char *p = strstr(f->fdinfo, "fanotify flags:");

	if (!p || sscanf(p, "fanotify flags:%x event-flags:%x", &e->flags,
			 &e->event_flags) != 2) {
		pr_err("Task %d: can't read the flags of fanotify fd %d", f->pid, f->fd);
		return -1;
	}
	/* close-on-exec is each fd's own (the fd table restores it) */
	e->flags &= ~FAN_CLOEXEC;
	return 0;
}

static int fanotify_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	FanotifyEntry *e = xzalloc(sizeof(*e));
	struct proc_mounts ms = { 0 };
	struct fhandle_mark fm;
	struct mark_line m;
	struct stat st;
	const char *p;
	char *path;
	int ret = -1, r;

	if (!e)
		return -1;
	fanotify_entry__init(e);
	d->fanotify = e;
	if (parse_group(f, e))
		return -1;
	for (p = f->fdinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		r = parse_mark(p, &m);
		if (!r)
			continue;
		if (r < 0 || (m.mflags & ~MFLAGS_KNOWN)) {
			pr_err("Task %d: a mark of fanotify fd %d is one criu can't read (%.80s)",
			       f->pid, f->fd, p);
			goto out;
		}
		/* read once per fd, and only for an fd that marks something */
		if (!ms.buf && proc_read_mountinfo(f->pid, &ms))
			goto out;
		path = mark_path(f, &ms, &m, &fm, &st);
		if (!path || add_mark(e, &m, path, &fm, &st))
			goto out;
		pr_debug("Task %d: fanotify fd %d: mark (%d) on %s, mask %#x, ignored %#x", f->pid,
			 f->fd, m.kind, path, m.mask, m.ignored);
	}
	warn_pending(f);
	ret = 0;
out:
	proc_mounts_free(&ms);
	return ret;
}

static void fanotify_free(FileDesc *d)
{
	size_t i;

	if (!d->fanotify)
		return;
	for (i = 0; i < d->fanotify->n_marks; i++) {
		free(d->fanotify->marks[i]->path);
		free(d->fanotify->marks[i]);
	}
	free(d->fanotify->marks);
	free(d->fanotify);
	d->fanotify = NULL;
}

/* --------------------------------------------------------------- restore */

static int fanotify_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const FanotifyEntry *e = d->fanotify;
	const FanotifyMarkEntry *m;
	size_t i;

	if (!e || (e->flags & FAN_CLOEXEC))
		goto bad;
	for (i = 0; i < e->n_marks; i++) {
		m = e->marks[i];
		if (m->kind < FANOTIFY_MARK_KIND__FANOTIFY_INODE ||
		    m->kind > FANOTIFY_MARK_KIND__FANOTIFY_SB || m->path[0] != '/' ||
		    (m->mflags & ~MFLAGS_KNOWN) || (!m->mask && !m->ignored_mask) ||
		    ((m->deleted || m->hidden) &&
		     (m->kind != FANOTIFY_MARK_KIND__FANOTIFY_INODE || !m->has_ino || !m->has_dev)))
			goto bad;
		if (m->deleted && !rst_object_known(rc, m->dev, m->ino)) {
			pr_err("Task %d: fanotify #%u marks the deleted file %s, which the images "
			       "do not hold (shmem.img)", pid, d->id, m->path);
			return -1;
		}
	}
	return 0;
bad:
	pr_err("Task %d: image files.img has an invalid fanotify #%u", pid, d->id);
	return -1;
}

static unsigned int kind_flag(FanotifyMarkKind kind)
{
	if (kind == FANOTIFY_MARK_KIND__FANOTIFY_MOUNT)
		return FAN_MARK_MOUNT;
	if (kind == FANOTIFY_MARK_KIND__FANOTIFY_SB)
		return FAN_MARK_FILESYSTEM;
	/* the inode itself, a symlink too, as it was marked */
	return FAN_MARK_INODE | FAN_MARK_DONT_FOLLOW;
}

/*
 * Where @m's object is: by its path, or (deleted, hidden) an fd of it in
 * *@dirfd with a NULL path, as fanotify_mark() takes it.
 */
static const char *mark_target(struct rst_ctx *rc, pid_t pid, const FanotifyMarkEntry *m,
			       int *dirfd)
{
	*dirfd = AT_FDCWD;
	if (m->deleted)
		*dirfd = rst_object_fd(rc, m->dev, m->ino);
	else if (m->hidden)
		*dirfd = mnt_open_hidden(pid, m->hidden, m->path);
	if (*dirfd < 0 && *dirfd != AT_FDCWD)
		return NULL;
	return *dirfd == AT_FDCWD ? m->path : NULL;
}

static int mark_again(struct rst_ctx *rc, pid_t pid, int fd, const FanotifyMarkEntry *m)
{
	unsigned int base = FAN_MARK_ADD | kind_flag(m->kind) | (m->mflags & FAN_MARK_EVICTABLE);
	unsigned int ign = m->mflags & FAN_MARK_IGNORE ? FAN_MARK_IGNORE : FAN_MARK_IGNORED_MASK;
	const char *path;
	int dirfd, ret = -1;

	path = mark_target(rc, pid, m, &dirfd);
	if (!path && dirfd < 0)
		return -1;
	if (m->mask && fanotify_mark(fd, base, m->mask, dirfd, path)) {
		pr_perror("Task %d: can't mark %s again for fanotify events %#x", pid, m->path,
			  m->mask);
		goto out;
	}
	ign |= m->mflags & FAN_MARK_IGNORED_SURV_MODIFY;
	if (m->ignored_mask && fanotify_mark(fd, base | ign, m->ignored_mask, dirfd, path)) {
		pr_perror("Task %d: can't mark %s again to ignore fanotify events %#x", pid,
			  m->path, m->ignored_mask);
		goto out;
	}
	ret = 0;
out:
	if (m->hidden && dirfd >= 0)
		close(dirfd);
	return ret;
}

/* O_NONBLOCK as the file had it, whatever FAN_NONBLOCK the group was made with */
static int set_nonblock(pid_t pid, int fd, const FileDesc *d)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && !((fl ^ d->flags) & O_NONBLOCK))
		return 0;
	if (fl < 0 || fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) | (d->flags & O_NONBLOCK))) {
		pr_perror("Task %d: can't set the flags of a fanotify group", pid);
		return -1;
	}
	return 0;
}

static int fanotify_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const FanotifyEntry *e = d->fanotify;
	/* made close-on-exec, as every description criu opens; its fds get their own */
	unsigned int flags = e->flags | FAN_CLOEXEC;
	size_t i;
	int fd;

	fd = fanotify_init(flags, e->event_flags);
	if (fd < 0) {
		pr_perror("Task %d: can't create a fanotify group (flags %#x, event flags %#x)",
			  pid, flags, e->event_flags);
		return -1;
	}
	if (set_nonblock(pid, fd, d))
		goto err;
	/* fdinfo lists the newest mark first: made oldest first, they list alike */
	for (i = e->n_marks; i > 0; i--)
		if (mark_again(rc, pid, fd, e->marks[i - 1]))
			goto err;
	return fd;
err:
	close(fd);
	return -1;
}

const struct file_kind fk_fanotify = {
	.name = "fanotify",
	.kind = FILE_KIND__FILE_FANOTIFY,
	.match = fanotify_match,
	.dump = fanotify_dump,
	.free = fanotify_free,
	.validate = fanotify_validate,
	.open = fanotify_open,
};
