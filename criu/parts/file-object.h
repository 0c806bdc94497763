/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_OBJECT_H
#define CRIU_PARTS_FILE_OBJECT_H

/*
 * fds on an object shmem.c saves and makes for the whole tree (a memfd, a
 * ghost file): the kinds that hold them (file-memfd.c, file-reg.c) name
 * the object by the dev/ino it had and reopen the one criu made.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include "fdinfo.pb-c.h"

struct rst_ctx;

/* Dump: the reference to the object of an fd on @st; NULL logged. */
ShmemRef *file_object_ref(const struct stat *st);
/*
 * Restore: a new description, with @d's flags and offset, of the object
 * @ref criu made, as reopening through /proc gives; -1 logged.
 */
int file_reopen_object(struct rst_ctx *rc, pid_t pid, const ShmemRef *ref,
		       const FileDesc *d);

#endif
