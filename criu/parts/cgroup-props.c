// SPDX-License-Identifier: GPL-2.0
/*
 * The properties of a cgroup that a dump keeps and a restore writes back
 * (--manage-cgroups decides where): the limits and weights of each
 * controller, v1 and v2, in the order they must be written. Only files of
 * this table are ever written, whatever an image says.
 *
 * Values are kept as the kernel shows them, which is what it takes back,
 * except: cpuset.cpus goes through --cpu-map (the cpu part's rules, which
 * it offers through the context: rst_ctx.map_cpus); multi-line files
 * (io.max, blkio throttles) are written a line at a time; devices.list
 * (v1) is made again by denying all, then allowing each line. A value
 * equal to the present one is not written. A write refused with EINVAL is
 * tried again after the others, for limits that bound each other
 * (memory.limit_in_bytes under memory.memsw.limit_in_bytes, a CFS quota
 * and its burst).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/cgroup-props.h"

#define P_LINES		1	/* one setting per line, written one by one */
#define P_CPUS		2	/* a CPU list, through --cpu-map */
#define P_DEVICES	4	/* v1 devices.list: deny all, allow each line */
#define P_PATTERN	8	/* hugetlb.SIZE.NAME: every page size the kernel has */

struct prop {
	const char *ctrl;	/* its controller; "" for v2's core files */
	const char *name;	/* the file; with P_PATTERN its suffix */
	int flags;
};

static const struct prop v2_props[] = {
	{ "", "cgroup.max.descendants", 0 },
	{ "", "cgroup.max.depth", 0 },
	{ "cpu", "cpu.weight", 0 },
	{ "cpu", "cpu.max", 0 },
	{ "cpu", "cpu.max.burst", 0 },
	{ "cpu", "cpu.idle", 0 },
	{ "cpu", "cpu.uclamp.min", 0 },
	{ "cpu", "cpu.uclamp.max", 0 },
	{ "cpuset", "cpuset.cpus", P_CPUS },
	{ "cpuset", "cpuset.mems", 0 },
	{ "cpuset", "cpuset.cpus.partition", 0 },
	{ "memory", "memory.min", 0 },
	{ "memory", "memory.low", 0 },
	{ "memory", "memory.high", 0 },
	{ "memory", "memory.max", 0 },
	{ "memory", "memory.swap.high", 0 },
	{ "memory", "memory.swap.max", 0 },
	{ "memory", "memory.zswap.max", 0 },
	{ "memory", "memory.oom.group", 0 },
	{ "pids", "pids.max", 0 },
	{ "io", "io.weight", P_LINES },
	{ "io", "io.max", P_LINES },
	{ "io", "io.latency", P_LINES },
	{ "hugetlb", ".max", P_PATTERN },
	{ "hugetlb", ".rsvd.max", P_PATTERN },
};

static const struct prop v1_props[] = {
	{ "cpuset", "cpuset.cpus", P_CPUS },
	{ "cpuset", "cpuset.mems", 0 },
	{ "cpuset", "cpuset.cpu_exclusive", 0 },
	{ "cpuset", "cpuset.mem_exclusive", 0 },
	{ "cpuset", "cpuset.mem_hardwall", 0 },
	{ "cpuset", "cpuset.memory_migrate", 0 },
	{ "cpuset", "cpuset.sched_load_balance", 0 },
	{ "cpu", "cpu.shares", 0 },
	{ "cpu", "cpu.cfs_period_us", 0 },
	{ "cpu", "cpu.cfs_quota_us", 0 },
	{ "cpu", "cpu.cfs_burst_us", 0 },
	{ "cpu", "cpu.idle", 0 },
	{ "memory", "memory.limit_in_bytes", 0 },
	{ "memory", "memory.memsw.limit_in_bytes", 0 },
	{ "memory", "memory.soft_limit_in_bytes", 0 },
	{ "memory", "memory.swappiness", 0 },
	{ "pids", "pids.max", 0 },
	{ "devices", "devices.list", P_DEVICES },
	{ "blkio", "blkio.weight", 0 },
	{ "blkio", "blkio.throttle.read_bps_device", P_LINES },
	{ "blkio", "blkio.throttle.write_bps_device", P_LINES },
	{ "blkio", "blkio.throttle.read_iops_device", P_LINES },
	{ "blkio", "blkio.throttle.write_iops_device", P_LINES },
	{ "net_cls", "net_cls.classid", 0 },
	{ "hugetlb", ".limit_in_bytes", P_PATTERN },
	{ "hugetlb", ".rsvd.limit_in_bytes", P_PATTERN },
};

/* Whether @tok is one of the blank- or comma-separated words of @list. */
static int in_list(const char *list, const char *tok)
{
	size_t n, len = strlen(tok);

	while (*list) {
		n = strcspn(list, " ,\n");
		if (n == len && !strncmp(list, tok, len))
			return 1;
		list += n;
		list += strspn(list, " ,\n");
	}
	return 0;
}

