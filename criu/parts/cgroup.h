/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CGROUP_H
#define CRIU_PARTS_CGROUP_H

/*
 * Between the cgroup part (cgroup.c: membership, directories, namespaces)
 * and its properties (cgroup-props.c: which control files, in which order,
 * and how each is written back).
 */
#include "core/opts.h"
#include "parts/part.h"
#include "cgroup.pb-c.h"

/* A cgroup path: absolute ("/a/b", "/") or relative to a root ("a/b", ""). */
int cg_path_ok(const char *p, int absolute);
int cg_is_under(const char *path, const char *root);
/* @path (under @root) relative to it; "" for the root itself. */
const char *cg_rel(const char *path, const char *root);
/* @root and a relative path joined, malloc'ed. */
char *cg_join(const char *root, const char *rel);

/* The restore half (cgroup-restore.c). */
int cg_load_tree(struct rst_ctx *rc);
int cg_load(struct rst_ctx *rc, struct rtask *t);
int cg_prefork(struct rst_ctx *rc);
int cg_forked(struct rst_ctx *rc, struct rtask *root);
int cg_early(struct rst_ctx *rc, struct rtask *t);
int cg_final(struct rst_ctx *rc, struct rtask *t);
void cg_release_tree(struct rst_ctx *rc);

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
