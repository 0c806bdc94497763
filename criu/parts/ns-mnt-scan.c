// SPDX-License-Identifier: GPL-2.0
/*
 * One mount namespace of the tree, read at the dump (ns-mnt-scan.h): each
 * mount sorted into how restore makes it again, against the namespace the
 * tree's copy came from (criu's for the root's, the maker's parent's for
 * a nested one):
 *   - the root mount: the container's root filesystem (--root at restore),
 *     or a copy of the other one's root: "inherited", as is every mount
 *     the other one has at the same place (a nested one records which);
 *   - proc, sysfs, mqueue, cgroup, cgroup2 (views of the tree's own
 *     namespaces), devpts, tmpfs and ramfs (with their files): made anew;
 *   - a mount of a filesystem another mount of the namespace shows
 *     already: a bind of it (a file or a directory, masked paths...);
 *   - anything from outside: external, named by --external mnt[POINT]:KEY
 *     (or every one with --external mnt[]); refused by name otherwise, and
 *     always in a nested namespace.
 * See Documentation/mounts.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/ns-mnt-build.h"
#include "parts/ns-mnt-scan.h"

/* Filesystems restore mounts anew: views of the tree's own namespaces... */
static const char *const views[] = { "proc", "sysfs", "mqueue", "cgroup", "cgroup2" };
/* ...and ones with their own superblock, whose files are saved (devpts has none). */
static const char *const owned[] = { "tmpfs", "ramfs", "devpts" };

static int in_list(const char *const *l, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(l[i], s))
			return 1;
	return 0;
}

static int has_contents(const char *fstype)
{
	return !strcmp(fstype, "tmpfs") || !strcmp(fstype, "ramfs");
}

dev_t mnt_dev_of(const struct proc_mount *m)
{
	return makedev(m->major, m->minor);
}

/* Is fs path @a an ancestor of (or the same as) @b? */
static int path_under(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!strcmp(a, "/"))
		return 1;
	return !strncmp(a, b, n) && (b[n] == '/' || !b[n]);
}

/* The superblock's options but rw/ro, which say whether it is read-only. */
static char *sb_options(const char *sb, int *ro)
{
	char *out = xzalloc(strlen(sb) + 1), *p;
	const char *w, *e;

	if (!out)
		return NULL;
	*ro = 0;
	for (w = sb, p = out; *w; w = *e ? e + 1 : e) {
		e = strchrnul(w, ',');
		if ((e - w == 2 && !strncmp(w, "rw", 2)) || e == w)
			continue;
		if (e - w == 2 && !strncmp(w, "ro", 2)) {
			*ro = 1;
			continue;
		}
		if (p != out)
			*p++ = ',';
		memcpy(p, w, e - w);
		p += e - w;
	}
	*p = '\0';
	return out;
}

/* The value of --external mnt[@inside]:VALUE, or NULL. */
const char *mnt_ext_value(const struct opts *o, const char *inside)
{
	size_t n = strlen(inside);
	int i;

	for (i = 0; i < o->nr_external; i++) {
		const char *x = o->external[i];

		if (!strncmp(x, "mnt[", 4) && !strncmp(x + 4, inside, n) &&
		    !strncmp(x + 4 + n, "]:", 2))
			return x + 4 + n + 2;
	}
	return NULL;
}

/* --external mnt[]: criu names every mount from outside itself. */
static int ext_auto(const struct opts *o)
{
	int i;

	for (i = 0; i < o->nr_external; i++)
		if (!strcmp(o->external[i], "mnt[]"))
			return 1;
	return 0;
}

/* Where criu sees what mount @m shows, if it does: its path, in @buf. */
static int host_path(struct mnt_dump *d, const struct proc_mount *m, char *buf, size_t len)
{
	const struct proc_mount *h;
	const char *rest;
	int i;

	for (i = 0; i < d->host.nr; i++) {
		h = &d->host.m[i];
		if (mnt_dev_of(h) != mnt_dev_of(m) || !path_under(h->root, m->root))
			continue;
		rest = strcmp(h->root, "/") ? m->root + strlen(h->root) : m->root;
		if (!strcmp(rest, "/"))
			rest = "";
		if (!strcmp(h->mountpoint, "/"))
			snprintf(buf, len, "%s", *rest ? rest : "/");
		else
			snprintf(buf, len, "%s%s", h->mountpoint, rest);
		return 1;
	}
	return 0;
}