/* hugetlb.SIZE@suffix, SIZE as the kernel names page sizes ("2MB"). */
static int pattern_match(const char *name, const char *suffix)
{
	size_t len = strlen(name), slen = strlen(suffix), i;

	if (strncmp(name, "hugetlb.", 8) || len <= 8 + slen ||
	    strcmp(name + len - slen, suffix))
		return 0;
	for (i = 8; i < len - slen; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || name[i] == 'K' || name[i] == 'M' ||
		      name[i] == 'G' || name[i] == 'B'))
			return 0;
	return 1;
}

static const struct prop *table(int v2, size_t *nr)
{
	*nr = v2 ? ARRAY_SIZE(v2_props) : ARRAY_SIZE(v1_props);
	return v2 ? v2_props : v1_props;
}

static const struct prop *find_prop(const char *controllers, const char *name)
{
	size_t i, nr;
	const struct prop *t = table(!*controllers, &nr);

	for (i = 0; i < nr; i++) {
		if (*controllers && !in_list(controllers, t[i].ctrl))
			continue;
		if (t[i].flags & P_PATTERN ? pattern_match(name, t[i].name) :
					     !strcmp(name, t[i].name))
			return &t[i];
	}
	return NULL;
}

int cgprops_known(const char *controllers, const char *name)
{
	return !strcmp(name, "cgroup.type") || !strcmp(name, "cgroup.subtree_control") ||
	       find_prop(controllers, name) != NULL;
}

static int add_prop(CgroupDir *d, const char *name, char *value)
{
	CgroupProp **n = xrealloc(d->props, (d->n_props + 1) * sizeof(*n));
	CgroupProp *p = xzalloc(sizeof(*p));

	if (n)
		d->props = n;
	if (!n || !p || !(name = xstrdup(name))) {
		free(p);
		free(value);
		return -1;
	}
	cgroup_prop__init(p);
	p->name = (char *)name;
	p->value = value;
	d->props[d->n_props++] = p;
	return 0;
}

static int read_one(int dirfd, const char *name, CgroupDir *d, const char *what)
{
	char *v = cgfs_read(dirfd, name);

	if (!v && (errno == ENOENT || errno == EOPNOTSUPP))
		return 0;	/* not in this kernel, or not for this cgroup */
	if (!v) {
		pr_perror("Can't read %s of cgroup %s", name, what);
		return -1;
	}
	return add_prop(d, name, v);
}

/* Every hugetlb.SIZE@suffix file of the cgroup. */
static int read_pattern(int dirfd, const char *suffix, CgroupDir *d, const char *what)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;
	struct dirent *e;
	DIR *dir;

	if (fd < 0 || !(dir = fdopendir(fd))) {
		pr_perror("Can't list cgroup %s", what);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (!ret && (e = readdir(dir)))
		if (pattern_match(e->d_name, suffix))
			ret = read_one(dirfd, e->d_name, d, what);
	closedir(dir);
	return ret;
}

/* v2: the type and the controllers given to children, besides the table's. */
static int read_v2_core(int dirfd, CgroupDir *d, const char *what)
{
	char *type = cgfs_read(dirfd, "cgroup.type");

	if (type && !strcmp(type, "threaded"))
		return add_prop(d, "cgroup.type", type);
	free(type);
	return read_one(dirfd, "cgroup.subtree_control", d, what);
}

int cgprops_read(int dirfd, const char *controllers, int is_root, CgroupDir *d,
		 const char *what)
{
	int v2 = !*controllers, ret = 0;
	char *enabled = NULL;
	const struct prop *t;
	size_t i, nr;

	if (is_root)
		return 0;	/* a hierarchy's root has no limits to set */
	if (v2) {
		enabled = cgfs_read(dirfd, "cgroup.controllers");
		if (!enabled || read_v2_core(dirfd, d, what)) {
			if (!enabled)
				pr_perror("Can't read cgroup.controllers of cgroup %s", what);
			free(enabled);
			return -1;
		}
	}
	t = table(v2, &nr);
	for (i = 0; i < nr && !ret; i++) {
		if (*t[i].ctrl && !in_list(v2 ? enabled : controllers, t[i].ctrl))
			continue;
		if (t[i].flags & P_PATTERN)
			ret = read_pattern(dirfd, t[i].name, d, what);
		else
			ret = read_one(dirfd, t[i].name, d, what);
	}
	free(enabled);
	return ret;
}

void cgprops_free(CgroupDir *d)
{
	size_t i;

	for (i = 0; i < d->n_props; i++) {
		free(d->props[i]->name);
		free(d->props[i]->value);
		free(d->props[i]);
	}
	free(d->props);
	d->props = NULL;
	d->n_props = 0;
}

