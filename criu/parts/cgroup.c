// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroups, v1 and v2: where each task and thread of the tree is in every
 * hierarchy, the cgroups below the tree's cgroup root with their
 * properties, and the cgroup namespaces tasks made. This file is the dump
 * half; cgroup-restore.c makes them again, cgroup-props.c knows the
 * properties. Documentation/cgroups.md has the rules.
 *
 * Dump. Every task's /proc/PID/cgroup (and each thread's) is read while
 * the tree is frozen; the paths are interned as sets, one path per
 * hierarchy. The tree's cgroup root in a hierarchy is --cgroup-root's (for
 * it, or for every hierarchy), else the root of the cgroup namespace the
 * root task made, else the root task's cgroup; every task must be at or
 * below it. Recorded below the root: the cgroups between it and each
 * task's, and every cgroup under a task's ("everything below where the
 * tasks live", as CRIU says), with their modes, owners and properties.
 * Cgroups at or above criu's own are shared with everything else criu runs
 * with: never walked below, their properties never kept. A tree that lives
 * in criu's own cgroups (a plain process) so records nothing but that.
 *
 * A task whose cgroup namespace is not its parent's (for the root: not
 * criu's) made it: criu joins it (setns, its own thread only) to read the
 * task's cgroups as the task sees them, which gives the namespace's root.
 * Refused, as for UTS: a namespace entered by a task that did not make it,
 * a thread in another one than its leader, a task whose cgroup is above
 * its namespace's root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/cgroup-props.h"
#include "parts/cgroup-restore.h"
#include "parts/part.h"

#define CG_MAX_DIRS	10000	/* recorded per dump, all hierarchies */

struct cg_dtask {
	CgroupTask e;
	CgroupThread *th;
	CgroupThread **pth;
};

struct cg_dump {
	struct proc_cgroup criu;	/* criu's own cgroups: the hierarchies */
	char ***sets;			/* sets[i][h]: absolute paths */
	int nr_sets;
	struct cg_dtask *tasks;
	int nr_tasks;
	uint64_t criu_ns;
	uint64_t *ns;			/* the namespaces some task made */
	pid_t *ns_maker;
	int nr_ns;
	int root_set, root_ns;		/* the root task's set, its namespace's root set + 1 */
	int nr_dirs;
};

/* ------------------------------------------------------------------ dump */

static struct cg_dump *cg_shared(struct dump_ctx *dc)
{
	struct cg_dump *d = dc->shared[PART_CGROUP];

	if (d)
		return d;
	d = xzalloc(sizeof(*d));
	if (!d)
		return NULL;
	d->root_set = -1;
	d->criu_ns = proc_ns_id(0, 0, "cgroup");
	if (!d->criu_ns || proc_read_cgroup(0, 0, &d->criu)) {
		free(d);
		return NULL;
	}
	dc->shared[PART_CGROUP] = d;
	return d;
}

/* The set of @cg's paths, interned; -1 logged. */
static int set_of(struct cg_dump *d, struct proc_cgroup *cg, pid_t pid)
{
	char **paths, ***n;
	const char *p;
	int i, h;

	if (cg->nr != d->criu.nr) {
		pr_err("Task %d is in %d cgroup hierarchies, criu in %d", pid, cg->nr, d->criu.nr);
		return -1;
	}
	for (h = 0; h < d->criu.nr; h++) {
		p = proc_cgroup_path(cg, d->criu.line[h].controllers);
		if (!p || !cg_path_ok(p, 1)) {
			pr_err("Task %d: its cgroup %s in the %s hierarchy is %s", pid, p ? p : "",
			       cgfs_name(d->criu.line[h].controllers),
			       p ? "outside criu's cgroup namespace" : "missing");
			return -1;
		}
	}
	for (i = 0; i < d->nr_sets; i++) {
		for (h = 0; h < d->criu.nr; h++)
			if (strcmp(d->sets[i][h], proc_cgroup_path(cg, d->criu.line[h].controllers)))
				break;
		if (h == d->criu.nr)
			return i;
	}
	n = xrealloc(d->sets, (d->nr_sets + 1) * sizeof(*n));
	paths = xzalloc(d->criu.nr * sizeof(*paths));
	if (n)
		d->sets = n;
	if (!n || !paths)
		goto err;
	for (h = 0; h < d->criu.nr; h++) {
		paths[h] = xstrdup(proc_cgroup_path(cg, d->criu.line[h].controllers));
		if (!paths[h])
			goto err;
	}
	d->sets[d->nr_sets] = paths;
	return d->nr_sets++;
err:
	for (h = 0; paths && h < d->criu.nr; h++)
		free(paths[h]);
	free(paths);
	return -1;
}

static int read_set(struct cg_dump *d, pid_t pid, pid_t tid)
{
	struct proc_cgroup cg;
	int set;

	if (proc_read_cgroup(pid, tid, &cg))
		return -1;
	set = set_of(d, &cg, tid ? tid : pid);
	proc_cgroup_free(&cg);
	return set;
}

static int add_thread(struct cg_dtask *ct, pid_t tid, int set)
{
	CgroupThread *n = xrealloc(ct->th, (ct->e.n_threads + 1) * sizeof(*n));

	if (!n)
		return -1;
	ct->th = n;
	cgroup_thread__init(&n[ct->e.n_threads]);
	n[ct->e.n_threads].tid = tid;
	n[ct->e.n_threads++].set = set;
	return 0;
}

/* The task's cgroups as it sees them, read from inside its namespace. */
static int read_in_ns(pid_t pid, struct proc_cgroup *in)
{
	char path[64];
	int self, its, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", pid);
	self = open("/proc/self/ns/cgroup", O_RDONLY | O_CLOEXEC);
	its = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || its < 0 || setns(its, CLONE_NEWCGROUP)) {
		pr_perror("Task %d: can't enter its cgroup namespace", pid);
		goto out;
	}
	ret = proc_read_cgroup(pid, 0, in);
	if (setns(self, CLONE_NEWCGROUP)) {
		pr_perror("Can't go back to criu's cgroup namespace");
		ret = -1;
	}
out:
	if (self >= 0)
		close(self);
	if (its >= 0)
		close(its);
	return ret;
}

