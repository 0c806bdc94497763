// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces: the one the tree's root made for itself (a container's,
 * or unshare -m), those tasks below it made (unshare: a private /tmp),
 * every mount in them, and the files tasks hold on them.
 *
 * Dump (check hook of each task whose namespace is not its parent's,
 * before anything is changed): its /proc/PID/mountinfo, each mount sorted
 * into how restore makes it again (ns-mnt-scan.c), against criu's
 * namespace for the root's, its parent's for a nested one. A task that
 * joined (setns) a namespace another task made is refused.
 *
 * Restore: the root is born in a copy of criu's namespace (CLONE_NEWNS),
 * and the maker of a nested one unshares a copy of its parent's; each
 * builds its tree in its early hook (ns-mnt-build.c) before it forks, so
 * that its descendants are born in it, and keeps an fd on each mount's
 * root that they open their files, cwd and mappings through (mnt_open()).
 * See Documentation/mounts.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/lsm.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/ns-mnt-build.h"
#include "parts/ns-mnt-scan.h"
#include "parts/ns-mnt-tmpfs.h"
#include "parts/part.h"
#include "task/mounts.h"

/* ---------------------------------------------------------------- dump */

/* Every mount namespace of the tree, and what files of the tree need of them. */
struct mnt_dumps {
	struct mnt_dump **ns;		/* in the order their makers were checked */
	int nr;
	struct proc_mounts criu;	/* criu's own mounts */
	uint32_t contents;		/* tmpfs images numbered across namespaces */
	uint32_t *host_used;		/* criu's mounts files are on */
	size_t nr_host_used;
	HiddenFile **hidden;		/* numbered across namespaces */
	size_t nr_hidden;
};

/* The dump being made, for mnt_dump_reaches(); NULL while every task is in criu's. */
static struct mnt_dumps *cur;

static int collect(struct dump_ctx *dc, struct dtask *t, uint64_t ns)
{
	struct mnt_dump *d = xzalloc(sizeof(*d)), **slot;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);

	slot = d ? xpush(cur->ns, cur->nr) : NULL;
	if (!slot) {
		free(d);
		return -1;
	}
	*slot = d;
	d->ns = ns;
	d->maker = t->pid;
	d->maker_ns = t->ns_pid;
	d->nested = t->parent != NULL;
	d->contents = &cur->contents;
	if (mnt_read_mountinfo(t->pid, &d->ms) ||
	    mnt_read_mountinfo(d->nested ? t->parent->pid : 0, &d->host) ||
	    mnt_scan(d, dc->opts))
		return -1;
	pr_info("Task %d: mount namespace mnt:[%lu] of its own%s, %d mounts, %s (read in %ld us)",
		t->pid, ns, d->nested ? ", nested" : "", d->ms.nr,
		d->inherited ? "a copy of the one it came from" : "its own root",
		(clock_ns(CLOCK_MONOTONIC) - t0) / 1000);
	return 0;
}

static void free_dump(struct mnt_dump *d)
{
	int i;

	for (i = 0; d->e && i < d->ms.nr; i++) {
		free(d->e[i].options);
		free(d->e[i].ext_key);
	}
	free(d->e);
	free(d->host_of);
	free(d->tmpfs);
	free(d->joiners);
	proc_mounts_free(&d->ms);
	proc_mounts_free(&d->host);
	proc_mounts_free(&d->cg);
	free(d);
}

static void free_dumps(struct mnt_dumps *all)
{
	size_t i;

	while (all->nr)
		free_dump(all->ns[--all->nr]);
	free(all->ns);
	free(all->host_used);
	for (i = 0; i < all->nr_hidden; i++) {
		free(all->hidden[i]->path);
		free(all->hidden[i]);
	}
	free(all->hidden);
	proc_mounts_free(&all->criu);
	free(all);
}

/* The dumped namespace holding mount @id, and the mount; NULL if none. */
static struct mnt_dump *dump_of(uint64_t id, struct proc_mount **m)
{
	int i;

	for (i = 0; cur && id && i < cur->nr; i++) {
		*m = proc_mount_by_id(&cur->ns[i]->ms, (int)id);
		if (*m)
			return cur->ns[i];
	}
	return NULL;
}

static struct mnt_dump *dump_by_ns(uint64_t ns)
{
	int i;

	for (i = 0; cur && i < cur->nr; i++)
		if (cur->ns[i]->ns == ns)
			return cur->ns[i];
	return NULL;
}

static const struct mounts_service service;

static int check_threads(struct dtask *t, uint64_t own)
{
	uint64_t th;
	int i;

	for (i = 1; i < t->nr_threads; i++) {
		th = proc_ns_id(t->pid, t->th[i].tid, "mnt");
		if (th != own) {
			pr_err("Task %d: thread %d is in another mount namespace (mnt:[%lu]) "
			       "than its leader; not supported", t->pid, t->th[i].tid, th);
			return -1;
		}
	}
	return 0;
}

