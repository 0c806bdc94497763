// SPDX-License-Identifier: GPL-2.0
/*
 * The fd table and the open file descriptions behind it, tree-wide.
 *
 * Several fds may share one open file description (dup(), and fork():
 * then in several tasks), and with it the offset and the status flags.
 * The dump finds each description once for the whole tree, with
 * kcmp(KCMP_FILE) across tasks, and saves it once in files.img; each
 * task's fdinfo-PID.img lists its fds by description id.
 *
 * kcmp() orders files (by an obfuscated kernel pointer, the same for
 * every pair of tasks), so the descriptions on one inode are kept sorted
 * in that order and a new fd is looked up by bisection: a tree with
 * thousands of eventfds (which all share one anonymous inode) costs
 * n log n kcmp() calls, not n * n.
 *
 * Restore: a description used by one task is opened by the task itself
 * (parallel, and in its own context: namespaces, the time namespace for
 * timers). One that several tasks share, and every pipe end and socket
 * (their objects span descriptions that may sit in different tasks), is
 * opened by criu before the first fork and inherited: each task dup()s
 * it into its slots, and its batch closes the inherited copies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/file-fown.h"
#include "parts/file-kind.h"
#include "parts/file-lock.h"
#include "task/mounts.h"
#include "pstree.pb-c.h"

#define INODE_HASH	1024

/* The kinds, in the registry's order (images/kinds.def). */
#define FILE_KIND(name)	extern const struct file_kind fk_##name;
#include "kinds.def"

static const struct file_kind *const kinds[] = {
#define FILE_KIND(name)	&fk_##name,
#include "kinds.def"
};

static const struct file_kind *kind_of_link(pid_t pid, int fd, const char *link,
					     const struct stat *st)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->match_fd ? kinds[i]->match_fd(pid, fd, link, st) :
		    kinds[i]->match(link, st))
			return kinds[i];
	return NULL;
}

static const struct file_kind *kind_of_desc(const FileDesc *d)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->kind == d->kind)
			return kinds[i];
	return NULL;
}

/* ------------------------------------------------------------ the scan */

struct fd_scan {
	int fd;
	struct stat st;
	struct proc_fdinfo fi;
	char *fdinfo;		/* the text, for kinds that parse more of it */
	struct fown_seen fown;	/* who gets its signals, as the task says */
	char path[PATH_MAX];
};

static void free_scan(struct fd_scan *fds, int nr)
{
	while (nr > 0)
		free(fds[--nr].fdinfo);
	free(fds);
}

static int scan_fds(pid_t pid, struct fd_scan **out)
{
	char dir[64], link[80];
	struct fd_scan *fds = NULL, *f;
	struct dirent *de;
	int nr = 0;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d) {
		pr_perror("Task %d: can't list its fds", pid);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		f = xpush(fds, nr);
		if (!f)
			goto err;
		f->fdinfo = NULL;
		memset(&f->fown, 0, sizeof(f->fown));	/* known only once asked */
		f->fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "%s/%d", dir, f->fd);
		len = readlink(link, f->path, sizeof(f->path) - 1);
		if (len < 0) {
			pr_perror("Task %d: can't read fd %d", pid, f->fd);
			goto err;
		}
		f->path[len] = '\0';
		if (stat(link, &f->st))
			memset(&f->st, 0, sizeof(f->st));
		snprintf(link, sizeof(link), "/proc/%d/fdinfo/%d", pid, f->fd);
		f->fdinfo = read_file(-1, link, NULL);
		if (!f->fdinfo || proc_parse_fdinfo(f->fdinfo, &f->fi)) {
			pr_perror("Task %d: can't read fdinfo of fd %d", pid, f->fd);
			goto err;
		}
	}
	closedir(d);
	*out = fds;
	return nr;
err:
	closedir(d);
	free_scan(fds, nr);
	return -1;
}

static void fd_dump_of(const struct opts *o, const struct dtask *t, const struct fd_scan *s,
		       struct fd_dump *f)
{
	f->opts = o;
	f->pid = t->pid;
	f->ns_pid = t->ns_pid;
	f->fd = s->fd;
	f->link = s->path;
	f->st = &s->st;
	f->fdinfo = s->fdinfo;
	f->mnt_id = s->fi.mnt_id;
}