/* The root of the namespace task @pid (in set @set) made, as a set. */
static int ns_root_set(struct cg_dump *d, pid_t pid, int set)
{
	struct proc_cgroup in, roots;
	char **r;
	const char *rel, *full, *c;
	int h, ret = -1;
	size_t fl, rl;

	if (read_in_ns(pid, &in))
		return -1;
	memset(&roots, 0, sizeof(roots));
	r = xzalloc(d->criu.nr * sizeof(*r));
	roots.line = xzalloc(d->criu.nr * sizeof(*roots.line));
	for (h = 0; r && roots.line && h < d->criu.nr; h++) {
		c = d->criu.line[h].controllers;
		full = d->sets[set][h];
		rel = proc_cgroup_path(&in, c);
		fl = strlen(full);
		rl = rel ? strlen(rel) : 0;
		if (!rel || !strncmp(rel, "/..", 3) || (strcmp(rel, "/") &&
		    (rl > fl || strcmp(full + fl - rl, rel)))) {
			pr_err("Task %d: its cgroup %s in the %s hierarchy is above the root of "
			       "its cgroup namespace (it sees %s); not supported", pid, full,
			       cgfs_name(c), rel ? rel : "nothing");
			goto out;
		}
		r[h] = strcmp(rel, "/") ? strndup(full, fl - rl) : xstrdup(full);
		if (r[h] && !*r[h]) {
			free(r[h]);
			r[h] = xstrdup("/");
		}
		if (!r[h])
			goto out;
		roots.line[h].controllers = c;
		roots.line[h].path = r[h];
	}
	roots.nr = d->criu.nr;
	if (r && roots.line)
		ret = set_of(d, &roots, pid);
out:
	for (h = 0; r && h < d->criu.nr; h++)
		free(r[h]);
	free(r);
	free(roots.line);
	proc_cgroup_free(&in);
	return ret;
}

