// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container's cgroups, on the host side: which hierarchies the host
 * mounts, a cgroup for the container in each chosen one, its limits, and
 * their removal at teardown.
 *
 * A relative --cgroup path is placed under the cgroup ctr itself runs in,
 * in each hierarchy, as runc does with a relative cgroupsPath: the
 * container stays inside whatever limits its caller has.  Only the
 * directories ctr created are removed, deepest first, so a shared parent
 * such as "ctr-test" in "ctr-test/NAME" goes only with its last container.
 *
 * Hybrid hosts (this project's machines) mount cgroup v1 controllers under
 * /sys/fs/cgroup and an empty cgroup2 at /sys/fs/cgroup/unified: the
 * limits go to v1, and the container also gets a cgroup in the unified
 * hierarchy, as runc gives it.  On a pure v2 host everything is cgroup2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "ctr.h"

#define CGROUP2_SUPER_MAGIC 0x63677270

bool cg_pure_v2(void)
{
	struct statfs st;

	return statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC;
}

/* Is word one of the comma separated items of list? */
static bool in_list(const char *list, const char *word, size_t len)
{
	const char *p = list;
	size_t n;

	while (*p) {
		n = strcspn(p, ",");
		if (n == len && !strncmp(p, word, len))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* Same controllers, in any order? */
static bool same_set(const char *a, const char *b)
{
	const char *p;
	size_t n;
	int na = 0, nb = 0;

	for (p = a; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (!in_list(b, p, n))
			return false;
		na++;
	}
	for (p = b; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		nb++;
	}
	return na == nb;
}

/* The controllers among a v1 mount's super options: those /proc/cgroups
 * lists, and name=X. */
static void v1_controllers(const char *super, const char *known, char *out, size_t size)
{
	const char *p;
	size_t n, len = 0;

	out[0] = '\0';
	for (p = super; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (strncmp(p, "name=", 5) && !in_list(known, p, n))
			continue;
		if (len + n + 2 > size)
			break;
		if (len)
			out[len++] = ',';
		memcpy(out + len, p, n);
		len += n;
		out[len] = '\0';
	}
}

static int known_controllers(char *out, size_t size)
{
	char buf[4096], name[64], *line, *save;
	size_t len = 0;

	out[0] = '\0';
	if (read_file("/proc/cgroups", buf, sizeof(buf)) < 0) {
		ctr_perr("read /proc/cgroups");
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || sscanf(line, "%63s", name) != 1)
			continue;
		len += snprintf(out + len, size - len, "%s%s", len ? "," : "", name);
		if (len >= size)
			return -1;
	}
	return 0;
}

static struct ctr_hier *hier_add(struct ctr_host *h, const char *mnt, const char *opts, bool v2)
{
	struct ctr_hier *x;
	int i;

	for (i = 0; i < h->nr_hier; i++)
		if (h->hier[i].v2 == v2 && !strcmp(h->hier[i].opts, opts))
			return NULL;	/* mounted twice: the first one serves */
	if (h->nr_hier == CTR_MAX_HIER)
		return NULL;
	x = &h->hier[h->nr_hier++];
	memset(x, 0, sizeof(*x));
	snprintf(x->mnt, sizeof(x->mnt), "%s", mnt);
	snprintf(x->opts, sizeof(x->opts), "%s", opts);
	x->v2 = v2;
	return x;
}

static int parse_mountinfo(struct ctr_host *h, const char *known)
{
	char line[4096], mnt[256], fstype[64], super[1024], ctl[128];
	char *sep;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		ctr_perr("open /proc/self/mountinfo");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			hier_add(h, mnt, "", true);
		} else if (!strcmp(fstype, "cgroup")) {
			v1_controllers(super, known, ctl, sizeof(ctl));
			if (ctl[0])
				hier_add(h, mnt, ctl, false);
		}
	}
	fclose(f);
	return 0;
}