/* Names what an fd no kind takes is, for the error message. */
static const char *fd_unsupported(pid_t pid, int fd, const char *path, const struct stat *st)
{
	size_t len = strlen(path);

	if (kind_of_link(pid, fd, path, st))
		return NULL;
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		return "an open deleted file";
	if (!strncmp(path, "anon_inode:", 11))
		return path + 11;	/* [userfaultfd], [pidfd], [io_uring]... */
	if (path[0] != '/')
		return "a non-file object";
	return "a special file";
}

/*
 * What the check saw, kept for the dump: the task is frozen in between
 * and the in-task calls open no fds, so a second scan would only read
 * the same links and fdinfo files again (a third of the part's time).
 */
struct fd_scans {
	struct fd_scan *fds;
	int nr;
};

static int fdinfo_check(struct dump_ctx *dc, struct dtask *t)
{
	const struct file_kind *k;
	struct fd_scans *sc;
	struct fd_scan *fds;
	struct fd_dump f;
	const char *why;
	int i, nr, top, ret = 0;

	nr = scan_fds(t->pid, &fds);
	if (nr < 0)
		return -1;
	for (i = 0, top = -1; i < nr; i++)
		top = max(top, fds[i].fd);
	ret = limit_fds(t->pid, nr, top);
	t->nr_fds = nr;
	for (i = 0; i < nr && !ret; i++) {
		why = fd_unsupported(t->pid, fds[i].fd, fds[i].path, &fds[i].st);
		if (why) {
			pr_err("Task %d: fd %d is %s (%s), which is not supported yet",
			       t->pid, fds[i].fd, why, fds[i].path);
			ret = -1;
			break;
		}
		k = kind_of_link(t->pid, fds[i].fd, fds[i].path, &fds[i].st);
		fd_dump_of(dc->opts, t, &fds[i], &f);
		if ((k->check && k->check(&f)) || file_lock_scan(dc, &f))
			ret = -1;
	}
	sc = ret ? NULL : xmalloc(sizeof(*sc));
	if (!sc) {
		free_scan(fds, nr);
		return -1;
	}
	sc->fds = fds;
	sc->nr = nr;
	t->priv[PART_FDINFO] = sc;
	return 0;
}

/* ------------------------------------------- the tree's descriptions (dump) */

struct inode_descs {
	dev_t dev;
	ino_t ino;
	size_t *idx;		/* into ftree.files, in kcmp order */
	size_t nr;
	struct inode_descs *next;
};

struct ftree {
	const struct opts *opts;	/* the dump's, for the kinds (fd_dump) */
	struct file_ref *files;
	size_t nr;
	struct inode_descs *hash[INODE_HASH];
};

static struct ftree *ftree_of(struct dump_ctx *dc)
{
	struct ftree *ft = dc->shared[PART_FDINFO];

	if (!ft) {
		ft = xzalloc(sizeof(*ft));
		dc->shared[PART_FDINFO] = ft;
		if (ft)
			ft->opts = dc->opts;
	}
	return ft;
}

static struct inode_descs *inode_of(struct ftree *ft, const struct stat *st)
{
	size_t h = (st->st_ino ^ (st->st_dev * 31)) % INODE_HASH;
	struct inode_descs *in;

	for (in = ft->hash[h]; in; in = in->next)
		if (in->ino == st->st_ino && in->dev == st->st_dev)
			return in;
	in = xzalloc(sizeof(*in));
	if (!in)
		return NULL;
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->next = ft->hash[h];
	ft->hash[h] = in;
	return in;
}

/*
 * Bisects the descriptions on one inode for the one behind @fd of @pid.
 * Returns 1 and its position when found, else 0 and where it belongs.
 */
static int find_desc(struct ftree *ft, struct inode_descs *in, pid_t pid, int fd,
		     size_t *pos)
{
	size_t lo = 0, hi = in->nr, mid;
	struct file_ref *r;
	long c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &ft->files[in->idx[mid]];
		c = syscall(SYS_kcmp, r->pid, pid, KCMP_FILE, r->fd, fd);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c == 1)		/* the saved one comes first */
			lo = mid + 1;
		else if (c == 2)
			hi = mid;
		else {
			pr_perror("Task %d: can't compare fd %d with fd %d of task %d", pid,
				  fd, r->fd, r->pid);
			return -1;
		}
	}
	*pos = lo;
	return 0;
}