/* A task whose cgroup namespace is not its parent's: it made it. */
static int check_ns(struct cg_dump *d, struct dtask *t, struct cg_dtask *ct)
{
	uint64_t ns = proc_ns_id(t->pid, 0, "cgroup"), outer, *n;
	pid_t *m;
	int i, root;

	outer = t->parent ? proc_ns_id(t->parent->pid, 0, "cgroup") : d->criu_ns;
	if (!ns || !outer)
		return -1;
	for (i = 1; i < t->nr_threads; i++)
		if (proc_ns_id(t->pid, t->th[i].tid, "cgroup") != ns) {
			pr_err("Task %d: thread %d is in another cgroup namespace than its "
			       "leader; not supported", t->pid, t->th[i].tid);
			return -1;
		}
	if (ns == outer)
		return 0;
	for (i = 0; i < d->nr_ns; i++)
		if (d->ns[i] == ns) {
			pr_err("Task %d joined the cgroup namespace cgroup:[%lu] of task %d; a "
			       "cgroup namespace shared other than by birth is not supported",
			       t->pid, ns, d->ns_maker[i]);
			return -1;
		}
	if (ns == d->criu_ns) {
		pr_err("Task %d went back into criu's cgroup namespace cgroup:[%lu]; not "
		       "supported", t->pid, ns);
		return -1;
	}
	n = xrealloc(d->ns, (d->nr_ns + 1) * sizeof(*n));
	if (n)
		d->ns = n;
	m = xrealloc(d->ns_maker, (d->nr_ns + 1) * sizeof(*m));
	if (m)
		d->ns_maker = m;
	root = n && m ? ns_root_set(d, t->pid, ct->e.set) : -1;
	if (root < 0)
		return -1;
	d->ns[d->nr_ns] = ns;
	d->ns_maker[d->nr_ns++] = t->pid;
	ct->e.has_ns_root = 1;
	ct->e.ns_root = root + 1;
	pr_info("Task %d made the cgroup namespace cgroup:[%lu]", t->pid, ns);
	return 0;
}

static int cg_check(struct dump_ctx *dc, struct dtask *t)
{
	struct cg_dump *d = cg_shared(dc);
	struct cg_dtask *n, *ct;
	int i, set;

	if (!d)
		return -1;
	n = xrealloc(d->tasks, (d->nr_tasks + 1) * sizeof(*n));
	if (!n)
		return -1;
	d->tasks = n;
	ct = &n[d->nr_tasks];
	memset(ct, 0, sizeof(*ct));
	cgroup_task__init(&ct->e);
	ct->e.pid = t->ns_pid;
	d->nr_tasks++;
	set = read_set(d, t->pid, 0);
	if (set < 0)
		return -1;
	ct->e.set = set;
	/* v1 and v2 threaded cgroups may hold a task's threads apart */
	for (i = 1; i < t->nr_threads; i++) {
		set = read_set(d, t->pid, t->th[i].tid);
		if (set < 0 || (set != (int)ct->e.set && add_thread(ct, t->ns_tids[i], set)))
			return -1;
	}
	if (check_ns(d, t, ct))
		return -1;
	if (!t->parent) {
		d->root_set = ct->e.set;
		d->root_ns = ct->e.has_ns_root ? ct->e.ns_root : 0;
	}
	return 0;
}

/* The deepest cgroup of @h that holds every task and thread (malloc'ed). */
static char *common_root(struct cg_dump *d, int h)
{
	char *anc = xstrdup(d->sets[d->root_set][h]), *slash;
	int i;

	for (i = 0; anc && i < d->nr_sets; i++)
		while (!cg_is_under(d->sets[i][h], anc)) {
			slash = strrchr(anc, '/');
			slash[slash == anc] = '\0';
		}
	return anc;
}

/*
 * The tree's root in hierarchy @h: --cgroup-root's, the root of the
 * namespace the root task made, else the deepest cgroup holding the tree.
 */
static char *tree_root(struct dump_ctx *dc, struct cg_dump *d, int h)
{
	const char *opt = cg_root_for(dc->opts, d->criu.line[h].controllers);

	if (opt)
		return xstrdup(opt);
	if (d->root_ns)
		return xstrdup(d->sets[d->root_ns - 1][h]);
	return common_root(d, h);
}