/* Writes each line of @val into @file: multi-line files take one at a time. */
static int write_lines(int dirfd, const char *file, const char *val)
{
	char *copy = xstrdup(val), *line, *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save))
		ret = cgfs_write(dirfd, file, line);
	free(copy);
	return ret;
}

static int write_devices(int dirfd, const char *val)
{
	if (!strcmp(val, "a *:* rwm"))
		return cgfs_write(dirfd, "devices.allow", "a");
	if (cgfs_write(dirfd, "devices.deny", "a"))
		return -1;
	return write_lines(dirfd, "devices.allow", val);
}

/* v2: turn on, for the children, the controllers that are not on yet. */
static int write_subtree(int dirfd, const char *val)
{
	char *now = cgfs_read(dirfd, "cgroup.subtree_control"), *copy, *tok, *save = NULL;
	char buf[32];
	int ret = 0;

	copy = xstrdup(val);
	if (!now || !copy) {
		free(now);
		free(copy);
		return -1;
	}
	for (tok = strtok_r(copy, " ", &save); tok && !ret; tok = strtok_r(NULL, " ", &save)) {
		if (in_list(now, tok))
			continue;
		snprintf(buf, sizeof(buf), "+%.30s", tok);
		ret = cgfs_write(dirfd, "cgroup.subtree_control", buf);
	}
	free(now);
	free(copy);
	return ret;
}

/* One property; 1 when the kernel refused it with EINVAL (to try again). */
static int write_prop(int dirfd, const char *controllers, const CgroupProp *p,
		      const struct cgprops_ctx *ctx, const char *what, int last_try)
{
	const struct prop *pr = find_prop(controllers, p->name);
	int ret, flags = pr ? pr->flags : 0;
	const char *val = p->value;
	char cpus[1024], *now;

	if ((flags & P_CPUS) && *val) {
		if (!ctx->map_cpus ||
		    ctx->map_cpus(ctx->opts, ctx->online_then, val, cpus, sizeof(cpus), what))
			return -1;
		val = cpus;
	}
	now = cgfs_read(dirfd, p->name);
	if (!now && errno == ENOENT) {
		pr_warn("Cgroup %s: this kernel has no %s: %s not restored", what, p->name, val);
		return 0;
	}
	if (now && !strcmp(now, val)) {
		free(now);
		return 0;
	}
	free(now);
	if (!strcmp(p->name, "cgroup.subtree_control"))
		ret = write_subtree(dirfd, val);
	else if (flags & P_DEVICES)
		ret = write_devices(dirfd, val);
	else if ((flags & P_LINES) || strchr(val, '\n'))
		ret = write_lines(dirfd, p->name, val);
	else
		ret = cgfs_write(dirfd, p->name, val);
	if (!ret)
		return 0;
	if (errno == EINVAL && !last_try)
		return 1;
	pr_perror("Cgroup %s: can't write %s to %s", what, val, p->name);
	return -1;
}

int cgprops_init(int hfd, const char *controllers, const char *abs)
{
	static const char *const inherit[] = { "cpuset.cpus", "cpuset.mems" };
	char path[4096], *v = NULL, *slash;
	size_t i;
	int ret = 0;

	if (!*controllers || !in_list(controllers, "cpuset"))
		return 0;
	if (strlen(abs) + 32 > sizeof(path)) {
		pr_err("Cgroup %.64s...: its path is too long", abs);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(inherit) && !ret; i++) {
		snprintf(path, sizeof(path), "%s", abs + 1);
		slash = strrchr(path, '/');
		snprintf(slash ? slash + 1 : path, sizeof(path) - (slash ? slash + 1 - path : 0),
			 "%s", inherit[i]);
		v = cgfs_read(hfd, path);
		snprintf(path, sizeof(path), "%s/%s", abs + 1, inherit[i]);
		ret = !v || (*v && cgfs_write(hfd, path, v));
		if (ret)
			pr_perror("Cgroup %s: can't give it the %s of its parent", abs, inherit[i]);
		free(v);
	}
	return ret ? -1 : 0;
}

int cgprops_write(int dirfd, const char *controllers, const CgroupDir *d,
		  const struct cgprops_ctx *ctx, const char *what)
{
	char *again;
	size_t i;
	int ret = 0, r;

	again = xzalloc(d->n_props + 1);
	if (!again)
		return -1;
	for (i = 0; i < d->n_props && !ret; i++) {
		r = write_prop(dirfd, controllers, d->props[i], ctx, what, 0);
		if (r < 0)
			ret = -1;
		again[i] = r == 1;
	}
	for (i = 0; i < d->n_props && !ret; i++)
		if (again[i] && write_prop(dirfd, controllers, d->props[i], ctx, what, 1))
			ret = -1;
	free(again);
	return ret;
}