static int add_desc(struct ftree *ft, struct inode_descs *in, size_t pos,
		    const struct fd_dump *f, const struct fd_scan *s,
		    const struct file_kind *k)
{
	const FileDesc *same = in->nr ? ft->files[in->idx[0]].d : NULL;
	FileDesc *d;

	if (xgrow(ft->files, ft->nr) || xgrow(in->idx, in->nr))
		return -1;
	d = xmalloc(sizeof(*d));
	if (!d)
		return -1;
	file_desc__init(d);
	d->id = ft->nr;
	d->kind = k->kind;
	d->flags = s->fi.flags & OPEN_STATUS_MASK;
	d->pos = s->fi.pos;
	d->path = xstrdup(s->path);
	if (k->on_mount) {
		d->has_mnt_id = 1;
		d->mnt_id = f->mnt_id;
	}
	ft->files[ft->nr] = (struct file_ref){ .d = d, .pid = f->pid, .fd = f->fd };
	memmove(in->idx + pos + 1, in->idx + pos, (in->nr - pos) * sizeof(*in->idx));
	in->idx[pos] = ft->nr++;
	in->nr++;
	if (!d->path || (k->dump && k->dump(f, same, d)))
		return -1;
	return file_fown_dump(f, s->fi.flags, &s->fown, d);
}

static void free_ftree(struct ftree *ft)
{
	struct inode_descs *in, *next;
	const struct file_kind *k;
	size_t i;

	if (!ft)
		return;
	for (i = 0; i < ft->nr; i++) {
		k = kind_of_desc(ft->files[i].d);
		if (k && k->free)
			k->free(ft->files[i].d);
		file_fown_free(ft->files[i].d);
		free(ft->files[i].d->path);
		free(ft->files[i].d);
	}
	free(ft->files);
	for (i = 0; i < INODE_HASH; i++)
		for (in = ft->hash[i]; in; in = next) {
			next = in->next;
			free(in->idx);
			free(in);
		}
	free(ft);
}

/* The description behind fd @s: an id in the tree's table, new or not. */
static int desc_of_fd(struct ftree *ft, const struct dtask *t, const struct fd_scan *s,
		      uint32_t *id)
{
	pid_t pid = t->pid;
	const struct file_kind *k = kind_of_link(pid, s->fd, s->path, &s->st);
	struct inode_descs *in;
	struct fd_dump f;
	size_t pos;
	int found;

	if (!k || fd_unsupported(pid, s->fd, s->path, &s->st)) {
		pr_err("Task %d: fd %d (%s) is not supported", pid, s->fd, s->path);
		return -1;
	}
	fd_dump_of(ft->opts, t, s, &f);
	in = inode_of(ft, &s->st);
	if (!in)
		return -1;
	found = find_desc(ft, in, pid, s->fd, &pos);
	if (found < 0)
		return -1;
	if (found) {
		*id = in->idx[pos];
		ft->files[*id].shared |= ft->files[*id].pid != pid;
		return k->dump_more ? k->dump_more(&f, ft->files[*id].d) : 0;
	}
	*id = ft->nr;
	return add_desc(ft, in, pos, &f, s, k);
}

/* What only the task can say: who gets each fd's signals (file-fown.c). */
static int fdinfo_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct fd_scans *sc = t->priv[PART_FDINFO];
	int i;

	for (i = 0; i < sc->nr; i++)
		if (file_fown_ask(b, sc->fds[i].fd, &sc->fds[i].fown))
			return -1;
	return 0;
}

static int fdinfo_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	FdinfoEntry e = FDINFO_ENTRY__INIT;
	struct ftree *ft = ftree_of(dc);
	struct fd_scans *sc = t->priv[PART_FDINFO];
	struct fd_scan *fds = sc->fds;
	FdEntry *ents = NULL, **pe = NULL;
	int i, nr = sc->nr, ret = -1;

	free(sc);
	t->priv[PART_FDINFO] = NULL;
	if (!ft)
		goto out;
	ents = xzalloc((nr + 1) * sizeof(*ents));
	pe = xzalloc((nr + 1) * sizeof(*pe));
	if (!ents || !pe)
		goto out;
	for (i = 0; i < nr; i++)
		file_fown_answer(b, &fds[i].fown);
	for (i = 0; i < nr; i++) {
		fd_entry__init(&ents[i]);
		ents[i].fd = fds[i].fd;
		ents[i].cloexec = !!(fds[i].fi.flags & O_CLOEXEC);
		if (desc_of_fd(ft, t, &fds[i], &ents[i].file_id))
			goto out;
		pe[i] = &ents[i];
	}
	e.fds = pe;
	e.n_fds = nr;
	ret = img_write(dc->dirfd, IMG_FDINFO, t->ns_pid, &e.base);