/*
 * Every task, thread and namespace root at or below @root in @h; else one
 * line naming the task.
 */
static int check_under(struct cg_dump *d, int h, const char *root)
{
	const char *c = cgfs_name(d->criu.line[h].controllers);
	struct cg_dtask *ct;
	const char *p;
	size_t j;
	int i, s;

	for (i = 0; i < d->nr_tasks; i++) {
		ct = &d->tasks[i];
		for (j = 0; j <= ct->e.n_threads + 1; j++) {
			if (j == ct->e.n_threads + 1 && !ct->e.has_ns_root)
				break;
			s = !j ? (int)ct->e.set : j <= ct->e.n_threads ?
			    (int)ct->th[j - 1].set : (int)ct->e.ns_root - 1;
			p = d->sets[s][h];
			if (cg_is_under(p, root))
				continue;
			pr_err("Task %d%s is in cgroup %s of the %s hierarchy, outside the tree's "
			       "cgroup root %s there; --cgroup-root %s:PATH names one above both",
			       ct->e.pid, j > ct->e.n_threads ? ": the root of its cgroup namespace" :
			       "", p, c, root, c);
			return -1;
		}
	}
	return 0;
}

struct dirlist {
	char **rel;
	int nr;
};

static int dirlist_add(struct cg_dump *d, struct dirlist *l, const char *rel)
{
	char **n;

	if (++d->nr_dirs > CG_MAX_DIRS) {
		pr_err("The tree's cgroups hold more than %d cgroups below its cgroup root; "
		       "--cgroup-root names a smaller root", CG_MAX_DIRS);
		return -1;
	}
	n = xrealloc(l->rel, (l->nr + 1) * sizeof(*n));
	if (!n)
		return -1;
	l->rel = n;
	n[l->nr] = xstrdup(rel);
	return n[l->nr] ? (l->nr++, 0) : -1;
}