/* ctr's own cgroup in each hierarchy, from /proc/self/cgroup. */
static int parse_own(struct ctr_host *h)
{
	char buf[8192], *line, *save, *ctl, *path;
	int i;

	if (read_file("/proc/self/cgroup", buf, sizeof(buf)) < 0) {
		ctr_perr("read /proc/self/cgroup");
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		for (i = 0; i < h->nr_hier; i++) {
			struct ctr_hier *x = &h->hier[i];

			if (x->v2 ? ctl[0] == '\0' : same_set(ctl, x->opts))
				snprintf(x->own, sizeof(x->own), "%s", path);
		}
	}
	return 0;
}

int cg_discover(struct ctr_host *h, const char *controllers)
{
	char known[1024];
	const char *p;
	size_t n;
	int i;

	h->nr_hier = 0;
	if (known_controllers(known, sizeof(known)) || parse_mountinfo(h, known) ||
	    parse_own(h))
		return -1;
	for (i = 0; i < h->nr_hier; i++) {
		struct ctr_hier *x = &h->hier[i];

		x->used = x->v2;	/* the unified hierarchy, where mounted */
		for (p = controllers; *p && !x->used; p += n + !!p[n]) {
			n = strcspn(p, ",");
			x->used = in_list(x->opts, p, n);
		}
	}
	return 0;
}

/* Copies a cpuset file from the parent: a v1 cpuset cgroup takes no task
 * while its cpus or mems are empty, and new ones start empty. */
static int cpuset_inherit(const char *dir)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	char parent[1024], path[1100], val[4096];
	unsigned int i;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", parent, files[i]);
		if (read_file(path, val, sizeof(val)) < 0) {
			ctr_perr("read %s", path);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (write_file(path, val))
			return -1;
	}
	return 0;
}

static int record_dir(struct ctr_host *h, const char *dir, bool leaf)
{
	if (h->nr_cgdirs == CTR_MAX_CGDIRS) {
		ctr_err("too many cgroup directories to create");
		return -1;
	}
	snprintf(h->cgdirs[h->nr_cgdirs].path, sizeof(h->cgdirs[0].path), "%s", dir);
	h->cgdirs[h->nr_cgdirs++].leaf = leaf;
	return 0;
}

/* mkdir each component of rel below base, recording what was created; the
 * last one must be new: a container does not share its cgroup. */
static int create_path(struct ctr_host *h, struct ctr_hier *x, const char *base,
		       const char *rel)
{
	char dir[1024];
	const char *p = rel;
	size_t n, len;
	bool cpuset = in_list(x->opts, "cpuset", 6);

	len = snprintf(dir, sizeof(dir), "%s", base);
	while (*p) {
		n = strcspn(p, "/");
		if (n && len + n + 1 < sizeof(dir)) {
			len += snprintf(dir + len, sizeof(dir) - len, "/%.*s", (int)n, p);
			if (mkdir(dir, 0755) == 0) {
				if (record_dir(h, dir, !p[n]) ||
				    (cpuset && cpuset_inherit(dir)))
					return -1;
			} else if (errno != EEXIST || !p[n]) {
				ctr_perr("mkdir cgroup %s", dir);
				return -1;
			}
		}
		p += n + !!p[n];
	}
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	return 0;
}