static int start_dumps(struct dump_ctx *dc)
{
	if (cur)
		return 0;
	cur = xzalloc(sizeof(*cur));
	if (!cur || mnt_read_mountinfo(0, &cur->criu))
		return -1;
	dc->shared[PART_MNT] = cur;
	return 0;
}

/*
 * @t is in @d's namespace, not its parent's: it joined it (setns), and
 * joins it again at restore once its maker made it. The maker comes
 * before it in the tree's order, so it is no descendant of @t's, which
 * would wait for it for ever.
 */
static int add_joiner(struct mnt_dump *d, struct dtask *t, uint64_t outer)
{
	uint32_t *j = xpush(d->joiners, d->nr_joiners);

	if (!j)
		return -1;
	*j = t->ns_pid;
	pr_info("Task %d joined mount namespace mnt:[%lu] of task %d (its parent %d is in "
		"mnt:[%lu])", t->pid, d->ns, d->maker, t->parent->pid, outer);
	return 0;
}

/*
 * The root may have a mount namespace of its own; a task below it one it
 * made itself (unshare: its parent's is another), which its descendants
 * may share. A task that joined one another task made (setns) is refused.
 */
static int mnt_check(struct dump_ctx *dc, struct dtask *t)
{
	uint64_t own = proc_ns_id(t->pid, 0, "mnt"), outer;

	mounts_offer(&service);
	if (!own || check_threads(t, own))
		return -1;
	if (!t->parent && cur) {
		/* a dump that failed before its dump_tree (one process, several requests) */
		free_dumps(cur);
		dc->shared[PART_MNT] = cur = NULL;
	}
	outer = proc_ns_id(t->parent ? t->parent->pid : 0, 0, "mnt");
	if (own == outer)
		return 0;
	if (t->parent && dump_by_ns(own))
		return add_joiner(dump_by_ns(own), t, outer);
	if (t->parent && own == proc_ns_id(0, 0, "mnt")) {
		pr_err("Task %d is in mount namespace mnt:[%lu], which another task made, not in "
		       "its parent %d's (mnt:[%lu]): it joined it (setns), or its parent unshared "
		       "after forking it; a task below the root may only share its parent's or "
		       "make one of its own: not supported", t->pid, own, t->parent->pid, outer);
		return -1;
	}
	return start_dumps(dc) || collect(dc, t, own);
}

/* A file on a mount of criu's: restore reopens it there, by its path. */
static int host_mount_used(uint32_t id, pid_t pid, const char *what)
{
	uint32_t *n;
	size_t i;

	for (i = 0; i < cur->nr_host_used; i++)
		if (cur->host_used[i] == id)
			return 1;
	n = xpush(cur->host_used, cur->nr_host_used);
	if (!n)
		return 0;
	*n = id;
	pr_info("Task %d: %s is on mount %u of criu's namespace: reopened there", pid, what, id);
	return 1;
}

static int ns_mnt_dump_reaches(pid_t pid, uint64_t mnt_id, const char *what)
{
	struct proc_mount *m;

	if (!cur || !mnt_id || dump_of(mnt_id, &m))
		return 1;
	if (proc_mount_by_id(&cur->criu, (int)mnt_id))
		return host_mount_used(mnt_id, pid, what);
	pr_err("Task %d: %s is on mount %lu, which is in none of the tree's mount namespaces "
	       "nor in criu's", pid, what, mnt_id);
	return 0;
}

/*
 * The mount @path leads to in the task's view is a copy of @m, made when a
 * nested namespace was: the same filesystem, part and place. Not hidden.
 */
static int copy_of(const struct proc_mount *m, uint64_t there)
{
	struct proc_mount *c;

	return there && dump_of(there, &c) && mnt_dev_of(c) == mnt_dev_of(m) &&
	       !strcmp(c->root, m->root) && !strcmp(c->mountpoint, m->mountpoint);
}

static int ns_mnt_dump_hidden(pid_t pid, uint64_t mnt_id, const char *path, unsigned int flags)
{
	struct proc_mount *m = NULL;
	struct mnt_dump *d = dump_of(mnt_id, &m);
	char inside[PATH_MAX + 32];
	uint64_t there;
	HiddenFile *h;
	const char *rel;

	if (!d)
		return 0;
	snprintf(inside, sizeof(inside), "/proc/%d/root%s", pid, path);
	there = mnt_id_of(inside);
	if (there == mnt_id || copy_of(m, there))
		return 0;
	rel = mnt_below(m->mountpoint, path);
	if (!rel || d->e[m - d->ms.m].kind == MOUNT_KIND__MNT_INHERITED) {
		pr_err("Task %d: %s on mount %lu is hidden by another mount, on a mount %s; "
		       "not supported", pid, path, mnt_id, rel ? "of criu's namespace" :
		       "it is not below");
		return -1;
	}
	h = xmalloc(sizeof(*h));
	if (!h || xgrow(cur->hidden, cur->nr_hidden) ||
	    (hidden_file__init(h), !(h->path = xstrdup(rel)))) {
		free(h);
		return -1;
	}
	h->mnt = mnt_id;
	h->flags = flags;
	cur->hidden[cur->nr_hidden++] = h;
	pr_info("Task %d: %s is hidden by another mount: opened as the tree is built", pid,
		path);
	return cur->nr_hidden;
}

