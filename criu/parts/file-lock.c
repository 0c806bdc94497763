// SPDX-License-Identifier: GPL-2.0
/*
 * File locks, with --file-locks: POSIX record locks (fcntl F_SETLK), OFD
 * locks (F_OFD_SETLK), flock() and leases (F_SETLEASE). Without the
 * option a task holding one is refused, as CRIU does: a lock that silently
 * vanished would let two processes into what each believes is its own.
 *
 * The dump reads them from the fdinfo of every fd, which the fd table's
 * check hands here (file_lock_scan). A POSIX lock belongs to its process
 * and shows only in the fdinfo of that process's fds on the open file it
 * was taken through: the task that shows it is the one that takes it again.
 * flock and OFD locks and leases belong to the open file description and
 * show in every fd of every task on it: one of them takes it, the first
 * seen (kcmp tells the fds of one description from those of another on the
 * same inode). /proc/locks would name a POSIX owner by pid only, and an
 * OFD lock's not at all.
 *
 * The restore takes each in its task's batch, once the batch has closed
 * criu's own fds there: closing any fd of a file drops every POSIX lock the
 * process holds on it, and criu's copies of shared descriptions and of
 * mapped files are such fds. The calls do not block: a lock someone else
 * took meanwhile fails the restore, with the lock named, instead of
 * hanging it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/file-lock.h"
#include "file-lock.pb-c.h"

#ifndef F_OFD_SETLK
#define F_OFD_SETLK	37	/* Linux 3.15 */
#endif

/* The image's kinds, by the kernel's. */
static const struct {
	enum proc_lock_kind proc;
	FileLockKind kind;
	const char *name;
} kinds[] = {
	{ PROC_LOCK_POSIX, FILE_LOCK_KIND__FL_POSIX, "POSIX" },
	{ PROC_LOCK_OFD, FILE_LOCK_KIND__FL_OFD, "OFD" },
	{ PROC_LOCK_FLOCK, FILE_LOCK_KIND__FL_FLOCK, "flock" },
	{ PROC_LOCK_LEASE, FILE_LOCK_KIND__FL_LEASE, "lease" },
};

static const char *kind_name(FileLockKind k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].kind == k)
			return kinds[i].name;
	return NULL;
}

static const char *type_name(FileLockType t)
{
	return t == FILE_LOCK_TYPE__FL_WRITE ? "write" : "read";
}

/* Byte ranges only for record locks: flock and leases cover the file. */
static int has_range(FileLockKind k)
{
	return k == FILE_LOCK_KIND__FL_POSIX || k == FILE_LOCK_KIND__FL_OFD;
}

/* ---------------------------------------------------------------- dump */

struct lock_seen {
	FileLockEntry e;
	pid_t pid;		/* criu's view of e.pid, for kcmp */
	dev_t dev;
	ino_t ino;
};

struct locks_dump {
	struct lock_seen *l;
	size_t nr;
};

/* Why a lock can't be dumped; NULL: it can. */
static const char *lock_refused(const struct fd_dump *f, const struct proc_lock *pl)
{
	if (pl->kind == PROC_LOCK_OTHER || pl->type == F_UNLCK)
		return "which criu can't take again";
	if (pl->kind == PROC_LOCK_LEASE && strcmp(pl->state, "ACTIVE"))
		return "which is being broken";
	if (!f->opts->file_locks)
		return "and file locks are dumped only with --file-locks";
	return NULL;
}

/* "a POSIX write lock on bytes 10-29", as the kernel names the kind. */
static void describe(const struct proc_lock *pl, char *buf, size_t len)
{
	const char *type = pl->type == F_WRLCK ? "write" : pl->type == F_RDLCK ? "read" : "UNLCK";
	int n = snprintf(buf, len, "a %s %s lock", pl->word, type);

	if (n < 0 || (size_t)n >= len || (pl->kind != PROC_LOCK_POSIX && pl->kind != PROC_LOCK_OFD))
		return;
	if (pl->end < 0)
		snprintf(buf + n, len - n, " on bytes %lld to the end", (long long)pl->start);
	else
		snprintf(buf + n, len - n, " on bytes %lld-%lld", (long long)pl->start,
			 (long long)pl->end);
}

static void lock_of(const struct fd_dump *f, const struct proc_lock *pl, struct lock_seen *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	file_lock_entry__init(&s->e);
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].proc == pl->kind)
			s->e.kind = kinds[i].kind;
	s->e.type = pl->type == F_WRLCK ? FILE_LOCK_TYPE__FL_WRITE : FILE_LOCK_TYPE__FL_READ;
	s->e.pid = f->ns_pid;
	s->e.fd = f->fd;
	if (has_range(s->e.kind)) {
		s->e.has_start = s->e.has_len = 1;
		s->e.start = pl->start;
		s->e.len = pl->end < 0 ? 0 : pl->end - pl->start + 1;
	}
	s->pid = f->pid;
	s->dev = f->st->st_dev;
	s->ino = f->st->st_ino;
}

