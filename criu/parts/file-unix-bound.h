/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_UNIX_BOUND_H
#define CRIU_PARTS_FILE_UNIX_BOUND_H

/* Unix sockets other than socketpair() ends (file-unix-bound.c), for file-unix.c. */
#include <stddef.h>

#include "parts/file-kind.h"

/* Dump, once every task is saved: queued clients, accepted ends, peers. */
int unix_bound_dump_done(struct file_ref *files, size_t n);
int unix_bound_validate(pid_t pid, const FileDesc *d);
struct idmap;

/*
 * @data: the kind's slot (file-kind.h's open_object); @ids: the maps of
 * the tree's user namespace when the root binds them inside it, else NULL
 * (criu's ids are the files' own)
 */
int unix_open_bound(const struct idmap *ids, void **data, FileDesc **d, int n, int *fds);
/* The restore is over: when it failed, the socket files criu made go again. */
void unix_bound_restored(void **data, int failed);

#endif