static MntnsEntry *entry_of(struct mnt_dump *d)
{
	MntnsEntry *e = xmalloc(sizeof(*e));
	int i;

	if (!e)
		return NULL;
	mntns_entry__init(e);
	e->mounts = xmalloc((d->ms.nr + 1) * sizeof(*e->mounts));
	if (!e->mounts) {
		free(e);
		return NULL;
	}
	for (i = 0; i < d->ms.nr; i++)
		e->mounts[i] = &d->e[i];
	e->n_mounts = d->ms.nr;
	e->ns_id = d->ns;
	e->maker = d->maker_ns;
	e->n_joiners = d->nr_joiners;
	e->joiners = d->joiners;
	return e;
}

/* The files of every tmpfs, namespace by namespace, into one data store. */
static int dump_contents(struct dump_ctx *dc, struct mnt_dumps *all)
{
	int i, n = 0;

	for (i = 0; i < all->nr; i++) {
		if (!all->ns[i]->nr_tmpfs)
			continue;
		if (tmpfs_dump_all(dc->dirfd, all->ns[i]->maker, all->ns[i]->tmpfs,
				   all->ns[i]->nr_tmpfs, n++))
			return -1;
	}
	return n ? tmpfs_dump_sum(dc->dirfd) : 0;
}

/*
 * mnt.img: the root's namespace (no mounts when the root is in criu's),
 * the nested ones in it, in the order their makers come in the tree.
 */
static int write_all(struct dump_ctx *dc, struct mnt_dumps *all, MntnsEntry *top)
{
	MntnsEntry **nested = xzalloc((all->nr + 1) * sizeof(*nested));
	int i, ret = -1, n = 0, mounts = 0;

	if (!nested)
		return -1;
	for (i = 0; i < all->nr; i++) {
		mounts += all->ns[i]->ms.nr;
		if (!all->ns[i]->nested)
			continue;
		nested[n] = entry_of(all->ns[i]);
		if (!nested[n++])
			goto out;
	}
	top->n_nested = n;
	top->nested = nested;
	top->n_host_mounts = all->nr_host_used;
	top->host_mounts = all->host_used;
	top->n_hidden = all->nr_hidden;
	top->hidden = all->hidden;
	ret = img_write(dc->dirfd, IMG_MNTNS, 0, &top->base);
	if (!ret)
		ret = dump_contents(dc, all);
	/* every task holds an fd on each mount's root, each hidden file, criu's /proc and root */
	dc->restore_shared += mounts + all->nr_hidden + 1 + !!all->nr_host_used;
out:
	for (i = 0; i < n; i++) {
		if (nested[i])
			free(nested[i]->mounts);
		free(nested[i]);
	}
	free(nested);
	return ret;
}

static int mnt_dump_tree(struct dump_ctx *dc)
{
	struct mnt_dumps *all = dc->shared[PART_MNT];
	MntnsEntry *top = NULL, empty = MNTNS_ENTRY__INIT;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int i, ret = -1;

	if (!all)
		return 0;
	for (i = 0; i < all->nr && all->ns[i]->nested; i++)
		;
	top = i < all->nr ? entry_of(all->ns[i]) : &empty;
	if (!top)
		goto out;
	if (top == &empty) {
		/* the root is in criu's namespace: only nested ones */
		empty.ns_id = proc_ns_id(0, 0, "mnt");
	}
	ret = write_all(dc, all, top);
	if (!ret)
		pr_info("%d mount namespaces written, with the files of their tmpfs, in %ld us",
			all->nr, (clock_ns(CLOCK_MONOTONIC) - t0) / 1000);
	if (top != &empty) {
		free(top->mounts);
		free(top);
	}
out:
	free_dumps(all);
	dc->shared[PART_MNT] = cur = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

/* The root's namespace (rst.ns is mnt.img's entry; no mounts: the root is in criu's)... */
static struct mnt_restore rst = { .store = -1, .proc_fd = -1, .host_root = -1 };
/* ...and those tasks below it made, each built by its maker in a copy of its parent's. */
static struct mnt_restore *nest;
static int nr_nest;

static struct rmount *by_id(struct mnt_restore *r, uint32_t id)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->m[i].e->id == id)
			return &r->m[i];
	return NULL;
}

/* Mount @id in whichever namespace of the tree it is (ids are unique across them). */
static struct rmount *mount_by_id(uint32_t id)
{
	struct rmount *m = by_id(&rst, id);
	int i;