/*
 * Seen before: a POSIX lock of the same owner (its other fds on the file
 * show it too), or another lock on the same open file description.
 */
static int seen_before(const struct locks_dump *ld, const struct lock_seen *n)
{
	const struct lock_seen *s;
	size_t i;

	for (i = 0; i < ld->nr; i++) {
		s = &ld->l[i];
		if (s->e.kind != n->e.kind || s->e.type != n->e.type || s->dev != n->dev ||
		    s->ino != n->ino || s->e.start != n->e.start || s->e.len != n->e.len)
			continue;
		if (n->e.kind == FILE_LOCK_KIND__FL_POSIX ? s->e.pid == n->e.pid :
		    !syscall(SYS_kcmp, s->pid, n->pid, KCMP_FILE, s->e.fd, n->e.fd))
			return 1;
	}
	return 0;
}

static int note_lock(struct dump_ctx *dc, const struct fd_dump *f, const struct proc_lock *pl)
{
	struct locks_dump *ld = dc->shared[PART_FILE_LOCK];
	struct lock_seen s, *slot;

	if (!ld) {
		ld = xzalloc(sizeof(*ld));
		if (!ld)
			return -1;
		dc->shared[PART_FILE_LOCK] = ld;
	}
	lock_of(f, pl, &s);
	if (seen_before(ld, &s))
		return 0;
	slot = xpush(ld->l, ld->nr);
	if (!slot)
		return -1;
	*slot = s;
	pr_info("Task %d: fd %d holds a %s %s lock", f->pid, f->fd, kind_name(s.e.kind),
		type_name(s.e.type));
	return 0;
}

int file_lock_scan(struct dump_ctx *dc, const struct fd_dump *f)
{
	struct proc_lock pl;
	const char *p, *why;
	char what[96];

	for (p = proc_next_lock(f->fdinfo); p; p = proc_next_lock(p)) {
		if (proc_parse_lock(p, &pl)) {
			pr_err("Task %d: fd %d (%s) has a lock criu can't read: '%.*s'", f->pid,
			       f->fd, f->link, (int)strcspn(p, "\n"), p);
			return -1;
		}
		why = lock_refused(f, &pl);
		if (why) {
			describe(&pl, what, sizeof(what));
			pr_err("Task %d: fd %d (%s) holds %s, %s", f->pid, f->fd, f->link, what,
			       why);
			return -1;
		}
		if (note_lock(dc, f, &pl))
			return -1;
	}
	return 0;
}

static void free_locks_dump(struct dump_ctx *dc)
{
	struct locks_dump *ld = dc->shared[PART_FILE_LOCK];

	if (ld)
		free(ld->l);
	free(ld);
	dc->shared[PART_FILE_LOCK] = NULL;
}

static int file_lock_dump_tree(struct dump_ctx *dc)
{
	FileLocksEntry e = FILE_LOCKS_ENTRY__INIT;
	struct locks_dump *ld = dc->shared[PART_FILE_LOCK];
	FileLockEntry **pl = NULL;
	size_t i, nr = ld ? ld->nr : 0;
	int ret = -1;

	pl = xzalloc((nr + 1) * sizeof(*pl));
	if (!pl)
		goto out;
	for (i = 0; i < nr; i++)
		pl[i] = &ld->l[i].e;
	e.locks = pl;
	e.n_locks = nr;
	ret = img_write(dc->dirfd, IMG_FILE_LOCK, 0, &e.base);
	if (nr)
		pr_info("%zu file locks in the tree", nr);
out:
	free(pl);
	free_locks_dump(dc);
	return ret;
}

static void file_lock_after_dump(struct dump_ctx *dc, int runs)
{
	free_locks_dump(dc);
}

/* ------------------------------------------------------------- restore */

struct locks_rst {
	FileLocksEntry *img;	/* NULL: a checkpoint from before file locks */
	char *claimed;		/* per lock: its task was loaded, with the fd */
};

/* A range fcntl() takes: from 0 to OFFSET_MAX, the kernel's largest loff_t. */
static int range_ok(const FileLockEntry *l)
{
	if (!has_range(l->kind))
		return !l->start && !l->len;
	return l->start <= INT64_MAX && l->len <= INT64_MAX &&
	       (!l->len || l->len - 1 <= INT64_MAX - l->start);
}

