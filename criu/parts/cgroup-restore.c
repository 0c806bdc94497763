// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroups, the restore half (cgroup.c is the dump's).
 *
 * The tree's root in each hierarchy is --cgroup-root's, else the dumped
 * one (criu's own cgroup here when it was criu's own at dump). criu makes
 * the cgroups before the first fork (prefork) as --manage-cgroups says:
 * none and props want every recorded cgroup to exist, soft and full create
 * what is missing, strict creates every one and wants none there; props,
 * full and strict write every cgroup's properties, soft those of the ones
 * it created, none and ignore no property (ignore touches no cgroup at
 * all). Cgroups at or above criu's own are never created nor written.
 *
 * Each task joins its cgroups itself, first thing (early hook), writing
 * to cgroup.procs through an fd on each hierarchy that every task
 * inherits: it is born in the cgroups of whoever forked it and moves only
 * where they differ. The root is put in its first cgroups by criu, from
 * outside (forked hook), before it runs anything, as runtimes place a
 * container's init: what it makes (its namespaces, its mounts) is charged
 * there. (New tasks have criu's credentials until their batch sets their
 * own: in a user namespace of their own they can still move themselves.) A task that made a cgroup namespace first joins the
 * namespace's root, unshares it there, then goes on to its own cgroups:
 * the namespace is rooted where it was and its children are born into
 * it. Threads in other cgroups than their leader (v1, v2 threaded) are
 * moved by criu once they exist (final hook).
 *
 * A failed restore removes every cgroup it created, once the tasks are
 * gone, last made first.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/cgroup-props.h"
#include "parts/cgroup-restore.h"
#include "parts/part.h"

#define RMDIR_WAIT_MS	2000	/* for the last tasks of a failed restore to leave */

struct cg_hier {
	CgroupHierarchy *h;
	const char *name;	/* for messages */
	char *root;		/* the tree's root here */
	char *mine;		/* criu's own cgroup */
	int fd;			/* the hierarchy, at the same number in every task (the
				   driver closes it: rst_inherit_fd) */
	int used;		/* some task moves, or some cgroup is made, in it */
};

struct cg_made {
	int h;
	char *abs;
};

struct cg_rst {
	CgroupEntry *e;
	CgroupTask **by_pid;	/* the tasks, sorted by pid */
	struct cg_hier *h;
	struct cg_made *made;	/* what criu created, in order */
	int nr_made;
	int ignore;		/* --manage-cgroups=ignore */
};

/* A path for openat() on a hierarchy's root. */
static const char *at(const char *abs)
{
	return strcmp(abs, "/") ? abs + 1 : ".";
}

static int controllers_ok(const char *c)
{
	return strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789_=,.-") == strlen(c) &&
	       *c != ',' && strlen(c) < 256;
}

static int check_dirs(const CgroupHierarchy *h)
{
	const char *prev = NULL;
	size_t i, j;

	for (i = 0; i < h->n_dirs; i++) {
		const CgroupDir *d = h->dirs[i];

		if (!cg_path_ok(d->path, 0) || (prev && strcmp(prev, d->path) >= 0) ||
		    d->mode > 07777) {
			pr_err("Image cgroup.img: cgroup '%s' of the %s hierarchy is not a cgroup "
			       "path in order", d->path, cgfs_name(h->controllers));
			return -1;
		}
		for (j = 0; j < d->n_props; j++)
			if (!cgprops_known(h->controllers, d->props[j]->name)) {
				pr_err("Image cgroup.img: cgroup '%s' of the %s hierarchy has a "
				       "property %s criu does not write", d->path,
				       cgfs_name(h->controllers), d->props[j]->name);
				return -1;
			}
		prev = d->path;
	}
	return 0;
}