	for (i = 0; !m && i < nr_nest; i++)
		m = by_id(&nest[i], id);
	return m;
}

static const char *invalid(struct mnt_restore *r, int i)
{
	MountEntry *e = r->m[i].e;
	int j;

	if (e->mountpoint[0] != '/' || e->root[0] != '/')
		return "a relative path";
	if (e->kind < MOUNT_KIND__MNT_ROOT || e->kind > MOUNT_KIND__MNT_EXTERNAL)
		return "an unknown kind";
	if (r != &rst && (e->kind == MOUNT_KIND__MNT_ROOT || e->kind == MOUNT_KIND__MNT_EXTERNAL))
		return "a kind a nested namespace can't have";
	if ((e->kind == MOUNT_KIND__MNT_ROOT || (e->kind == MOUNT_KIND__MNT_INHERITED &&
	     !e->parent)) != !e->parent)
		return "a root that is not one, or two roots";
	if (e->parent && !by_id(r, e->parent))
		return "a parent not in the list";
	if (e->kind == MOUNT_KIND__MNT_BIND && (!e->has_bind_of || !by_id(r, e->bind_of)))
		return "a bind of a mount not in the list";
	if (e->kind == MOUNT_KIND__MNT_EXTERNAL && !e->ext_key)
		return "an external mount without a key";
	if (e->kind == MOUNT_KIND__MNT_NEW && !e->options)
		return "a new mount without options";
	for (j = 0; j < i; j++)
		if (r->m[j].e->id == e->id)
			return "an id used twice";
	if (r != &rst && by_id(&rst, e->id))
		return "the id of a mount of the root's namespace";
	for (j = 0; r != &rst && &nest[j] < r; j++)
		if (by_id(&nest[j], e->id))
			return "the id of a mount of another namespace";
	return NULL;
}

/* Where external mount @e comes from: --external mnt[KEY]:PATH, or its own key (mnt[]). */
static const char *ext_source(const struct opts *o, const MountEntry *e)
{
	const char *v = mnt_ext_value(o, e->ext_key);

	if (v)
		return v;
	if (e->ext_auto && e->ext_key[0] == '/')
		return e->ext_key;
	pr_err("External mount at %s (key %s): say where it comes from with "
	       "--external mnt[%s]:PATH", e->mountpoint, e->ext_key, e->ext_key);
	return NULL;
}

/* 1 when criu's root is the initramfs' rootfs, which pivot_root() can't leave */
static int criu_on_rootfs(void)
{
	struct proc_mounts ms;
	int i, ret = 0;

	if (proc_read_mountinfo(0, &ms))
		return -1;
	for (i = 0; i < ms.nr; i++)
		ret |= ms.m[i].parent == ms.m[i].id && !strcmp(ms.m[i].mountpoint, "/");
	proc_mounts_free(&ms);
	return ret;
}

static int check_root(struct rst_ctx *rc, const MountEntry *e)
{
	int on_rootfs;

	if (!rc->opts->root) {
		pr_err("The tree's mount namespace has a root of its own (%s %s at the "
		       "dump): give it with --root DIR", e->fstype, e->root);
		return -1;
	}
	on_rootfs = criu_on_rootfs();
	if (on_rootfs < 0)
		return -1;
	if (on_rootfs) {
		pr_err("The tree's mount namespace has a root of its own (%s %s at the dump), "
		       "but criu runs on the initramfs' rootfs, which pivot_root() can't "
		       "leave for --root %s: run criu on a root filesystem mounted over it "
		       "(switch_root)", e->fstype, e->root, rc->opts->root);
		return -1;
	}
	return 0;
}

static int check_tree(struct rst_ctx *rc, struct mnt_restore *r)
{
	const char *why;
	int i, roots = 0;

	for (i = 0; i < r->nr; i++) {
		MountEntry *e = r->m[i].e;

		why = invalid(r, i);
		if (why) {
			pr_err("Image mnt.img: mount %u at %.200s of mnt:[%lu] has %s", e->id,
			       e->mountpoint, r->ns->ns_id, why);
			return -1;
		}
		roots += !e->parent;
		if (e->kind == MOUNT_KIND__MNT_EXTERNAL) {
			r->ext_path[i] = ext_source(rc->opts, e);
			if (!r->ext_path[i])
				return -1;
		}
		if (e->kind == MOUNT_KIND__MNT_ROOT && check_root(rc, e))
			return -1;
	}
	/* no mounts: the root is in criu's namespace, and some task below it in another */
	if (roots != 1 && (r != &rst || r->nr || !r->ns->n_nested)) {
		pr_err("Image mnt.img: mnt:[%lu] has %d root mounts", r->ns->ns_id, roots);
		return -1;
	}
	return 0;
}

/* A joiner gets the namespace and its mounts' fds in one message (SCM_MAX_FD is 253). */
#define JOIN_MAX_MOUNTS	250