out:
	free(ents);
	free(pe);
	free_scan(fds, nr);
	return ret;
}

/* Every task is saved: what spans tasks is checked, and files.img written. */
static int fdinfo_dump_tree(struct dump_ctx *dc)
{
	FilesEntry e = FILES_ENTRY__INIT;
	struct ftree *ft = ftree_of(dc);
	FileDesc **pf = NULL;
	size_t i;
	int ret = -1;

	if (!ft)
		return -1;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->dump_done && kinds[i]->dump_done(ft->files, ft->nr))
			goto out;
	pf = xzalloc((ft->nr + 1) * sizeof(*pf));
	if (!pf)
		goto out;
	for (i = 0; i < ft->nr; i++) {
		pf[i] = ft->files[i].d;
		/* what the restore opens itself (by_criu()) */
		dc->restore_shared += (ft->files[i].shared &&
				       !kind_of_desc(ft->files[i].d)->each_task) ||
				      kind_of_desc(ft->files[i].d)->open_object;
	}
	e.files = pf;
	e.n_files = ft->nr;
	ret = img_write(dc->dirfd, IMG_FILES, 0, &e.base);
	pr_info("%zu open file descriptions in the tree", ft->nr);
out:
	free(pf);
	free_ftree(ft);
	dc->shared[PART_FDINFO] = NULL;
	return ret;
}

/* The tree goes on or is gone: kinds let go of what held it (TCP repair mode). */
static void fdinfo_after_dump(struct dump_ctx *dc, int runs)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->after_dump)
			kinds[i]->after_dump(runs);
}

/* ------------------------------------------------------------- restore */

struct rfile {
	pid_t first;		/* the first task (pstree order) that uses it */
	pid_t last;		/* the last task counted in users */
	int users;		/* how many tasks */
	int inherited;		/* criu's fd, inherited by every task; -1: none */
	int finished;		/* its kind's finish() ran */
};

struct rtable {
	pid_t pid;
	FdinfoEntry *e;
};

struct rfiles {
	void *kind_data[ARRAY_SIZE(kinds)];	/* each kind's own (kind_data()) */
	uint32_t root;		/* the tree's root task */
	FilesEntry *img;
	struct rfile *f;
	struct rtable *tasks;
	int nr_tasks;
};

/* The kind's slot for its own data during the restore (open_object, restored). */
static void **kind_data(struct rfiles *rf, const struct file_kind *k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i] == k)
			return &rf->kind_data[i];
	return NULL;
}

static int by_criu(const struct rfiles *rf, size_t i)
{
	const struct file_kind *k = kind_of_desc(rf->img->files[i]);

	return k->open_object || (rf->f[i].users > 1 && !k->each_task);
}

static int check_files(struct rfiles *rf)
{
	FilesEntry *fe = rf->img;
	size_t i;

	for (i = 0; i < fe->n_files; i++) {
		if (fe->files[i]->id != i || !fe->files[i]->path[0] ||
		    !kind_of_desc(fe->files[i]) || !file_fown_valid(fe->files[i])) {
			pr_err("Image files.img has an invalid file #%zu", i);
			return -1;
		}
		rf->f[i].inherited = -1;
	}
	return 0;
}

static int load_table(struct rst_ctx *rc, struct rfiles *rf, pid_t pid)
{
	struct rtable *tb = &rf->tasks[rf->nr_tasks];
	struct rfile *f;
	FdinfoEntry *e;
	int64_t top;
	size_t i;

	if (img_read(rc->dirfd, IMG_FDINFO, pid, (void **)&tb->e, 0) < 0)
		return -1;
	tb->pid = pid;
	rf->nr_tasks++;
	e = tb->e;
	for (i = 0, top = 0; i < e->n_fds; i++)
		top = max(top, (int64_t)e->fds[i]->fd);
	if (limit_fds(pid, e->n_fds, top))
		return -1;
	for (i = 0; i < e->n_fds; i++) {
		if (e->fds[i]->file_id >= rf->img->n_files) {
			pr_err("Task %d: image fdinfo has an invalid fd entry #%zu (fd %u)",
			       pid, i, e->fds[i]->fd);
			return -1;
		}
		/* a task's second fd on a description does not make it shared */
		f = &rf->f[e->fds[i]->file_id];
		if (f->users && f->last == pid)
			continue;
		if (!f->users)
			f->first = pid;
		f->last = pid;
		f->users++;
	}
	return 0;
}