/* Every cgroup below @abs (absolute in the hierarchy of @hfd), not @abs itself. */
static int walk(struct cg_dump *d, int hfd, const char *abs, const char *root,
		struct dirlist *l)
{
	int fd = openat(hfd, strcmp(abs, "/") ? abs + 1 : ".",
			O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;
	struct dirent *e;
	char *sub;
	DIR *dir;

	if (fd < 0 || !(dir = fdopendir(fd))) {
		pr_perror("Can't list cgroup %s", abs);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (!ret && (e = readdir(dir))) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = cg_join(abs, e->d_name);
		ret = !sub || dirlist_add(d, l, cg_rel(sub, root)) || walk(d, hfd, sub, root, l);
		free(sub);
	}
	closedir(dir);
	return ret ? -1 : 0;
}

/* The cgroups between @root and @abs, @abs included. */
static int add_chain(struct cg_dump *d, const char *root, const char *abs, struct dirlist *l)
{
	char *p = xstrdup(abs), *slash;
	int ret = 0;

	if (!p)
		return -1;
	while (!ret && strcmp(p, root) && cg_is_under(p, root)) {
		ret = dirlist_add(d, l, cg_rel(p, root));
		slash = strrchr(p, '/');
		if (slash == p)
			break;
		*slash = '\0';
	}
	free(p);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * What is recorded of hierarchy @h: the root, the way to each task's
 * cgroup, everything below each of those that is not criu's own or above.
 */
static int collect_dirs(struct cg_dump *d, int hfd, int h, const char *root,
			struct dirlist *l)
{
	const char *mine = d->criu.line[h].path;
	int i, j, ret;

	ret = dirlist_add(d, l, "");
	if (!ret && !cg_is_under(mine, root))
		ret = walk(d, hfd, root, root, l);
	for (i = 0; i < d->nr_sets && !ret; i++) {
		const char *p = d->sets[i][h];

		if (!cg_is_under(p, root))
			continue;	/* an unused namespace root above it: checked */
		ret = add_chain(d, root, p, l);
		if (!ret && !cg_is_under(mine, p) && cg_is_under(mine, root))
			ret = walk(d, hfd, p, root, l);
	}
	if (ret)
		return -1;
	/* a parent sorts before its children: it is their prefix */
	qsort(l->rel, l->nr, sizeof(*l->rel), cmp_str);
	for (i = j = 0; i < l->nr; i++) {
		if (j && !strcmp(l->rel[j - 1], l->rel[i])) {
			free(l->rel[i]);
			continue;
		}
		l->rel[j++] = l->rel[i];
	}
	l->nr = j;
	return 0;
}

static void free_hier(CgroupHierarchy *hi)
{
	size_t i;

	for (i = 0; i < hi->n_dirs; i++) {
		cgprops_free(hi->dirs[i]);
		free(hi->dirs[i]->path);
		free(hi->dirs[i]);
	}
	free(hi->dirs);
	free(hi->root);
}

/* One recorded cgroup: its mode, owner and (unless criu's or above) properties. */
static int record_dir(struct cg_dump *d, int hfd, int h, const char *root, char *rel,
		      CgroupDir *cd)
{
	const char *c = d->criu.line[h].controllers;
	char *abs = cg_join(root, rel);
	struct stat st;
	int fd = -1, ret = -1;

	cgroup_dir__init(cd);
	cd->path = rel;
	if (!abs)
		return -1;
	fd = openat(hfd, strcmp(abs, "/") ? abs + 1 : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("Can't open cgroup %s:%s", cgfs_name(c), abs);
		goto out;
	}
	cd->mode = st.st_mode & 07777;
	cd->uid = st.st_uid;
	cd->gid = st.st_gid;
	ret = 0;
	if (!cg_is_under(d->criu.line[h].path, abs))
		ret = cgprops_read(fd, c, !strcmp(abs, "/"), cd, abs);
out:
	if (fd >= 0)
		close(fd);
	free(abs);
	return ret;
}

static int dump_hier(struct dump_ctx *dc, struct cg_dump *d, int h, CgroupHierarchy *hi)
{
	const char *c = d->criu.line[h].controllers;
	struct dirlist l = { 0 };
	int hfd, i, ret = -1;

	cgroup_hierarchy__init(hi);
	hi->controllers = (char *)c;
	/* a copy: the sets' paths become relative to it when written */
	hi->root = tree_root(dc, d, h);
	if (!hi->root)
		return -1;
	if (!cg_path_ok(hi->root, 1)) {
		pr_err("--cgroup-root %s is not an absolute cgroup path (no '.' nor '..')",
		       hi->root);
		return -1;
	}
	hi->has_root_is_criu = 1;
	hi->root_is_criu = !strcmp(hi->root, d->criu.line[h].path);
	if (check_under(d, h, hi->root))
		return -1;
	/* a tree in criu's own cgroup there: nothing to record but that */
	for (i = 0; i < d->nr_sets && hi->root_is_criu; i++)
		if (strcmp(d->sets[i][h], hi->root))
			break;
	if (i == d->nr_sets)
		return 0;
	hfd = cgfs_open(c);
	if (hfd < 0 || collect_dirs(d, hfd, h, hi->root, &l))
		goto out;
	hi->dirs = xzalloc(l.nr * sizeof(*hi->dirs));
	for (i = 0; hi->dirs && i < l.nr; i++) {
		hi->dirs[i] = xzalloc(sizeof(**hi->dirs));
		if (!hi->dirs[i] || record_dir(d, hfd, h, hi->root, l.rel[i], hi->dirs[i])) {
			free(hi->dirs[i]);
			goto out;
		}
		l.rel[i] = NULL;	/* the dir has it */
		hi->n_dirs = i + 1;
	}
	ret = hi->dirs ? 0 : -1;
out:
	for (i = 0; i < l.nr; i++)
		free(l.rel[i]);
	free(l.rel);
	if (hfd >= 0)
		close(hfd);
	return ret;
}

static int write_image(struct dump_ctx *dc, struct cg_dump *d, CgroupHierarchy *hi,
		       CgroupHierarchy **phi)
{
	CgroupEntry e = CGROUP_ENTRY__INIT;
	CgroupSet *sets, **psets;
	CgroupTask **pt;
	int i, ret = -1;

	sets = xzalloc((d->nr_sets + 1) * sizeof(*sets));
	psets = xzalloc((d->nr_sets + 1) * sizeof(*psets));
	pt = xzalloc((d->nr_tasks + 1) * sizeof(*pt));
	if (!sets || !psets || !pt)
		goto out;
	for (i = 0; i < d->nr_sets; i++) {
		int h;

		cgroup_set__init(&sets[i]);
		sets[i].n_paths = d->criu.nr;
		sets[i].paths = d->sets[i];
		/* relative to each hierarchy's root: the strings are the sets' own */
		for (h = 0; h < d->criu.nr; h++)
			memmove(d->sets[i][h], cg_rel(d->sets[i][h], hi[h].root),
				strlen(cg_rel(d->sets[i][h], hi[h].root)) + 1);
		psets[i] = &sets[i];
	}
	for (i = 0; i < d->nr_tasks; i++) {
		struct cg_dtask *ct = &d->tasks[i];
		size_t j;

		ct->pth = xzalloc((ct->e.n_threads + 1) * sizeof(*ct->pth));
		if (!ct->pth)
			goto out;
		for (j = 0; j < ct->e.n_threads; j++)
			ct->pth[j] = &ct->th[j];
		ct->e.threads = ct->pth;
		pt[i] = &ct->e;
	}
	e.n_hierarchies = d->criu.nr;
	e.hierarchies = phi;
	e.n_sets = d->nr_sets;
	e.sets = psets;
	e.n_tasks = d->nr_tasks;
	e.tasks = pt;
	/* the CPUs online here: cpuset.cpus naming them all is "all" on restore */
	e.online_cpus = read_file(AT_FDCWD, "/sys/devices/system/cpu/online", NULL);
	if (!e.online_cpus) {
		pr_perror("Can't read the CPUs online");
		goto out;
	}
	e.online_cpus[strcspn(e.online_cpus, "\n")] = '\0';
	ret = img_write(dc->dirfd, IMG_CGROUP, 0, &e.base);
	free(e.online_cpus);
out:
	free(sets);
	free(psets);
	free(pt);
	return ret;
}

static void dump_free(struct dump_ctx *dc)
{
	struct cg_dump *d = dc->shared[PART_CGROUP];
	int i, h;

	if (!d)
		return;
	for (i = 0; i < d->nr_sets; i++) {
		for (h = 0; h < d->criu.nr; h++)
			free(d->sets[i][h]);
		free(d->sets[i]);
	}
	for (i = 0; i < d->nr_tasks; i++) {
		free(d->tasks[i].th);
		free(d->tasks[i].pth);
	}
	free(d->sets);
	free(d->tasks);
	free(d->ns);
	free(d->ns_maker);
	proc_cgroup_free(&d->criu);
	free(d);
	dc->shared[PART_CGROUP] = NULL;
}

static int cg_dump_tree(struct dump_ctx *dc)
{
	struct cg_dump *d = dc->shared[PART_CGROUP];
	CgroupHierarchy *hi = NULL, **phi = NULL;
	int h, used = 0, ret = -1;

	if (!d)
		return 0;	/* only zombies: nothing runs in a cgroup */
	hi = xzalloc(d->criu.nr * sizeof(*hi));
	phi = xzalloc(d->criu.nr * sizeof(*phi));
	if (!hi || !phi)
		goto out;
	for (h = 0; h < d->criu.nr; h++) {
		phi[h] = &hi[h];
		if (dump_hier(dc, d, h, &hi[h]))
			goto out;
		used += hi[h].n_dirs > 0;
	}
	/* restore hands every task an fd on each hierarchy it changes */
	dc->restore_shared += used;
	ret = write_image(dc, d, hi, phi);
out:
	for (h = 0; hi && h < d->criu.nr; h++)
		free_hier(&hi[h]);
	free(hi);
	free(phi);
	dump_free(dc);
	return ret;
}

const struct part part_cgroup = {
	.name = "cgroup",
	.id = PART_CGROUP,
	.check = cg_check,
	.dump_tree = cg_dump_tree,
	.load_tree = cg_load_tree,
	.load = cg_load,
	.prefork = cg_prefork,
	.forked = cg_forked,
	.early = cg_early,
	.final = cg_final,
	.release_tree = cg_release_tree,
};