/* One namespace of the image, @e, ready to be built (its hidden files: the root's list). */
static int load_ns(struct rst_ctx *rc, struct mnt_restore *r, MntnsEntry *e)
{
	int i;

	r->ns = e;
	r->nr = e->n_mounts;
	r->maker = e->maker;
	r->root = rc->opts->root;
	r->context = rc->opts->lsm_mount_context;
	r->store = r->proc_fd = r->host_root = -1;
	r->join[0] = r->join[1] = -1;
	r->hidden = rst.ns->hidden;
	r->n_hidden = rst.ns->n_hidden;
	r->m = xzalloc((r->nr + 1) * sizeof(*r->m));
	r->ext_path = xzalloc((r->nr + 1) * sizeof(*r->ext_path));
	r->ext_fd = xzalloc((r->nr + 1) * sizeof(*r->ext_fd));
	if (!r->m || !r->ext_path || !r->ext_fd)
		return -1;
	for (i = 0; i < r->nr; i++) {
		r->m[i].e = e->mounts[i];
		r->m[i].fd = -1;
		r->m[i].attrs = -1;
	}
	for (i = 0; i < (int)e->n_joiners; i++)
		if (!e->joiners[i] || e->joiners[i] == e->maker || r->nr > JOIN_MAX_MOUNTS) {
			pr_err("Image mnt.img: mnt:[%lu] has joiner %u: %s", e->ns_id,
			       e->joiners[i], r->nr > JOIN_MAX_MOUNTS ? "too many mounts to "
			       "send it" : "not a task that can join it");
			return -1;
		}
	return 0;
}

static const char *invalid_nested(MntnsEntry *n, int i)
{
	int j;

	if (!n->maker || n->maker == rst.maker)
		return "the root as its maker";
	if (n->n_nested || n->n_hidden || n->n_host_mounts)
		return "lists only the root's entry has";
	for (j = 0; j < i; j++)
		if (nest[j].maker == n->maker)
			return "a maker that made another one";
	return NULL;
}

static int load_nested(struct rst_ctx *rc)
{
	const char *why;
	int i;

	nr_nest = rst.ns->n_nested;
	nest = xzalloc((nr_nest + 1) * sizeof(*nest));
	if (!nest)
		return -1;
	for (i = 0; i < nr_nest; i++) {
		why = invalid_nested(rst.ns->nested[i], i);
		if (why) {
			pr_err("Image mnt.img: nested namespace mnt:[%lu] has %s",
			       rst.ns->nested[i]->ns_id, why);
			return -1;
		}
		if (load_ns(rc, &nest[i], rst.ns->nested[i]) || check_tree(rc, &nest[i]))
			return -1;
		pr_info("Mount namespace mnt:[%lu] of task %u, nested: %d mounts",
			nest[i].ns->ns_id, nest[i].maker, nest[i].nr);
	}
	return 0;
}

static int load_hidden(void)
{
	int i;

	rst.hidden_fd = xmalloc((rst.ns->n_hidden + 1) * sizeof(int));
	if (!rst.hidden_fd)
		return -1;
	for (i = 0; i < (int)rst.ns->n_hidden; i++) {
		rst.hidden_fd[i] = -1;
		if (!mount_by_id(rst.ns->hidden[i]->mnt) || rst.ns->hidden[i]->path[0] == '/') {
			pr_err("Image mnt.img: hidden file #%d is on no mount of the list", i);
			return -1;
		}
	}
	for (i = 0; i < nr_nest; i++)
		nest[i].hidden_fd = rst.hidden_fd;
	return 0;
}

static int mnt_load_tree(struct rst_ctx *rc)
{
	struct mnt_restore *r = &rst;
	MntnsEntry *e;
	int ret;

	mounts_offer(&service);
	ret = img_read(rc->dirfd, IMG_MNTNS, 0, (void **)&e, 1);
	if (ret <= 0) {
		if (!ret && rc->opts->root && strcmp(rc->opts->root, "/"))
			pr_info("--root %s: the tree has no mount namespace of its own; unused",
				rc->opts->root);
		return ret;
	}
	rst.ns = e;
	if (rc->opts->lsm_mount_context && (!lsm_active() || strcmp(lsm_active(), "selinux"))) {
		pr_err("--lsm-mount-context %s: this machine runs no SELinux, whose mount "
		       "option context= it sets", rc->opts->lsm_mount_context);
		return -1;
	}
	if (load_ns(rc, r, e) || check_tree(rc, r) || load_nested(rc) || load_hidden())
		return -1;
	if (!r->nr)
		return 0;	/* the root stays in criu's */
	/* the root is born in a copy of criu's; nothing done in it comes out */
	rc->root_flags |= CLONE_NEWNS;
	pr_info("Mount namespace mnt:[%lu] of task %u: %d mounts", r->ns->ns_id, r->maker,
		r->nr);
	return 0;
}

