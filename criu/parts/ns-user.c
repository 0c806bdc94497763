// SPDX-License-Identifier: GPL-2.0
/*
 * The user namespace of a tree: the container's (ctr --userns, runc and
 * podman with user namespaces), which the tree's root is in and which is a
 * child of criu's. Dump reads its maps as criu sees them (/proc/PID/uid_map
 * and gid_map: the outside ids are criu's) and /proc/PID/setgroups.
 *
 * Restore creates the root in a new user namespace, in the very clone that
 * makes its other namespaces (rc->root_flags), so that it owns them as it
 * did: a pid namespace owned by criu's would let the container mount no
 * proc of its own. Its maps are written by criu, from outside, before the
 * root runs anything (the forked hook: the root waits for it): setgroups
 * first, as the kernel wants, then gid_map and uid_map. Every other task
 * is born in it. The credentials of the tasks are kept as criu saw them;
 * the parts that set ids from inside (creds, the mounts) name them through
 * the maps this part gives the context (rc->idmap, task/idmap.h).
 *
 * Refused at dump, naming the task: a user namespace made inside the tree
 * (by a task other than the root, or nested below the root's), and a root
 * whose user namespace is not a child of criu's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/idmap.h"
#include "userns.pb-c.h"

#define MAX_EXTENTS	340	/* the kernel's limit per map (4.15+) */

/* ------------------------------------------------------------------ dump */

/* The parent of the user namespace @pid is in: its nsfs inode, 0 logged. */
static uint64_t parent_ns(pid_t pid)
{
	char path[64];
	struct stat st;
	int fd, pfd;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	pfd = fd < 0 ? -1 : ioctl(fd, NS_GET_PARENT);
	if (pfd < 0 || fstat(pfd, &st)) {
		pr_perror("Task %d: can't find the parent of its user namespace", pid);
		st.st_ino = 0;
	}
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	return st.st_ino;
}

static int read_map(pid_t pid, const char *name, UsernsExtent ***out, size_t *n)
{
	char path[64], *buf, *line, *save = NULL;
	unsigned long a, b, c;
	UsernsExtent **e;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	buf = read_file(-1, path, NULL);
	if (!buf) {
		pr_perror("Can't read %s", path);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%lu %lu %lu", &a, &b, &c) != 3) {
			pr_err("Can't parse %s: '%s'", path, line);
			goto out;
		}
		e = xrealloc(*out, (*n + 1) * sizeof(*e));
		if (!e)
			goto out;
		*out = e;
		e[*n] = xzalloc(sizeof(**e));
		if (!e[*n])
			goto out;
		userns_extent__init(e[*n]);
		e[*n]->first = a;
		e[*n]->lower_first = b;
		e[(*n)++]->count = c;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

static void free_maps(UsernsEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_uid_map; i++)
		free(e->uid_map[i]);
	for (i = 0; i < e->n_gid_map; i++)
		free(e->gid_map[i]);
	free(e->uid_map);
	free(e->gid_map);
}

/*
 * The root's other namespaces of its own must be its user namespace's:
 * restore makes them in the same clone, owned by it (a pid namespace made
 * before the user namespace would come back owned by the new one).
 */
