/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_IDMAP_H
#define CRIU_TASK_IDMAP_H

/*
 * The ids of the tree's user namespace, for the parts that give ids to
 * tasks (creds) and to mounts and files (ns-mnt): the images hold criu's
 * ids, as criu saw them at the dump; from inside the namespace, where
 * those parts set them, they are named through its maps. The user
 * namespace part (parts/ns-user.c) sets rc->idmap in its load; NULL: the
 * tree has no user namespace of its own, an id is itself.
 */
#include <stddef.h>
#include <stdint.h>

struct idmap_extent {
	uint32_t first;		/* inside */
	uint32_t lower_first;	/* criu's */
	uint32_t count;
};

struct idmap {
	struct idmap_extent *uid, *gid;
	size_t nr_uid, nr_gid;
};

/* @host (@gid: a group id) as the namespace names it; -1 (not logged): unmapped. */
int idmap_inside(const struct idmap *m, int gid, uint32_t host, uint32_t *inside);

/*
 * In a task of the namespace: take its root's filesystem ids (else the
 * first ids it maps), for what a filesystem mounted there must own (a
 * tmpfs takes no file from an owner its namespace does not map). Only the
 * filesystem ids: the namespace's root gets the filesystem capabilities,
 * another id keeps them. There is no way back to criu's ids, which the
 * namespace does not map: for a helper child. -1 logged.
 */
int idmap_take_fs_ids(const struct idmap *m);

/*
 * In a task of the namespace, which keeps criu's ids: @make(@arg), which
 * returns an fd it made (-1 logged), run with the namespace's filesystem
 * ids in a child that shares the caller's fd table (a file or directory
 * made inside, where criu's ids can't own one: EOVERFLOW). The fd, in
 * the caller, or -1 logged (@what names it). Without @m: @make itself.
 */
int idmap_make_fd(const struct idmap *m, int (*make)(void *arg), void *arg, const char *what);

#endif