/* A namespace tasks joined (setns): its maker sends them what they need on this. */
static int join_channel(struct rst_ctx *rc, struct mnt_restore *r)
{
	int sk[2];

	if (!r->ns->n_joiners)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("Can't make the channel to the tasks that join mnt:[%lu]", r->ns->ns_id);
		return -1;
	}
	r->join[0] = rst_inherit_fd(rc, sk[0]);
	r->join[1] = rst_inherit_fd(rc, sk[1]);
	return r->join[0] < 0 || r->join[1] < 0 ? -1 : 0;
}

/*
 * For every task: criu's /proc (the tree's own takes its place once the
 * root entered the tree), and criu's root when some task held files on
 * criu's mounts.
 */
static int mnt_prefork(struct rst_ctx *rc)
{
	int i;

	if (!rst.ns)
		return 0;
	rc->proc_fd = rst_inherit_fd(rc, open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (rc->proc_fd < 0) {
		pr_perror("Can't open /proc for the new tasks");
		return -1;
	}
	rst.proc_fd = rc->proc_fd;
	if (join_channel(rc, &rst))
		return -1;
	for (i = 0; i < nr_nest; i++)
		if (join_channel(rc, &nest[i]))
			return -1;
	if (!rst.ns->n_host_mounts)
		return 0;
	rst.host_root = rst_inherit_fd(rc, open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (rst.host_root < 0) {
		pr_perror("Can't open criu's root for the new tasks");
		return -1;
	}
	return 0;
}

static int on_host(uint64_t mnt_id)
{
	size_t i;

	for (i = 0; rst.ns && i < rst.ns->n_host_mounts; i++)
		if (rst.ns->host_mounts[i] == mnt_id)
			return 1;
	return 0;
}

/* Namespace @r, just built: its fds where every task forked from here finds them. */
static int keep_fds(struct rst_ctx *rc, struct mnt_restore *r)
{
	int i;

	for (i = 0; i < r->nr; i++) {
		if (r->m[i].fd < 0)
			continue;
		r->m[i].fd = rst_inherit_fd(rc, r->m[i].fd);
		if (r->m[i].fd < 0)
			return -1;
	}
	for (i = 0; i < (int)r->n_hidden; i++) {
		if (!by_id(r, r->hidden[i]->mnt))
			continue;	/* another namespace's */
		r->hidden_fd[i] = rst_inherit_fd(rc, r->hidden_fd[i]);
		if (r->hidden_fd[i] < 0)
			return -1;
	}
	return 0;
}

/* Each joiner's message: the mounts' indexes as data, the namespace and their fds. */
static int send_joiners(struct rtask *t, struct mnt_restore *r)
{
	char ctl[CMSG_SPACE((JOIN_MAX_MOUNTS + 1) * sizeof(int))];
	int idx[JOIN_MAX_MOUNTS + 1], fds[JOIN_MAX_MOUNTS + 1], n = 0, i, ret = 0;
	struct iovec iov = { .iov_base = idx };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl };
	struct cmsghdr *c;

	if (!r->ns->n_joiners)
		return 0;
	fds[n++] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fds[0] < 0) {
		pr_perror("Task %d: can't open its mount namespace for its joiners", t->pid);
		return -1;
	}
	for (i = 0; i < r->nr; i++)
		if (r->m[i].fd >= 0) {
			idx[n - 1] = i;
			fds[n++] = r->m[i].fd;
		}
	iov.iov_len = (n - 1) * sizeof(int) + 1;	/* a byte at least */
	mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	for (i = 0; !ret && i < (int)r->ns->n_joiners; i++)
		if (sendmsg(r->join[0], &mh, MSG_NOSIGNAL) < 0) {
			pr_perror("Task %d: can't send mnt:[%lu] to task %u, which joins it",
				  t->pid, r->ns->ns_id, r->ns->joiners[i]);
			ret = -1;
		}
	close(fds[0]);
	return ret;
}

static int build(struct rst_ctx *rc, struct rtask *t, struct mnt_restore *r)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);

	r->proc_fd = rc->proc_fd;
	r->dirfd = rc->dirfd;
	r->ids = rc->idmap;
	if (mnt_build(r))
		return -1;
	pr_info("Task %d: mount tree mnt:[%lu] of %d mounts built and entered in %ld us", t->pid,
		r->ns->ns_id, r->nr, (clock_ns(CLOCK_MONOTONIC) - t0) / 1000);
	return keep_fds(rc, r) || send_joiners(t, r);
}