/* Is file @id used by task @pid? */
static int task_uses_file(struct rfiles *rf, pid_t pid, size_t id)
{
	size_t i;
	int t;

	for (t = 0; t < rf->nr_tasks; t++) {
		if (rf->tasks[t].pid != pid)
			continue;
		for (i = 0; i < rf->tasks[t].e->n_fds; i++)
			if (rf->tasks[t].e->fds[i]->file_id == id)
				return 1;
	}
	return 0;
}

static int fdinfo_load_tree(struct rst_ctx *rc)
{
	struct rfiles *rf;
	PstreeEntry *pe = NULL;
	const struct file_kind *k;
	size_t i;
	int ret = -1;

	rf = xzalloc(sizeof(*rf));
	if (!rf)
		return -1;
	rc->shared[PART_FDINFO] = rf;
	if (img_read(rc->dirfd, IMG_FILES, 0, (void **)&rf->img, 0) < 0 ||
	    img_read(rc->dirfd, IMG_PSTREE, 0, (void **)&pe, 0) < 0)
		goto out;
	rf->f = xzalloc((rf->img->n_files + 1) * sizeof(*rf->f));
	rf->tasks = xzalloc((pe->n_tasks + 1) * sizeof(*rf->tasks));
	if (!rf->f || !rf->tasks || check_files(rf))
		goto out;
	rf->root = pe->n_tasks ? pe->tasks[0]->pid : 0;
	for (i = 0; i < pe->n_tasks; i++)
		if (!pe->tasks[i]->zombie && load_table(rc, rf, pe->tasks[i]->pid))
			goto out;
	for (i = 0; i < rf->img->n_files; i++) {
		FileDesc *d = rf->img->files[i];

		if (!rf->f[i].users)
			continue;	/* nobody's: not opened */
		k = kind_of_desc(d);
		if (k->validate && k->validate(rc, rf->f[i].first, d))
			goto out;
		/* installer 0: nothing to set up in a task (older timerfd images) */
		if (k->installer && k->installer(d) && !task_uses_file(rf, k->installer(d), i)) {
			pr_err("Task %d: image files.img has %s #%zu set up by task %d, "
			       "which does not hold it", rf->f[i].first, k->name, i,
			       k->installer(d));
			goto out;
		}
	}
	ret = 0;
out:
	img_free(IMG_PSTREE, pe);
	return ret;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int fdinfo_load(struct rst_ctx *rc, struct rtask *t)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	FdinfoEntry *e = NULL;
	size_t i;
	int j;

	for (j = 0; j < rf->nr_tasks; j++)
		if (rf->tasks[j].pid == t->pid)
			e = rf->tasks[j].e;
	if (!e) {
		pr_err("Task %d: no fd table was loaded for it", t->pid);
		return -1;
	}
	t->img[PART_FDINFO] = e;	/* owned by the tree's table */
	t->task_fds = xmalloc((e->n_fds + 1) * sizeof(int));
	if (!t->task_fds)
		return -1;
	for (i = 0; i < e->n_fds; i++)
		t->task_fds[i] = e->fds[i]->fd;
	t->nr_task_fds = e->n_fds;
	qsort(t->task_fds, e->n_fds, sizeof(int), cmp_int);
	for (i = 1; i < e->n_fds; i++)
		if (t->task_fds[i] == t->task_fds[i - 1]) {
			pr_err("Task %d: image fdinfo lists fd %d twice", t->pid, t->task_fds[i]);
			return -1;
		}
	for (i = 0; i < e->n_fds; i++)
		if (rf->img->files[e->fds[i]->file_id]->fown) {
			t->batch_entries += FOWN_BATCH_ENTRIES;
			t->batch_data += FOWN_BATCH_DATA;
		}
	return 0;
}

/* Whether the task's fd entry @i is its first on that description. */
static int first_fd_on(const FdinfoEntry *e, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (e->fds[j]->file_id == e->fds[i]->file_id)
			return 0;
	return 1;
}

/*
 * The owners of the descriptions' signals, by the task that installs each
 * first: in the batch, once every task (every owner) exists.
 */