static int validate(const CgroupEntry *e)
{
	size_t i, j;

	for (i = 0; i < e->n_hierarchies; i++) {
		const CgroupHierarchy *h = e->hierarchies[i];

		if (!controllers_ok(h->controllers) || !cg_path_ok(h->root, 1)) {
			pr_err("Image cgroup.img: hierarchy %zu is not a cgroup hierarchy", i);
			return -1;
		}
		if (check_dirs(h))
			return -1;
	}
	for (i = 0; i < e->n_sets; i++) {
		if (e->sets[i]->n_paths != e->n_hierarchies)
			goto bad;
		for (j = 0; j < e->n_hierarchies; j++)
			if (!cg_path_ok(e->sets[i]->paths[j], 0))
				goto bad;
	}
	for (i = 0; i < e->n_tasks; i++) {
		const CgroupTask *t = e->tasks[i];

		if (t->set >= e->n_sets || (t->has_ns_root && (!t->ns_root ||
					    t->ns_root > e->n_sets)))
			goto bad;
		for (j = 0; j < t->n_threads; j++)
			if (t->threads[j]->set >= e->n_sets)
				goto bad;
	}
	return 0;
bad:
	pr_err("Image cgroup.img: a cgroup set or a task names what is not there");
	return -1;
}

static int cmp_task(const void *a, const void *b)
{
	const CgroupTask *x = *(CgroupTask *const *)a, *y = *(CgroupTask *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Whether every set of the image is the root itself in hierarchy @i. */
static int all_at_root(const CgroupEntry *e, size_t i)
{
	size_t s;

	for (s = 0; s < e->n_sets; s++)
		if (*e->sets[s]->paths[i])
			return 0;
	return 1;
}

static int map_hier(struct rst_ctx *rc, struct cg_rst *r, struct proc_cgroup *mine, size_t i)
{
	struct cg_hier *ch = &r->h[i];
	CgroupHierarchy *h = r->e->hierarchies[i];
	const char *here = proc_cgroup_path(mine, h->controllers);
	const char *opt = cg_root_for(rc->opts, h->controllers);

	ch->h = h;
	ch->fd = -1;
	ch->name = cgfs_name(h->controllers);
	if (opt && !cg_path_ok(opt, 1)) {
		pr_err("--cgroup-root %s is not an absolute cgroup path (no '.' nor '..')", opt);
		return -1;
	}
	if (!here) {
		if (h->root_is_criu && !h->n_dirs && all_at_root(r->e, i) && !opt)
			return 0;	/* the tree was only where criu was: nothing to do */
		pr_err("The images' %s cgroup hierarchy does not exist here; the tree's "
		       "cgroups can't be restored (--manage-cgroups=ignore leaves them)",
		       ch->name);
		return -1;
	}
	ch->mine = xstrdup(here);
	ch->root = xstrdup(opt ? opt : h->root_is_criu ? here : h->root);
	if (!ch->mine || !ch->root)
		return -1;
	if (opt)
		pr_info("The tree's %s cgroup root is %s (--cgroup-root; it was %s)", ch->name,
			opt, h->root);
	ch->used = h->n_dirs || strcmp(ch->root, ch->mine) || !all_at_root(r->e, i);
	return 0;
}

int cg_load_tree(struct rst_ctx *rc)
{
	struct proc_cgroup mine;
	struct cg_rst *r;
	size_t i;
	int ret;

	r = xzalloc(sizeof(*r));
	if (!r)
		return -1;
	rc->shared[PART_CGROUP] = r;
	ret = img_read(rc->dirfd, IMG_CGROUP, 0, (void **)&r->e, 1);
	if (ret <= 0)
		return ret;
	if (validate(r->e))
		return -1;
	r->by_pid = xmalloc((r->e->n_tasks + 1) * sizeof(*r->by_pid));
	r->h = xzalloc((r->e->n_hierarchies + 1) * sizeof(*r->h));
	if (!r->by_pid || !r->h)
		return -1;
	memcpy(r->by_pid, r->e->tasks, r->e->n_tasks * sizeof(*r->by_pid));
	qsort(r->by_pid, r->e->n_tasks, sizeof(*r->by_pid), cmp_task);
	r->ignore = rc->opts->manage_cgroups == CG_MODE_IGNORE;
	if (r->ignore) {
		pr_info("--manage-cgroups=ignore: the tree stays in criu's cgroups");
		return 0;
	}
	if (proc_read_cgroup(0, 0, &mine))
		return -1;
	for (i = 0, ret = 0; i < r->e->n_hierarchies && !ret; i++)
		ret = map_hier(rc, r, &mine, i);
	proc_cgroup_free(&mine);
	return ret;
}

int cg_load(struct rst_ctx *rc, struct rtask *t)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	CgroupTask key = { .pid = t->pid }, *pk = &key, **found;

	if (!r || !r->e)
		return 0;
	found = bsearch(&pk, r->by_pid, r->e->n_tasks, sizeof(*r->by_pid), cmp_task);
	t->img[PART_CGROUP] = found ? *found : NULL;
	return 0;
}

/* ------------------------------------------------------- the cgroups */

static int note_made(struct cg_rst *r, int h, const char *abs)
{
	char *copy = xstrdup(abs);

	if (!copy || xgrow(r->made, r->nr_made)) {
		free(copy);
		return -1;
	}
	r->made[r->nr_made].h = h;
	r->made[r->nr_made++].abs = copy;
	return 0;
}

static int exists(struct cg_hier *ch, const char *abs)
{
	struct stat st;

	return !fstatat(ch->fd, at(abs), &st, 0) && S_ISDIR(st.st_mode);
}

static int make_dir(struct cg_rst *r, int h, const char *abs, const CgroupDir *d)
{
	struct cg_hier *ch = &r->h[h];

	if (mkdirat(ch->fd, at(abs), 0755)) {
		pr_perror("Can't create cgroup %s:%s", ch->name, abs);
		return -1;
	}
	if (note_made(r, h, abs) || cgprops_init(ch->fd, ch->h->controllers, abs))
		return -1;
	if (d && (fchmodat(ch->fd, at(abs), d->mode, 0) ||
		  fchownat(ch->fd, at(abs), d->uid, d->gid, 0))) {
		pr_perror("Can't give cgroup %s:%s its mode %o and owner %u:%u", ch->name, abs,
			  d->mode, d->uid, d->gid);
		return -1;
	}
	pr_info("Created cgroup %s:%s", ch->name, abs);
	return 0;
}

/* The cgroups above the root that are missing, made (soft, full, strict). */
static int make_parents(struct cg_rst *r, int h)
{
	struct cg_hier *ch = &r->h[h];
	char *p = xstrdup(ch->root), *slash;
	int ret = 0;

	if (!p)
		return -1;
	for (slash = strchr(p + 1, '/'); slash && !ret; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (!exists(ch, p))
			ret = make_dir(r, h, p, NULL);
		*slash = '/';
	}
	free(p);
	return ret;
}

static int one_dir(struct rst_ctx *rc, struct cg_rst *r, int h, const CgroupDir *d)
{
	struct cgprops_ctx ctx = { rc->opts, r->e->online_cpus, rc->map_cpus };
	struct cg_hier *ch = &r->h[h];
	enum cg_mode mode = rc->opts->manage_cgroups;
	char *abs = cg_join(ch->root, d->path);
	int fd, made = 0, ret = -1, there;

	if (!abs)
		return -1;
	if (cg_is_under(ch->mine, abs)) {
		free(abs);
		return 0;	/* criu's own or above: there, and not ours to change */
	}
	there = exists(ch, abs);
	if (!there && (mode == CG_MODE_NONE || mode == CG_MODE_PROPS)) {
		pr_err("Cgroup %s:%s does not exist; --manage-cgroups=%s restores into existing "
		       "cgroups only", ch->name, abs, cg_mode_name(mode));
		goto out;
	}
	if (there && mode == CG_MODE_STRICT) {
		pr_err("Cgroup %s:%s exists; --manage-cgroups=strict creates every cgroup of "
		       "the tree", ch->name, abs);
		goto out;
	}
	if (!there) {
		if (make_dir(r, h, abs, d))
			goto out;
		made = 1;
	}
	ret = 0;
	if (mode == CG_MODE_NONE || (mode == CG_MODE_SOFT && !made) || !d->n_props)
		goto out;
	fd = openat(ch->fd, at(abs), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("Can't open cgroup %s:%s", ch->name, abs);
		ret = -1;
		goto out;
	}
	ret = cgprops_write(fd, ch->h->controllers, d, &ctx, abs);
	close(fd);
out:
	free(abs);
	return ret;
}

static int make_hier(struct rst_ctx *rc, struct cg_rst *r, int h)
{
	struct cg_hier *ch = &r->h[h];
	enum cg_mode mode = rc->opts->manage_cgroups;
	CgroupDir root = CGROUP_DIR__INIT;
	size_t i;

	/* inherited first: a failure from here on still removes what was made */
	ch->fd = rst_inherit_fd(rc, cgfs_open(ch->h->controllers));
	if (ch->fd < 0)
		return -1;
	if (mode != CG_MODE_NONE && mode != CG_MODE_PROPS && !cg_is_under(ch->mine, ch->root) &&
	    make_parents(r, h))
		return -1;
	/* a root that was criu's own had nothing recorded: it must be there */
	root.path = "";
	root.mode = 0755;
	if (!ch->h->n_dirs && one_dir(rc, r, h, &root))
		return -1;
	for (i = 0; i < ch->h->n_dirs; i++)
		if (one_dir(rc, r, h, ch->h->dirs[i]))
			return -1;
	return 0;
}

int cg_prefork(struct rst_ctx *rc)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	size_t h;

	if (!r || !r->e || r->ignore)
		return 0;
	for (h = 0; h < r->e->n_hierarchies; h++)
		if (r->h[h].used && make_hier(rc, r, h))
			return -1;
	return 0;
}

