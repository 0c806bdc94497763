/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CGROUP_PROPS_H
#define CRIU_PARTS_CGROUP_PROPS_H

/*
 * The properties of cgroups (cgroup-props.c): which control files, in
 * which order, and how each is written back; for the cgroup part's dump
 * (cgroup.c) and restore (cgroup-restore.c).
 */
#include <stddef.h>

#include "core/opts.h"
#include "cgroup.pb-c.h"

/*
 * Reads the properties of cgroup @dirfd of the hierarchy of @controllers
 * ("" for v2) into @d->props. @is_root: the hierarchy's root, which has
 * none. -1 logged, @what naming the cgroup.
 */
int cgprops_read(int dirfd, const char *controllers, int is_root, CgroupDir *d,
		 const char *what);
void cgprops_free(CgroupDir *d);

struct cgprops_ctx {
	const struct opts *opts;	/* --cpu-map */
	const char *online_then;	/* the CPUs online at dump */
	/* the cpu part's mapping of CPU lists (rst_ctx.map_cpus) */
	int (*map_cpus)(const struct opts *o, const char *online_then, const char *list,
			char *out, size_t len, const char *what);
};

/*
 * Writes @d's properties into cgroup @dirfd, those whose value differs
 * only; a file this kernel lacks is skipped with a warning. -1 logged.
 */
int cgprops_write(int dirfd, const char *controllers, const CgroupDir *d,
		  const struct cgprops_ctx *ctx, const char *what);
/*
 * A cgroup criu just made at @abs: a v1 cpuset starts with no CPU and no
 * memory node, where nothing can join; it gets its parent's until its own
 * properties (if any) are written. -1 logged.
 */
int cgprops_init(int hfd, const char *controllers, const char *abs);
/* An image's property is one criu knows and would write (load's check). */
int cgprops_known(const char *controllers, const char *name);

#endif
