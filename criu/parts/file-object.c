// SPDX-License-Identifier: GPL-2.0
/*
 * fds on an object of the whole tree (file-object.h): the dump names the
 * object, the restore reopens the fd criu made and every task inherited.
 * Reopening through /proc/self/fd makes a new description of the same
 * file, which takes the saved flags and offset; descriptions several fds
 * share stay shared by the fd table (file.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-object.h"

ShmemRef *file_object_ref(const struct stat *st)
{
	ShmemRef *r = xmalloc(sizeof(*r));

	if (r) {
		shmem_ref__init(r);
		r->dev = st->st_dev;
		r->ino = st->st_ino;
	}
	return r;
}

int file_reopen_object(struct rst_ctx *rc, pid_t pid, const ShmemRef *ref,
		       const FileDesc *d)
{
	int obj = rst_object_fd(rc, ref->dev, ref->ino), fd;
	char path[64];

	if (obj < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", obj);
	fd = open(path, d->flags & OPEN_STATUS_MASK);
	if (fd < 0) {
		pr_perror("Task %d: can't reopen %s", pid, d->path);
		return -1;
	}
	if (!(d->flags & O_PATH) && lseek(fd, d->pos, SEEK_SET) != (off_t)d->pos) {
		pr_perror("Task %d: can't seek %s to %lu", pid, d->path, d->pos);
		close(fd);
		return -1;
	}
	return fd;
}