static int fdinfo_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	FdinfoEntry *e = t->img[PART_FDINFO];
	const FileDesc *d;
	size_t i;

	for (i = 0; i < e->n_fds; i++) {
		d = rf->img->files[e->fds[i]->file_id];
		if (d->fown && rf->f[d->id].first == t->pid && first_fd_on(e, i) &&
		    file_fown_queue(b, e->fds[i]->fd, d))
			return -1;
	}
	return 0;
}

/* ---------------------------------------------- restore: criu's opens */

/*
 * A file on a mount of the tree's own mount namespace is opened in it, by
 * the tree's root once it made it (early hook), not by criu; so is what a
 * kind makes in the tree's namespaces (in_tree_ns: bound unix sockets),
 * when the tree has a mount or network namespace of its own.
 */
static int tree_has_ns(const struct rst_ctx *rc)
{
	return mnt_tree_has_ns() || ((rc->root_flags | rc->joined_ns) & CLONE_NEWNET);
}

/*
 * Who opens shared file @i: criu before the first fork (0), the tree's
 * root in its early hook (1), or, for one on a mount of a nested mount
 * namespace, its maker once it made it (LATE_NESTED + its pid).
 */
#define LATE_NESTED	(1 << 30)

static int late(const struct rst_ctx *rc, const struct rfiles *rf, size_t i)
{
	const FileDesc *d = rf->img->files[i];
	const struct file_kind *k = kind_of_desc(d);
	int maker;

	if (k->in_tree_ns && k->in_tree_ns(d))
		return tree_has_ns(rc);
	if (!d->has_mnt_id || !mnt_tree_has_ns())
		return 0;
	maker = mnt_maker_of(d->mnt_id);
	return maker ? LATE_NESTED + maker : 1;
}

static int cmp_object(const void *a, const void *b, void *arg)
{
	FileDesc *const *files = arg;
	const FileDesc *x = files[*(const size_t *)a], *y = files[*(const size_t *)b];
	uint64_t ox = kind_of_desc(x)->object(x), oy = kind_of_desc(y)->object(y);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (ox != oy)
		return ox < oy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Pipes and socket pairs: all descriptions of one object at once (@late: see late()). */
static int open_objects(struct rst_ctx *rc, struct rfiles *rf, int now_late)
{
	FileDesc **files = rf->img->files, **group = NULL;
	size_t *idx = NULL, n = 0, i, j, g;
	int *fds = NULL, ret = -1;
	const struct file_kind *k;

	idx = xmalloc((rf->img->n_files + 1) * sizeof(*idx));
	group = xmalloc((rf->img->n_files + 1) * sizeof(*group));
	fds = xmalloc((rf->img->n_files + 1) * sizeof(*fds));
	if (!idx || !group || !fds)
		goto out;
	for (i = 0; i < rf->img->n_files; i++)
		if (rf->f[i].users && kind_of_desc(files[i])->open_object && late(rc, rf, i) == now_late)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_object, files);
	for (i = 0; i < n; i = j) {
		k = kind_of_desc(files[idx[i]]);
		for (j = i; j < n && files[idx[j]]->kind == files[idx[i]]->kind &&
		     k->object(files[idx[j]]) == k->object(files[idx[i]]); j++)
			group[j - i] = files[idx[j]];
		if (k->open_object(rc, now_late, kind_data(rf, k), group, j - i, fds))
			goto out;
		for (g = i; g < j; g++) {
			rf->f[idx[g]].inherited = rst_inherit_fd(rc, fds[g - i]);
			if (rf->f[idx[g]].inherited < 0) {
				while (++g < j)
					close(fds[g - i]);
				goto out;
			}
		}
	}
	ret = 0;
out:
	free(idx);
	free(group);
	free(fds);
	return ret;
}

/*
 * Shared timers must be armed on the tree's clocks: a helper, forked into
 * the tree's time namespace (criu's children are born there), opens them
 * and hands them over.
 */