/* The hierarchy that has this v1 controller, used; else the v2 one. */
static const char *limit_dir(struct ctr_host *h, const char *ctl, const char *v2file)
{
	char path[1200];
	int i;

	for (i = 0; i < h->nr_hier; i++)
		if (h->hier[i].used && !h->hier[i].v2 &&
		    in_list(h->hier[i].opts, ctl, strlen(ctl)))
			return h->hier[i].dir;
	for (i = 0; i < h->nr_hier; i++) {
		if (!h->hier[i].used || !h->hier[i].v2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", h->hier[i].dir, v2file);
		if (access(path, F_OK) == 0)
			return h->hier[i].dir;
	}
	ctr_err("no cgroup of the container has the %s controller (v1: add it to "
		"--cgroup-controllers; v2: enable it in the parent's cgroup.subtree_control)",
		ctl);
	return NULL;
}

static int set_limit(struct ctr_host *h, const char *ctl, const char *v1file,
		     const char *v1val, const char *v2file, const char *v2val)
{
	const char *dir = limit_dir(h, ctl, v2file);
	char path[1200];
	bool v1;
	int i;

	if (!dir)
		return -1;
	v1 = false;
	for (i = 0; i < h->nr_hier; i++)
		if (h->hier[i].dir == dir)
			v1 = !h->hier[i].v2;
	snprintf(path, sizeof(path), "%s/%s", dir, v1 ? v1file : v2file);
	return write_file(path, v1 ? v1val : v2val);
}

static int set_limits(const struct ctr_limits *l, struct ctr_host *h)
{
	char a[64], b[64];

	if (l->memory) {
		snprintf(a, sizeof(a), "%lld", l->memory);
		if (set_limit(h, "memory", "memory.limit_in_bytes", a, "memory.max", a))
			return -1;
	}
	if (l->pids) {
		snprintf(a, sizeof(a), "%lld", l->pids);
		if (set_limit(h, "pids", "pids.max", a, "pids.max", a))
			return -1;
	}
	if (l->cpu_quota) {
		/* v1 checks the quota against the period: the period first */
		snprintf(a, sizeof(a), "%lld", l->cpu_period);
		snprintf(b, sizeof(b), "%lld %lld", l->cpu_quota, l->cpu_period);
		if (set_limit(h, "cpu", "cpu.cfs_period_us", a, "cpu.max", b))
			return -1;
		snprintf(a, sizeof(a), "%lld", l->cpu_quota);
		if (set_limit(h, "cpu", "cpu.cfs_quota_us", a, "cpu.max", b))
			return -1;
	}
	if (l->cpu_shares) {
		/* runc's mapping of shares [2, 262144] onto weight [1, 10000] */
		snprintf(a, sizeof(a), "%lld", l->cpu_shares);
		snprintf(b, sizeof(b), "%lld", 1 + ((l->cpu_shares - 2) * 9999) / 262142);
		if (set_limit(h, "cpu", "cpu.shares", a, "cpu.weight", b))
			return -1;
	}
	return 0;
}

int cg_create(const struct ctr_config *c, struct ctr_host *h)
{
	char base[1024];
	int i;

	for (i = 0; i < h->nr_hier; i++) {
		struct ctr_hier *x = &h->hier[i];

		if (!x->used)
			continue;
		if (c->cgroup[0] == '/')
			snprintf(base, sizeof(base), "%s", x->mnt);
		else
			snprintf(base, sizeof(base), "%s%s", x->mnt,
				 strcmp(x->own, "/") ? x->own : "");
		if (create_path(h, x, base, c->cgroup))
			return -1;
	}
	return set_limits(&c->lim, h);
}

int cg_join(struct ctr_host *h, pid_t pid)
{
	char path[1100], val[32];
	int i;

	snprintf(val, sizeof(val), "%d\n", pid);
	for (i = 0; i < h->nr_hier; i++) {
		if (!h->hier[i].used || !h->hier[i].dir[0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", h->hier[i].dir);
		if (write_file(path, val))
			return -1;
	}
	return 0;
}

/*
 * rmdir the container's cgroup, waiting a little while its last tasks
 * exit; a parent ctr created stays while other containers' cgroups are in
 * it (EBUSY at once: it has no tasks of its own).
 */
static int rmdir_wait(const char *dir, bool leaf)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int tries;

	for (tries = 0; tries < 300; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		if (!leaf)
			return 0;
		nanosleep(&ts, NULL);
	}
	ctr_perr("rmdir cgroup %s", dir);
	return -1;
}

int cg_remove(struct ctr_host *h)
{
	int ret = 0;

	while (h->nr_cgdirs > 0) {
		h->nr_cgdirs--;
		if (rmdir_wait(h->cgdirs[h->nr_cgdirs].path, h->cgdirs[h->nr_cgdirs].leaf))
			ret = -1;
	}
	return ret;
}