/* The fds of a joiner's message @mh (@n bytes of indexes), taken as @r's. */
static int take_mounts(struct rst_ctx *rc, struct mnt_restore *r, struct msghdr *mh,
		       const int *idx, ssize_t n)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(mh);
	int nfds, i, *fds;

	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	fds = (int *)CMSG_DATA(c);
	if (nfds < 1 || nfds - 1 != n / (ssize_t)sizeof(int))
		return -1;
	if (setns(fds[0], CLONE_NEWNS)) {
		pr_perror("Can't join mount namespace mnt:[%lu]", r->ns->ns_id);
		return -1;
	}
	close(fds[0]);
	for (i = 0; i < r->nr; i++)
		r->m[i].done = 1;
	for (i = 1; i < nfds; i++) {
		if (idx[i - 1] < 0 || idx[i - 1] >= r->nr)
			return -1;
		r->m[idx[i - 1]].fd = rst_inherit_fd(rc, fds[i]);
		if (r->m[idx[i - 1]].fd < 0)
			return -1;
	}
	return 0;
}

/* A task that joined @r's namespace (setns): again, once its maker made it. */
static int join(struct rst_ctx *rc, struct rtask *t, struct mnt_restore *r)
{
	char ctl[CMSG_SPACE((JOIN_MAX_MOUNTS + 1) * sizeof(int))];
	int idx[JOIN_MAX_MOUNTS + 1];
	struct iovec iov = { .iov_base = idx, .iov_len = sizeof(idx) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct pollfd p = { .fd = r->join[1], .events = POLLIN };
	ssize_t n;

	/* its maker is no descendant of ours (the dump saw to that): it comes */
	if (poll(&p, 1, 30 * 1000) != 1 || (n = recvmsg(r->join[1], &mh, MSG_CMSG_CLOEXEC)) <= 0) {
		pr_err("Task %d: mount namespace mnt:[%lu], which it joins, never came from its "
		       "maker %u", t->pid, r->ns->ns_id, r->maker);
		return -1;
	}
	if (take_mounts(rc, r, &mh, idx, n - 1)) {
		pr_err("Task %d: can't take mount namespace mnt:[%lu] from task %u", t->pid,
		       r->ns->ns_id, r->maker);
		return -1;
	}
	pr_info("Task %d joined mount namespace mnt:[%lu] of task %u", t->pid, r->ns->ns_id,
		r->maker);
	return 0;
}

static int joins(const struct mnt_restore *r, uint32_t pid)
{
	size_t i;

	for (i = 0; r->ns && i < r->ns->n_joiners; i++)
		if (r->ns->joiners[i] == pid)
			return 1;
	return 0;
}

/*
 * The parent's mounts that @r's are copies of, as they are now: a root
 * from --root or an external mount has another root and source than at
 * the dump. Those with no fd here (criu's) are as dumped.
 */
static void find_live(struct mnt_restore *r, struct proc_mounts *now)
{
	struct rmount *p;
	struct statx sx;
	int i;

	for (i = 0; i < r->nr; i++) {
		if (!r->m[i].e->has_copy_of)
			continue;
		p = mount_by_id(r->m[i].e->copy_of);
		if (!p || p->fd < 0 || statx(p->fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) ||
		    !(sx.stx_mask & STATX_MNT_ID))
			continue;
		r->m[i].live = proc_mount_by_id(now, (int)sx.stx_mnt_id);
	}
}

/* A copy of the parent's namespace (restored already), made the dumped one. */
static int build_nested(struct rst_ctx *rc, struct rtask *t, struct mnt_restore *r)
{
	struct proc_mounts now;
	int ret, i;

	if (mnt_read_mountinfo(0, &now))
		return -1;
	find_live(r, &now);
	ret = unshare(CLONE_NEWNS);
	if (ret)
		pr_perror("Task %d: can't make its mount namespace mnt:[%lu]", t->pid,
			  r->ns->ns_id);
	else
		ret = build(rc, t, r);
	for (i = 0; i < r->nr; i++)
		r->m[i].live = NULL;
	proc_mounts_free(&now);
	return ret;
}

/*
 * In the maker, before it forks: the tree, entered. Its mounts' roots stay
 * open in every task, for the files opened by path in the mount they were
 * on (a mount on top would hide them). The maker of a nested namespace
 * makes it as it did, a copy of its parent's (restored already), which
 * its descendants are born in.
 */
static int mnt_early(struct rst_ctx *rc, struct rtask *t)
{
	int i;

	if (!rst.ns)
		return 0;
	if (rst.nr && (uint32_t)t->pid == rst.maker)
		return build(rc, t, &rst);
	if (joins(&rst, t->pid))
		return join(rc, t, &rst);
	for (i = 0; i < nr_nest; i++) {
		if ((uint32_t)t->pid == nest[i].maker)
			return build_nested(rc, t, &nest[i]);
		if (joins(&nest[i], t->pid))
			return join(rc, t, &nest[i]);
	}
	return 0;
}

static int ns_mnt_open_hidden(pid_t pid, uint32_t n, const char *path)
{
	int fd;

	if (!rst.ns || !n || n > rst.ns->n_hidden || rst.hidden_fd[n - 1] < 0) {
		pr_err("Task %d: %s: no such hidden file #%u in mnt.img", pid, path, n);
		return -1;
	}
	fd = fcntl(rst.hidden_fd[n - 1], F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		pr_perror("Task %d: can't take %s", pid, path);
	return fd;
}

/* Below a mount that hides it: through a bare clone of @m, without what is on top. */
static int open_hidden(pid_t pid, struct rmount *m, const char *rel, int flags)
{
	int bare, fd;

	bare = open_tree(m->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (bare < 0)
		return -1;
	fd = openat(bare, rel, flags | O_CLOEXEC);
	close(bare);
	if (fd >= 0) {
		/* the lowest free number, as an open() by path would have given */
		int low = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		close(fd);
		fd = low;
	}
	if (fd >= 0)
		pr_info("Task %d: %s is under another mount: opened in a clone of mount %u",
			pid, rel, m->e->id);
	return fd;
}

static int ns_mnt_tree_has_ns(void)
{
	return rst.ns != NULL;
}

/* The nested namespace @m is in, when this task is not in it (its maker did not fork it). */
static struct mnt_restore *unbuilt_nested(struct rmount *m)
{
	int i;

	for (i = 0; i < nr_nest; i++)
		if (m >= nest[i].m && m < nest[i].m + nest[i].nr)
			return nest[i].m[0].done ? NULL : &nest[i];
	return NULL;
}

static int ns_mnt_open(pid_t pid, uint64_t mnt_id, const char *path, int flags)
{
	struct rmount *m = rst.ns && mnt_id ? mount_by_id((uint32_t)mnt_id) : NULL;
	const char *rel = m ? mnt_below(m->e->mountpoint, path) : NULL;
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
	};
	char self[64];
	int fd;

	if (!m && on_host(mnt_id) && rst.host_root >= 0 && path[0] == '/')
		/* from criu's root, through criu's mounts: the very file held */
		return openat(rst.host_root, path[1] ? path + 1 : ".", flags | O_CLOEXEC);
	if (m && !m->done && unbuilt_nested(m)) {
		pr_err("Task %d: %s is on mount %lu at %s of the nested mount namespace "
		       "mnt:[%lu], which task %u makes: a file shared with tasks outside it "
		       "(opened before they fork) is not supported", pid, path, mnt_id,
		       m->e->mountpoint, unbuilt_nested(m)->ns->ns_id, unbuilt_nested(m)->maker);
		errno = EXDEV;
		return -1;
	}
	if (!m || m->fd < 0 || !rel) {
		if (rst.ns && mnt_id)
			pr_debug("Task %d: %s on mount %lu: opened by its path", pid, path,
				 mnt_id);
		return open(path, flags | O_CLOEXEC);
	}
	if (!*rel) {
		/* the mount's root itself, maybe a file: reopened through criu's /proc */
		snprintf(self, sizeof(self), "self/fd/%d", m->fd);
		return openat(rst.proc_fd, self, flags | O_CLOEXEC);
	}
	if (flags & O_CREAT)
		how.mode = 0600;
	fd = syscall(SYS_openat2, m->fd, rel, &how, sizeof(how));
	if (fd < 0 && errno == EXDEV)
		fd = open_hidden(pid, m, rel, flags);
	return fd;
}

static void free_rst(struct mnt_restore *r)
{
	free(r->m);
	free(r->ext_path);
	free(r->ext_fd);
}

static void mnt_release_tree(struct rst_ctx *rc)
{
	int i;

	for (i = 0; i < nr_nest; i++)
		free_rst(&nest[i]);
	free(nest);
	nest = NULL;
	nr_nest = 0;
	free_rst(&rst);
	free(rst.hidden_fd);
	img_free(IMG_MNTNS, rst.ns);
	memset(&rst, 0, sizeof(rst));
	rst.store = rst.proc_fd = rst.host_root = -1;
}

static int ns_mnt_maker_of(uint64_t mnt_id)
{
	int i;

	for (i = 0; mnt_id && i < nr_nest; i++)
		if (by_id(&nest[i], (uint32_t)mnt_id))
			return nest[i].maker;
	return 0;
}

/* What the parts that name files by their path ask (task/mounts.h). */
static const struct mounts_service service = {
	.dump_reaches = ns_mnt_dump_reaches,
	.dump_hidden = ns_mnt_dump_hidden,
	.open = ns_mnt_open,
	.open_hidden = ns_mnt_open_hidden,
	.tree_has_ns = ns_mnt_tree_has_ns,
	.maker_of = ns_mnt_maker_of,
};

const struct part part_mnt = {
	.name = "mnt",
	.id = PART_MNT,
	.check = mnt_check,
	.dump_tree = mnt_dump_tree,
	.load_tree = mnt_load_tree,
	.prefork = mnt_prefork,
	.early = mnt_early,
	.release_tree = mnt_release_tree,
};