static int open_in_helper(struct rst_ctx *rc, struct rfiles *rf, size_t *list, size_t n)
{
	int sk[2], status, fd, ret = 0;
	pid_t helper;
	size_t i;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("Can't create a socket pair for the file helper");
		return -1;
	}
	helper = fork();
	if (helper < 0) {
		pr_perror("Can't fork the file helper");
		close(sk[0]);
		close(sk[1]);
		return -1;
	}
	if (!helper) {
		close(sk[0]);
		for (i = 0; i < n; i++) {
			FileDesc *d = rf->img->files[list[i]];

			fd = kind_of_desc(d)->open(rc, rf->f[list[i]].first, d);
			if (fd < 0 || send_fd(sk[1], fd))
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	close(sk[1]);
	for (i = 0; i < n && !ret; i++) {
		fd = recv_fd(sk[0]);
		if (fd < 0) {
			pr_err("The file helper could not open %s #%zu",
			       kind_of_desc(rf->img->files[list[i]])->name, list[i]);
			ret = -1;
			break;
		}
		rf->f[list[i]].inherited = rst_inherit_fd(rc, fd);
		if (rf->f[list[i]].inherited < 0)
			ret = -1;
	}
	close(sk[0]);
	while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

static int open_shared(struct rst_ctx *rc, struct rfiles *rf, int now_late)
{
	const struct file_kind *k;
	size_t i, *helper = NULL, nh = 0;
	int fd, ret = -1;

	if (open_objects(rc, rf, now_late))
		return -1;
	helper = xmalloc((rf->img->n_files + 1) * sizeof(*helper));
	if (!helper)
		return -1;
	for (i = 0; i < rf->img->n_files; i++) {
		FileDesc *d = rf->img->files[i];

		k = kind_of_desc(d);
		if (!rf->f[i].users || k->open_object || !by_criu(rf, i) ||
		    late(rc, rf, i) != now_late)
			continue;
		if (k->task_clocks) {
			helper[nh++] = i;
			continue;
		}
		fd = k->open(rc, rf->f[i].first, d);
		rf->f[i].inherited = rst_inherit_fd(rc, fd);
		if (rf->f[i].inherited < 0)
			goto out;
	}
	if (nh && open_in_helper(rc, rf, helper, nh))
		goto out;
	ret = 0;
out:
	free(helper);
	return ret;
}

static int fdinfo_prefork(struct rst_ctx *rc)
{
	return open_shared(rc, rc->shared[PART_FDINFO], 0);
}

/*
 * In the root, once its namespaces are made: the shared files on its
 * mounts, bound sockets; in the maker of a nested mount namespace, once
 * made, those on its mounts (its descendants inherit them).
 */
static int fdinfo_early(struct rst_ctx *rc, struct rtask *t)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];

	if ((uint32_t)t->pid == rf->root && tree_has_ns(rc) && open_shared(rc, rf, 1))
		return -1;
	return mnt_tree_has_ns() ? open_shared(rc, rf, LATE_NESTED + t->pid) : 0;
}

/* -------------------------------------- restore: in the new task */

static int cmp_fd_entry(const void *a, const void *b)
{
	const FdEntry *x = *(FdEntry *const *)a, *y = *(FdEntry *const *)b;

	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

/*
 * Installs @f: from where its description already is (inherited, or an
 * fd of ours installed before), else opened now. The fds go in increasing
 * order, so every task fd below this one is in place and open() returns
 * this number or a lower one no task fd needs: nothing is ever parked.
 */
static int install_fd(struct rst_ctx *rc, struct rtask *t, struct rfiles *rf, const FdEntry *f,
		      int *where)
{
	const FileDesc *d = rf->img->files[f->file_id];
	int src = rf->f[f->file_id].inherited, fd;

	if (src < 0)
		src = where[f->file_id];
	if (src < 0) {
		fd = kind_of_desc(d)->open(rc, t->pid, d);
		if (fd < 0)
			return -1;
		if ((unsigned int)fd > f->fd) {
			pr_err("Task %d: %s #%u came at fd %d, above its fd %u", t->pid,
			       kind_of_desc(d)->name, d->id, fd, f->fd);
			close(fd);
			return -1;
		}
		where[f->file_id] = f->fd;
		if ((unsigned int)fd == f->fd)
			return fcntl(fd, F_SETFD, f->cloexec ? FD_CLOEXEC : 0);
		src = fd;
		if (dup3(src, f->fd, f->cloexec ? O_CLOEXEC : 0) < 0) {
			pr_perror("Task %d: can't install fd %u", t->pid, f->fd);
			close(src);
			return -1;
		}
		close(src);
		return 0;
	}
	if (dup3(src, f->fd, f->cloexec ? O_CLOEXEC : 0) < 0) {
		pr_perror("Task %d: can't install fd %u", t->pid, f->fd);
		return -1;
	}
	return 0;
}

static int fdinfo_child(struct rst_ctx *rc, struct rtask *t)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	FdinfoEntry *e = t->img[PART_FDINFO];
	FileDesc **files = rf->img->files;
	size_t i, n = rf->img->n_files;
	const struct file_kind *k;
	FdEntry **order = NULL;
	char *installed = NULL;
	int *where, ret = -1;

	/* where each description is in the task once installed; -1: not yet */
	where = xmalloc((n + 1) * sizeof(int));
	installed = xzalloc(n + 1);
	order = xmalloc((e->n_fds + 1) * sizeof(*order));
	if (!where || !installed || !order)
		goto out;
	for (i = 0; i < n; i++)
		where[i] = -1;
	memcpy(order, e->fds, e->n_fds * sizeof(*order));
	qsort(order, e->n_fds, sizeof(*order), cmp_fd_entry);
	for (i = 0; i < e->n_fds; i++)
		if (install_fd(rc, t, rf, order[i], where))
			goto out;
	/* then what refers to other fds of the task (epoll watches), once */
	for (i = 0; i < e->n_fds; i++) {
		FdEntry *f = order[i];
		FileDesc *d = files[f->file_id];

		k = kind_of_desc(d);
		if (!k->install || k->installer(d) != t->pid || installed[f->file_id])
			continue;
		installed[f->file_id] = 1;
		if (k->install(t->pid, f->fd, d))
			goto out;
	}
	ret = 0;
out:
	free(where);
	free(installed);
	free(order);
	return ret;
}