/* ------------------------------------------------------- joining them */

/* @file of cgroup @abs, for openat() on its hierarchy; -1 (ENAMETOOLONG). */
static int in_cgroup(char *buf, size_t len, const char *abs, const char *file)
{
	if ((size_t)snprintf(buf, len, "%s/%s", at(abs), file) < len)
		return 0;
	errno = ENAMETOOLONG;
	return -1;
}

/*
 * Task @t moves into set @to, from set @from (-1: criu's own cgroups, -2:
 * not known). @host_pid: criu moves it, from outside; 0: it moves itself.
 */
static int join(struct cg_rst *r, struct rtask *t, int to, int from, pid_t host_pid)
{
	char *target, *now, path[4096], who[16];
	struct cg_hier *ch;
	size_t h;
	int ret = 0;

	for (h = 0; h < r->e->n_hierarchies && !ret; h++) {
		ch = &r->h[h];
		if (!ch->used)
			continue;
		target = cg_join(ch->root, r->e->sets[to]->paths[h]);
		now = from == -1 ? xstrdup(ch->mine) : from < 0 ? xstrdup("") :
		      cg_join(ch->root, r->e->sets[from]->paths[h]);
		ret = !target || !now ? -1 : 0;
		if (!ret && strcmp(target, now)) {
			snprintf(who, sizeof(who), "%d", host_pid);
			ret = in_cgroup(path, sizeof(path), target, "cgroup.procs") ||
			      cgfs_write(ch->fd, path, who);
			if (ret)
				pr_perror("Task %d: can't %s cgroup %s:%s", t->pid,
					  host_pid ? "be moved into" : "join", ch->name, target);
		}
		free(target);
		free(now);
	}
	return ret;
}