static int check_owners(struct dtask *t, uint64_t ns)
{
	/* time namespaces are criu's own after a restore: not in the list */
	static const char *const kinds[] = { "pid", "uts", "ipc", "net", "mnt", "cgroup" };
	char path[64];
	struct stat st;
	size_t i;
	int fd, ufd;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (proc_ns_id(t->pid, 0, kinds[i]) == proc_ns_id(0, 0, kinds[i]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", t->pid, kinds[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ufd = fd < 0 ? -1 : ioctl(fd, NS_GET_USERNS);
		if (ufd < 0 || fstat(ufd, &st)) {
			pr_perror("Task %d: can't find the owner of its %s namespace", t->pid,
				  kinds[i]);
			st.st_ino = 0;
		}
		if (fd >= 0)
			close(fd);
		if (ufd >= 0)
			close(ufd);
		if (!st.st_ino)
			return -1;
		if (st.st_ino != ns) {
			pr_err("Task %d: its %s namespace belongs to user:[%lu], not to its own "
			       "user namespace user:[%lu] (made before it); not supported",
			       t->pid, kinds[i], (unsigned long)st.st_ino, ns);
			return -1;
		}
	}
	return 0;
}

/* The root's namespace, kept for dump_tree (nothing is written in a check). */
static int check_root(struct dump_ctx *dc, struct dtask *t, uint64_t ns, uint64_t criu)
{
	UsernsEntry *e;
	char path[64], *sg;
	uint64_t parent = parent_ns(t->pid);

	if (!parent)
		return -1;
	if (parent != criu) {
		pr_err("Task %d is in user:[%lu], nested below another user namespace than "
		       "criu's (user:[%lu]); not supported", t->pid, ns, criu);
		return -1;
	}
	if (check_owners(t, ns))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/setgroups", t->pid);
	sg = read_file(-1, path, NULL);
	if (!sg) {
		pr_perror("Can't read %s", path);
		return -1;
	}
	e = xzalloc(sizeof(*e));
	if (!e) {
		free(sg);
		return -1;
	}
	userns_entry__init(e);
	dc->shared[PART_USERNS] = e;
	e->pid = t->ns_pid;
	e->setgroups = !strncmp(sg, "allow", 5);
	free(sg);
	if (read_map(t->pid, "uid_map", &e->uid_map, &e->n_uid_map) ||
	    read_map(t->pid, "gid_map", &e->gid_map, &e->n_gid_map))
		return -1;
	/* its ids are criu's, which it can't name: no restore could set them */
	if (!e->n_uid_map || !e->n_gid_map) {
		pr_err("Task %d: its user namespace user:[%lu] has no %s yet; not supported",
		       t->pid, ns, !e->n_uid_map ? "uid_map" : "gid_map");
		return -1;
	}
	pr_info("Task %d: user namespace user:[%lu] of its own, %zu uid and %zu gid extents, "
		"setgroups %s", t->pid, ns, e->n_uid_map, e->n_gid_map,
		e->setgroups ? "allowed" : "denied");
	return 0;
}

static int userns_dump_tree(struct dump_ctx *dc)
{
	UsernsEntry *e = dc->shared[PART_USERNS];
	int ret;

	if (!e)
		return 0;
	ret = img_write(dc->dirfd, IMG_USERNS, 0, &e->base);
	free_maps(e);
	free(e);
	dc->shared[PART_USERNS] = NULL;
	return ret;
}

static int userns_check(struct dump_ctx *dc, struct dtask *t)
{
	uint64_t criu = proc_ns_id(0, 0, "user"), ns, outer;

	/* a thread can't have another user namespace: setns() wants one thread */
	ns = proc_ns_id(t->pid, 0, "user");
	outer = t->parent ? proc_ns_id(t->parent->pid, 0, "user") : criu;
	if (!criu || !ns || !outer)
		return -1;
	if (ns == outer)
		return 0;
	if (t->parent) {
		pr_err("Task %d is in user namespace user:[%lu], not its parent %d's (user:[%lu]): "
		       "a user namespace below the tree's root (nested, made or joined inside "
		       "the tree) is not supported; only the root may have one of its own",
		       t->pid, ns, t->parent->pid, outer);
		return -1;
	}
	return check_root(dc, t, ns, criu);
}

/* --------------------------------------------------------------- restore */

static int check_map(UsernsExtent **m, size_t n, const char *what)
{
	size_t i;

	if (!n || n > MAX_EXTENTS) {
		pr_err("Image userns.img: its %s has %zu extents", what, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!m[i]->count || (uint64_t)m[i]->first + m[i]->count > 1ULL << 32 ||
		    (uint64_t)m[i]->lower_first + m[i]->count > 1ULL << 32) {
			pr_err("Image userns.img: extent %zu of its %s is out of range", i, what);
			return -1;
		}
	return 0;
}

/* The restore's state: the image, and its maps for the other parts. */
struct userns_rst {
	UsernsEntry *e;
	struct idmap map;
};

static struct idmap_extent *extents(UsernsExtent **m, size_t n)
{
	struct idmap_extent *x = xmalloc(n * sizeof(*x));
	size_t i;

	for (i = 0; x && i < n; i++) {
		x[i].first = m[i]->first;
		x[i].lower_first = m[i]->lower_first;
		x[i].count = m[i]->count;
	}
	return x;
}

static int userns_load_tree(struct rst_ctx *rc)
{
	struct userns_rst *r;
	UsernsEntry *e;
	int ret;

	ret = img_read(rc->dirfd, IMG_USERNS, 0, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	r = xzalloc(sizeof(*r));
	if (!r) {
		img_free(IMG_USERNS, e);
		return -1;
	}
	r->e = e;
	rc->shared[PART_USERNS] = r;
	if (check_map(e->uid_map, e->n_uid_map, "uid_map") ||
	    check_map(e->gid_map, e->n_gid_map, "gid_map"))
		return -1;
	r->map.uid = extents(e->uid_map, e->n_uid_map);
	r->map.gid = extents(e->gid_map, e->n_gid_map);
	if (!r->map.uid || !r->map.gid)
		return -1;
	r->map.nr_uid = e->n_uid_map;
	r->map.nr_gid = e->n_gid_map;
	rc->idmap = &r->map;
	/* the root is born in it, with the namespaces it owns */
	rc->root_flags |= CLONE_NEWUSER;
	return 0;
}

static int write_one(pid_t pid, const char *name, const char *text)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ret = fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ? -1 : 0;
	if (ret)
		pr_perror("Task %d: can't write its user namespace's %s", pid, name);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A map in one write, as the kernel takes it (it takes only one). */
static int write_map(struct rtask *root, const char *name, UsernsExtent **m, size_t n)
{
	char *buf = xmalloc(n * 36 + 1);
	size_t i, len = 0;
	int ret;

	if (!buf)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, 37, "%u %u %u\n", m[i]->first, m[i]->lower_first,
				m[i]->count);
	ret = write_one(root->host_pid, name, buf);
	free(buf);
	return ret;
}

static int userns_forked(struct rst_ctx *rc, struct rtask *root)
{
	struct userns_rst *r = rc->shared[PART_USERNS];
	UsernsEntry *e = r ? r->e : NULL;

	if (!e)
		return 0;
	if ((!e->setgroups && write_one(root->host_pid, "setgroups", "deny")) ||
	    write_map(root, "gid_map", e->gid_map, e->n_gid_map) ||
	    write_map(root, "uid_map", e->uid_map, e->n_uid_map))
		return -1;
	pr_info("Task %d: its user namespace has its maps", root->pid);
	return 0;
}

static void userns_release_tree(struct rst_ctx *rc)
{
	struct userns_rst *r = rc->shared[PART_USERNS];

	if (!r)
		return;
	rc->idmap = NULL;
	free(r->map.uid);
	free(r->map.gid);
	img_free(IMG_USERNS, r->e);
	free(r);
	rc->shared[PART_USERNS] = NULL;
}

const struct part part_userns = {
	.name = "userns",
	.id = PART_USERNS,
	.check = userns_check,
	.dump_tree = userns_dump_tree,
	.load_tree = userns_load_tree,
	.forked = userns_forked,
	.release_tree = userns_release_tree,
};