static int fdinfo_session(struct rst_ctx *rc, struct rtask *t)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	FdinfoEntry *e = t->img[PART_FDINFO];
	const struct file_kind *k;
	const FileDesc *d;
	size_t i;

	for (i = 0; e && i < e->n_fds; i++) {
		d = rf->img->files[e->fds[i]->file_id];
		k = kind_of_desc(d);
		if (k->session && k->installer(d) == t->pid &&
		    rf->f[d->id].inherited >= 0)
			return k->session(t->pid, rf->f[d->id].inherited, d);
	}
	return 0;
}

/* In criu, the namespaces filled: what the kinds finish from outside (sockets' addresses). */
static int fdinfo_final(struct rst_ctx *rc, struct rtask *t)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	FdinfoEntry *e = t->img[PART_FDINFO];
	const struct file_kind *k;
	struct rfile *f;
	size_t i;

	for (i = 0; e && i < e->n_fds; i++) {
		f = &rf->f[e->fds[i]->file_id];
		k = kind_of_desc(rf->img->files[e->fds[i]->file_id]);
		if (!k->finish || f->finished || f->first != (pid_t)t->pid)
			continue;
		f->finished = 1;
		if (k->finish(rc, t->pid, t->host_pid, e->fds[i]->fd,
			      rf->img->files[e->fds[i]->file_id]))
			return -1;
	}
	return 0;
}

/* Right before the tree is let go: what the kinds held back until every task was there. */
static int fdinfo_resume(struct rst_ctx *rc, struct rtask *root)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->resume && kinds[i]->resume())
			return -1;
	return 0;
}

static void fdinfo_release(struct rtask *t)
{
	t->img[PART_FDINFO] = NULL;	/* the tree's table owns it */
}

static void fdinfo_release_tree(struct rst_ctx *rc)
{
	struct rfiles *rf = rc->shared[PART_FDINFO];
	int i;

	if (!rf)
		return;
	for (i = 0; i < (int)ARRAY_SIZE(kinds); i++)
		if (kinds[i]->restored)
			kinds[i]->restored(&rf->kind_data[i], !rc->released);
	for (i = 0; i < rf->nr_tasks; i++)
		img_free(IMG_FDINFO, rf->tasks[i].e);
	img_free(IMG_FILES, rf->img);
	free(rf->tasks);
	free(rf->f);
	free(rf);
	rc->shared[PART_FDINFO] = NULL;
}

const struct part part_fdinfo = {
	.name = "fdinfo",
	.id = PART_FDINFO,
	.after_dump = fdinfo_after_dump,
	.check = fdinfo_check,
	.prepare = fdinfo_prepare,
	.dump = fdinfo_dump,
	.dump_tree = fdinfo_dump_tree,
	.load_tree = fdinfo_load_tree,
	.load = fdinfo_load,
	.prefork = fdinfo_prefork,
	.early = fdinfo_early,
	.session = fdinfo_session,
	.child = fdinfo_child,
	.batch = fdinfo_batch,
	.final = fdinfo_final,
	.resume = fdinfo_resume,
	.release = fdinfo_release,
	.release_tree = fdinfo_release_tree,
};
