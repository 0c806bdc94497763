/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_USERNS_H
#define CRIU_PARTS_USERNS_H

#include <stdint.h>

#include "parts/part.h"

/*
 * For the parts that give tasks ids at restore (creds): @host, a user id
 * (@gid: a group id) as criu saw it at the dump, as the tree's own user
 * namespace names it. The same id when the tree has none. -1 when the
 * namespace maps no id to it (logged, naming @t).
 */
int userns_id_inside(struct rst_ctx *rc, struct rtask *t, int gid, uint32_t host,
		     uint32_t *inside);

/* The same, for ids of things rather than tasks: -1 (not logged) if unmapped. */
int userns_map_in(struct rst_ctx *rc, int gid, uint32_t host, uint32_t *inside);

/*
 * In a task of the tree's user namespace: take its root's filesystem ids
 * (else the first it maps), for what a filesystem mounted there must own
 * (a tmpfs takes no file from an owner the namespace does not map). Only
 * the filesystem ids: root of the namespace gets the filesystem
 * capabilities, another id keeps them. No way back: for a helper child.
 */
int userns_take_fs_ids(struct rst_ctx *rc);

/* The tree is in a user namespace of its own. */
int userns_of_tree(struct rst_ctx *rc);

#endif