/* The root's first cgroups: its namespace's root, or its own. */
static int first_set(const CgroupTask *root)
{
	return root->has_ns_root ? (int)root->ns_root - 1 : (int)root->set;
}

int cg_forked(struct rst_ctx *rc, struct rtask *root)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	CgroupTask *ct = root->img[PART_CGROUP];

	if (!ct || r->ignore)
		return 0;
	return join(r, root, first_set(ct), -1, root->host_pid);
}

int cg_early(struct rst_ctx *rc, struct rtask *t)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	CgroupTask *ct = t->img[PART_CGROUP], *born;
	int from;

	if (!ct)
		return 0;
	/*
	 * Born where whoever forked it is; the root, where criu's forked hook
	 * put it (that ran in criu: the root's copy of criu's memory can't say).
	 */
	born = t->creator ? t->creator->img[PART_CGROUP] : NULL;
	if (born)
		from = born->set;
	else if (t->creator)
		from = -2;	/* a stand-in forked it: where, is not known */
	else
		from = r->ignore ? -1 : first_set(ct);
	if (ct->has_ns_root) {
		if (!r->ignore && join(r, t, ct->ns_root - 1, from, 0))
			return -1;
		if (unshare(CLONE_NEWCGROUP)) {
			pr_perror("Task %d: can't create its cgroup namespace", t->pid);
			return -1;
		}
		from = ct->ns_root - 1;
	}
	return r->ignore ? 0 : join(r, t, ct->set, from, 0);
}

