/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_CGROUPFS_H
#define CRIU_CORE_CGROUPFS_H

/*
 * The cgroup hierarchies, reached from criu's side: a hierarchy is named
 * by its controllers as /proc/PID/cgroup lists them ("cpu,cpuacct",
 * "name=systemd"; "" is the unified v2 one). cgfs_open() gives an
 * O_PATH directory fd on the root of the hierarchy (as criu's cgroup
 * namespace sees it): a mount of it in criu's mount namespace when there
 * is one, else a detached mount of criu's own (fsmount), never attached
 * anywhere.
 */

#include "core/opts.h"

/* -1 logged, naming the hierarchy. */
int cgfs_open(const char *controllers);
/* What a hierarchy is called in messages: "cpu", "unified"... */
const char *cgfs_name(const char *controllers);
/*
 * Writes @val to @dir/@file, as one write(2); -1 with errno set, nothing
 * logged (callers name the task and the cgroup).
 */
int cgfs_write(int dirfd, const char *file, const char *val);
/* Reads @dir/@file, trimmed of the last newline; NULL with errno set. */
char *cgfs_read(int dirfd, const char *file);

/* --manage-cgroups MODE by CRIU's name ("soft"...): CG_MODE_*, or -1. */
int cg_mode_parse(const char *name);
const char *cg_mode_name(int mode);
/*
 * --cgroup-root [CONTROLLER:]/PATH: CONTROLLER names a hierarchy by any of
 * its controllers ("cpu" for "cpu,cpuacct", "name=systemd", "unified" for
 * v2). @arg is kept (the strings point into it). -1 when it is not that.
 */
int cg_root_parse(char *arg, struct cg_root *r);
/*
 * --cgroup-root for the hierarchy of @controllers: the last that names it,
 * else the last that names none; NULL without one.
 */
const char *cg_root_for(const struct opts *o, const char *controllers);

/* A cgroup path: absolute ("/a/b", "/") or relative to a root ("a/b", ""). */
int cg_path_ok(const char *p, int absolute);
int cg_is_under(const char *path, const char *root);
/* @path (under @root) relative to it; "" for the root itself. */
const char *cg_rel(const char *path, const char *root);
/* @root and a relative path joined, malloc'ed. */
char *cg_join(const char *root, const char *rel);

#endif