static int host_has_dev(struct mnt_dump *d, dev_t dev)
{
	int i;

	for (i = 0; i < d->host.nr; i++)
		if (mnt_dev_of(&d->host.m[i]) == dev)
			return 1;
	return 0;
}

/*
 * An earlier mount of the same filesystem that shows @m's root: @m is a
 * bind of it. A clone has its source's name: one with another name was
 * mounted anew (a cgroup2 named "cgroup" next to criu's "cgroup2").
 */
static int bind_source(struct mnt_dump *d, int i)
{
	const struct proc_mount *m = &d->ms.m[i], *b;
	int j, best = -1;

	for (j = 0; j < i; j++) {
		b = &d->ms.m[j];
		if (mnt_dev_of(b) != mnt_dev_of(m) || !path_under(b->root, m->root) ||
		    strcmp(b->source, m->source))
			continue;
		/* a peer's or a master's clone is a peer at first: propagation follows */
		if (best < 0 || (m->shared && b->shared == m->shared) ||
		    (m->master && b->shared == m->master))
			best = j;
	}
	return best;
}

/* An inherited mount: criu has the same at the same place. */
static int host_twin(struct mnt_dump *d, int i)
{
	const struct proc_mount *m = &d->ms.m[i], *h;
	int j, k;

	for (j = 0; j < d->host.nr; j++) {
		h = &d->host.m[j];
		if (mnt_dev_of(h) != mnt_dev_of(m) || strcmp(h->root, m->root) ||
		    strcmp(h->mountpoint, m->mountpoint) || strcmp(h->fstype, m->fstype))
			continue;
		for (k = 0; k < i && d->host_of[k] != j; k++)
			;
		if (k == i)
			return j;
	}
	return -1;
}

static void describe(const struct proc_mount *m, char *buf, size_t len)
{
	snprintf(buf, len, "mount %d at %s (%s %s%s%s)", m->id, m->mountpoint, m->fstype,
		 m->source, strcmp(m->root, "/") ? " " : "", strcmp(m->root, "/") ? m->root : "");
}

static int outside(struct mnt_dump *d, const struct opts *o, int i)
{
	const struct proc_mount *m = &d->ms.m[i];
	MountEntry *e = &d->e[i];
	char what[PATH_MAX + 64], path[PATH_MAX];
	const char *key = mnt_ext_value(o, m->mountpoint);
	int seen = host_path(d, m, path, sizeof(path));

	describe(m, what, sizeof(what));
	if (d->nested) {
		pr_err("Task %d: %s in its nested mount namespace mnt:[%lu] is no copy of a "
		       "mount of its parent's namespace and no filesystem criu mounts anew; "
		       "not supported", d->maker, what, d->ns);
		return -1;
	}
	if (!strcmp(m->fstype, "binfmt_misc")) {
		pr_err("Task %d: %s: binfmt_misc is not supported", d->maker, what);
		return -1;
	}
	e->kind = MOUNT_KIND__MNT_EXTERNAL;
	if (key) {
		e->ext_key = xstrdup(key);
		return e->ext_key ? 0 : -1;
	}
	if (seen && ext_auto(o)) {
		e->ext_key = xstrdup(path);
		e->has_ext_auto = e->ext_auto = 1;
		return e->ext_key ? 0 : -1;
	}
	if (seen)
		pr_err("Task %d: %s comes from outside its mount namespace (%s in criu's); "
		       "name it with --external mnt[%s]:KEY, or --external mnt[] for all",
		       d->maker, what, path, m->mountpoint);
	else
		pr_err("Task %d: %s: filesystem %s is not supported (criu mounts proc, sysfs, "
		       "mqueue, cgroup, cgroup2, devpts, tmpfs and ramfs anew); an external mount "
		       "needs --external mnt[%s]:KEY", d->maker, what, m->fstype, m->mountpoint);
	return -1;
}