/* Threads in other cgroups than their leader, moved from outside. */
int cg_final(struct rst_ctx *rc, struct rtask *t)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	CgroupTask *ct = t->img[PART_CGROUP];
	char path[4096], tid[16], *target;
	const char *file;
	size_t i, h;
	int j;

	if (!ct || r->ignore)
		return 0;
	for (i = 0; i < ct->n_threads; i++) {
		for (j = 0; j < t->nr_threads && t->tids[j] != (pid_t)ct->threads[i]->tid; j++)
			;
		if (j == t->nr_threads)
			continue;	/* not one of the task's: load checked nothing else */
		snprintf(tid, sizeof(tid), "%d", t->host_tids[j]);
		for (h = 0; h < r->e->n_hierarchies; h++) {
			CgroupSet *to = r->e->sets[ct->threads[i]->set], *lead = r->e->sets[ct->set];

			if (!r->h[h].used || !strcmp(to->paths[h], lead->paths[h]))
				continue;
			target = cg_join(r->h[h].root, to->paths[h]);
			if (!target)
				return -1;
			file = *r->h[h].h->controllers ? "tasks" : "cgroup.threads";
			if (in_cgroup(path, sizeof(path), target, file) ||
			    cgfs_write(r->h[h].fd, path, tid)) {
				pr_perror("Task %d: can't move thread %d into cgroup %s:%s", t->pid,
					  t->tids[j], r->h[h].name, target);
				free(target);
				return -1;
			}
			free(target);
		}
	}
	return 0;
}

/* ------------------------------------------------------- the end */

/* A failed restore's cgroups go, last made first; their tasks are dead. */
static void unmake(struct cg_rst *r)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int i, waited = 0;

	for (i = r->nr_made - 1; i >= 0; i--) {
		struct cg_hier *ch = &r->h[r->made[i].h];

		while (unlinkat(ch->fd, at(r->made[i].abs), AT_REMOVEDIR) && errno == EBUSY &&
		       waited < RMDIR_WAIT_MS) {
			nanosleep(&tick, NULL);
			waited += 10;
		}
		if (exists(ch, r->made[i].abs))
			pr_perror("Can't remove cgroup %s:%s that the failed restore created",
				  ch->name, r->made[i].abs);
		else
			pr_info("Removed cgroup %s:%s", ch->name, r->made[i].abs);
	}
}

void cg_release_tree(struct rst_ctx *rc)
{
	struct cg_rst *r = rc->shared[PART_CGROUP];
	size_t h;
	int i;

	if (!r)
		return;
	if (rc->failed)
		unmake(r);
	for (i = 0; i < r->nr_made; i++)
		free(r->made[i].abs);
	for (h = 0; r->h && r->e && h < r->e->n_hierarchies; h++) {
		free(r->h[h].root);
		free(r->h[h].mine);
	}
	free(r->made);
	free(r->h);
	free(r->by_pid);
	img_free(IMG_CGROUP, r->e);
	free(r);
	rc->shared[PART_CGROUP] = NULL;
}