static int file_lock_load_tree(struct rst_ctx *rc)
{
	struct locks_rst *lr = xzalloc(sizeof(*lr));
	FileLockEntry *l;
	size_t i;

	if (!lr)
		return -1;
	rc->shared[PART_FILE_LOCK] = lr;
	if (img_read(rc->dirfd, IMG_FILE_LOCK, 0, (void **)&lr->img, 1) < 0)
		return -1;
	if (!lr->img)
		return 0;
	lr->claimed = xzalloc(lr->img->n_locks + 1);
	if (!lr->claimed)
		return -1;
	for (i = 0; i < lr->img->n_locks; i++) {
		l = lr->img->locks[i];
		if (!kind_name(l->kind) ||
		    (l->type != FILE_LOCK_TYPE__FL_READ && l->type != FILE_LOCK_TYPE__FL_WRITE) ||
		    !range_ok(l)) {
			pr_err("Image file-lock.img has an invalid lock #%zu (task %u, fd %u)", i,
			       l->pid, l->fd);
			return -1;
		}
	}
	return 0;
}

static int has_fd(const struct rtask *t, int fd)
{
	int lo = 0, hi = t->nr_task_fds, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->task_fds[mid] == fd)
			return 1;
		if (t->task_fds[mid] < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* After the fd table's load (the registry's order): each lock's fd is one of the task's. */
static int file_lock_load(struct rst_ctx *rc, struct rtask *t)
{
	struct locks_rst *lr = rc->shared[PART_FILE_LOCK];
	FileLockEntry *l;
	size_t i;

	for (i = 0; lr->img && i < lr->img->n_locks; i++) {
		l = lr->img->locks[i];
		if (l->pid != (uint32_t)t->pid)
			continue;
		if (l->fd > INT32_MAX || !has_fd(t, l->fd)) {
			pr_err("Task %d: image file-lock.img has a %s lock on fd %u, which the "
			       "task does not have", t->pid, kind_name(l->kind), l->fd);
			return -1;
		}
		lr->claimed[i] = 1;
		t->batch_entries++;
		t->batch_data += sizeof(struct flock);
	}
	return 0;
}

/* Every task is loaded: a lock of none would be lost without a word. */
static int file_lock_prefork(struct rst_ctx *rc)
{
	struct locks_rst *lr = rc->shared[PART_FILE_LOCK];
	size_t i;

	for (i = 0; lr->img && i < lr->img->n_locks; i++)
		if (!lr->claimed[i]) {
			pr_err("Image file-lock.img has a %s lock of task %u, which is not a "
			       "live task of the tree", kind_name(lr->img->locks[i]->kind),
			       lr->img->locks[i]->pid);
			return -1;
		}
	return 0;
}

static int queue_lock(struct batch *b, const FileLockEntry *l)
{
	int wr = l->type == FILE_LOCK_TYPE__FL_WRITE;
	struct flock fl = {
		.l_type = wr ? F_WRLCK : F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = l->start,
		.l_len = l->len,
	};
	char desc[SC_DESC_LEN];
	uint64_t at;

	snprintf(desc, sizeof(desc), "taking its %s %s lock on fd %u", kind_name(l->kind),
		 type_name(l->type), l->fd);
	switch (l->kind) {
	case FILE_LOCK_KIND__FL_FLOCK:
		return BATCH(b, desc, __NR_flock, l->fd, (wr ? LOCK_EX : LOCK_SH) | LOCK_NB);
	case FILE_LOCK_KIND__FL_LEASE:
		return BATCH(b, desc, __NR_fcntl, l->fd, F_SETLEASE, fl.l_type);
	default:
		at = batch_put(b, &fl, sizeof(fl));
		if (!at)
			return -1;
		return BATCH(b, desc, __NR_fcntl, l->fd,
			     l->kind == FILE_LOCK_KIND__FL_OFD ? F_OFD_SETLK : F_SETLK, at);
	}
}

/*
 * The leader's steps come after the batch closed criu's fds in the task
 * (restore/task.c): a close there would drop its POSIX locks.
 */
static int file_lock_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	struct locks_rst *lr = rc->shared[PART_FILE_LOCK];
	size_t i;

	if (th)
		return 0;
	for (i = 0; lr->img && i < lr->img->n_locks; i++)
		if (lr->img->locks[i]->pid == (uint32_t)t->pid &&
		    queue_lock(b, lr->img->locks[i]) < 0)
			return -1;
	return 0;
}

static void file_lock_release_tree(struct rst_ctx *rc)
{
	struct locks_rst *lr = rc->shared[PART_FILE_LOCK];

	if (!lr)
		return;
	img_free(IMG_FILE_LOCK, lr->img);
	free(lr->claimed);
	free(lr);
	rc->shared[PART_FILE_LOCK] = NULL;
}

const struct part part_file_lock = {
	.name = "file_lock",
	.id = PART_FILE_LOCK,
	.dump_tree = file_lock_dump_tree,
	.after_dump = file_lock_after_dump,
	.load_tree = file_lock_load_tree,
	.load = file_lock_load,
	.prefork = file_lock_prefork,
	.thread_batch = file_lock_thread_batch,
	.release_tree = file_lock_release_tree,
};