static int make_new(struct mnt_dump *d, int i)
{
	const struct proc_mount *m = &d->ms.m[i];
	MountEntry *e = &d->e[i];
	struct tmpfs_dump *t;
	int ro;

	e->kind = MOUNT_KIND__MNT_NEW;
	e->options = sb_options(m->sb_opts, &ro);
	if (!e->options)
		return -1;
	e->has_sb_ro = 1;
	e->sb_ro = ro;
	if (!has_contents(m->fstype))
		return 0;
	t = xpush(d->tmpfs, d->nr_tmpfs);
	if (!t)
		return -1;
	t->id = e->contents = ++*d->contents;
	e->has_contents = 1;
	t->mnt_id = m->id;
	t->dev = mnt_dev_of(m);
	t->unbindable = m->unbindable;
	t->mountpoint = m->mountpoint;
	t->root = m->root;
	return 0;
}

/* A nested namespace's copy of its parent's mount: which one, for the restore to find it. */
static void note_copy(struct mnt_dump *d, int i)
{
	if (!d->nested || d->host_of[i] < 0)
		return;
	d->e[i].has_copy_of = 1;
	d->e[i].copy_of = d->host.m[d->host_of[i]].id;
}

static int classify(struct mnt_dump *d, const struct opts *o, int i)
{
	const struct proc_mount *m = &d->ms.m[i];
	MountEntry *e = &d->e[i];
	int src;

	if (i == d->root) {
		e->kind = d->inherited ? MOUNT_KIND__MNT_INHERITED : MOUNT_KIND__MNT_ROOT;
		d->host_of[i] = d->inherited ? host_twin(d, i) : -1;
		note_copy(d, i);
		return 0;
	}
	d->host_of[i] = d->inherited ? host_twin(d, i) : -1;
	if (d->host_of[i] >= 0) {
		e->kind = MOUNT_KIND__MNT_INHERITED;
		note_copy(d, i);
		return 0;
	}
	src = bind_source(d, i);
	if (src >= 0) {
		e->kind = MOUNT_KIND__MNT_BIND;
		e->has_bind_of = 1;
		e->bind_of = d->ms.m[src].id;
		return 0;
	}
	if (in_list(views, ARRAY_SIZE(views), m->fstype))
		return make_new(d, i);
	/* one of criu's: it came from outside; a new one has a superblock of its own */
	if (in_list(owned, ARRAY_SIZE(owned), m->fstype) && !host_has_dev(d, mnt_dev_of(m)))
		return make_new(d, i);
	return outside(d, o, i);
}

/* A peer group that reaches criu's namespace would carry the restored mounts out. */
static int check_propagation(struct mnt_dump *d, int i)
{
	const struct proc_mount *m = &d->ms.m[i];
	MountEntry *e = &d->e[i];
	char what[PATH_MAX + 64];
	int j, inside = 0;

	for (j = 0; j < d->host.nr; j++)
		if (m->shared && d->host.m[j].shared == m->shared) {
			describe(m, what, sizeof(what));
			pr_err("Task %d: %s is shared with %s namespace (peer group %d); "
			       "restoring it would propagate the tree's mounts out: make it a "
			       "slave or private (mount --make-rslave /)", d->maker, what,
			       d->nested ? "its parent's" : "criu's", m->shared);
			return -1;
		}
	for (j = 0; j < d->ms.nr && m->master; j++)
		inside |= d->ms.m[j].shared == m->master;
	e->has_shared = e->has_master = e->has_unbindable = 1;
	e->shared = m->shared;
	e->master = m->master;
	e->unbindable = m->unbindable;
	if (m->master && !inside)
		e->has_master_outside = e->master_outside = 1;
	return 0;
}

static int find_root(struct mnt_dump *d)
{
	int i;

	for (i = 0; i < d->ms.nr; i++)
		if (!proc_mount_by_id(&d->ms, d->ms.m[i].parent) &&
		    !strcmp(d->ms.m[i].mountpoint, "/"))
			return i;
	pr_err("Task %d: no root mount in its mountinfo", d->maker);
	return -1;
}

