/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_EXTERNAL_H
#define CRIU_CORE_EXTERNAL_H

#include <stddef.h>

#include "core/opts.h"

/*
 * CRIU's --external KIND[ID]:VALUE and --inherit-fd fd[N]:KEY. main.c and
 * the RPC check the syntax once and keep the strings in struct opts; the
 * part that owns a kind looks its own up:
 *
 *   net[INODE]:KEY         dump: the network namespace INODE is not dumped,
 *                          restore joins the one given as --inherit-fd KEY
 *   veth[IFNAME]:OUT[@BR]  restore: the peer outside of veth IFNAME is named
 *                          OUT (in criu's namespace), in bridge BR
 *   macvlan[IFNAME]:LOWER  restore: macvlan/ipvlan IFNAME sits on LOWER
 *   mnt[MOUNTPOINT]:KEY    dump: the mount at MOUNTPOINT comes from outside
 *   mnt[KEY]:PATH          restore: mount KEY is bound from PATH
 *   mnt[]                  dump: every mount from outside is named by its path
 *   unix[INO]              dump: unix socket INO (of the tree, or its peer) may be
 *                          connected outside the tree (--ext-unix-sk)
 */

/* 0, or -1 with a one-line reason in @err. */
int external_check(const char *arg, char *err, size_t len);
/*
 * Checks @arg and appends a copy of it to o->external (freed with
 * external_free()). @map: @arg is CRIU's --ext-mount-map KEY:VALUE (or
 * "auto"), kept as mnt[KEY]:VALUE (mnt[]). -1 with a reason in @err.
 */
int external_add(struct opts *o, const char *arg, int map, char *err, size_t len);
/*
 * CRIU's --ext-unix-sk[=INO[,INO...]]: with no list every unix socket may
 * be connected outside the tree (o->ext_unix_sk), else unix[INO] for each.
 * -1 with a reason in @err.
 */
int external_add_unix(struct opts *o, const char *list, char *err, size_t len);
void external_free(struct opts *o);
/* Was KIND[ID] given, with a value or without? */
int external_has(const struct opts *o, const char *kind, const char *id);
/* The VALUE of KIND[ID]:VALUE, or NULL when not given. */
const char *external_lookup(const struct opts *o, const char *kind, const char *id);

/* "fd[N]:KEY" into @ifd (key points into @arg); -1 with a reason in @err. */
int inherit_fd_parse(const char *arg, struct inherit_fd *ifd, char *err, size_t len);
/* The fd given for @key, or -1. */
int inherit_fd_lookup(const struct opts *o, const char *key);

#endif