static int is_inherited(struct mnt_dump *d)
{
	const struct proc_mount *r = &d->ms.m[d->root];
	int i;

	for (i = 0; i < d->host.nr; i++) {
		const struct proc_mount *h = &d->host.m[i];

		if (!proc_mount_by_id(&d->host, h->parent) && !strcmp(h->mountpoint, "/"))
			return mnt_dev_of(h) == mnt_dev_of(r) && !strcmp(h->root, r->root) &&
			       !strcmp(h->fstype, r->fstype);
	}
	return 0;
}

/*
 * cgroup mounts show their root relative to the reader's cgroup namespace:
 * read them as the tree sees them, from a helper that joined its namespace.
 */
static int cgroup_roots(struct mnt_dump *d)
{
	struct proc_mounts *in = &d->cg;
	char path[64], *buf;
	int p[2], fd, status = 0, i;
	pid_t pid;

	if (proc_ns_id(d->maker, 0, "cgroup") == proc_ns_id(0, 0, "cgroup"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", d->maker);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe2(p, O_CLOEXEC)) {
		pr_perror("Task %d: can't open its cgroup namespace", d->maker);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(p[0]);
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", d->maker);
		buf = setns(fd, CLONE_NEWCGROUP) ? NULL : read_file(-1, path, NULL);
		_exit(!buf || write_full(p[1], buf, strlen(buf)) ? 1 : 0);
	}
	close(p[1]);
	close(fd);
	buf = pid < 0 ? NULL : read_fd(p[0], NULL);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (pid < 0 || !buf || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    proc_parse_mountinfo(buf, in)) {
		pr_err("Task %d: can't read its mounts in its cgroup namespace", d->maker);
		if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			free(buf);
		return -1;
	}
	for (i = 0; i < d->ms.nr; i++) {
		struct proc_mount *m = &d->ms.m[i], *x = proc_mount_by_id(in, m->id);

		if (x && !strncmp(m->fstype, "cgroup", 6))
			m->root = x->root;
	}
	return 0;
}

static void fill_common(struct mnt_dump *d, int i)
{
	const struct proc_mount *m = &d->ms.m[i];
	MountEntry *e = &d->e[i];

	mount_entry__init(e);
	e->id = m->id;
	e->parent = i == d->root ? 0 : m->parent;
	e->mountpoint = m->mountpoint;
	e->root = m->root;
	e->fstype = m->fstype;
	e->source = m->source;
	e->attrs = mnt_attrs_of(m->mnt_opts);
	e->has_dev = 1;
	e->dev = mnt_dev_of(m);
}

/*
 * A namespace nested below the root is a copy of its maker's parent's
 * (unshare): it must have the same root (no pivot_root of its own), and
 * restore makes it the same way, from the copy of the restored parent's.
 */
static int check_nested(struct mnt_dump *d)
{
	const struct proc_mount *r = &d->ms.m[d->root];

	if (d->inherited)
		return 0;
	pr_err("Task %d: its nested mount namespace mnt:[%lu] has a root of its own (%s %s at "
	       "%s, entered with pivot_root or chroot'ed mounts); only the tree's root may have "
	       "one: not supported", d->maker, d->ns, r->fstype, r->source, r->root);
	return -1;
}

int mnt_scan(struct mnt_dump *d, const struct opts *o)
{
	int i;

	if (cgroup_roots(d))
		return -1;
	d->e = xzalloc(d->ms.nr * sizeof(*d->e));
	d->host_of = xzalloc(d->ms.nr * sizeof(int));
	if (!d->e || !d->host_of)
		return -1;
	d->root = find_root(d);
	if (d->root < 0)
		return -1;
	d->inherited = is_inherited(d);
	if (d->nested && check_nested(d))
		return -1;
	for (i = 0; i < d->ms.nr; i++) {
		fill_common(d, i);
		if (i != d->root && !proc_mount_by_id(&d->ms, d->ms.m[i].parent)) {
			pr_err("Task %d: mount %d at %s hangs off mount %d, which it does not "
			       "see", d->maker, d->ms.m[i].id, d->ms.m[i].mountpoint,
			       d->ms.m[i].parent);
			return -1;
		}
		if (classify(d, o, i) || check_propagation(d, i))
			return -1;
	}
	return 0;
}
