// SPDX-License-Identifier: GPL-2.0
/*
 * memfd_create() files held open: a kind of open file for the fd table
 * (file.c). The object itself (contents, size, name, seals, mode) is
 * saved once for the tree by shmem.c, which also finds every memfd fd
 * of every task; a description only names its object by the dev/ino it
 * had. Restore reopens the object criu created through /proc/self/fd, a
 * new description with the saved flags and offset on the same file.
 * MFD_CLOEXEC is the fd's close-on-exec flag (the fd table keeps it) and
 * MFD_ALLOW_SEALING shows in the seals: without it a memfd has F_SEAL_SEAL.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-object.h"

static int memfd_match(const char *link, const struct stat *st)
{
	return S_ISREG(st->st_mode) && proc_shmem_kind(link, st->st_dev) == SHMO_MEMFD;
}

static int memfd_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	d->memfd = file_object_ref(f->st);
	return d->memfd ? 0 : -1;
}

static void memfd_free(FileDesc *d)
{
	free(d->memfd);
	d->memfd = NULL;
}

static int memfd_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	if (!d->memfd || !rst_object_known(rc, d->memfd->dev, d->memfd->ino)) {
		pr_err("Task %d: image files.img has memfd #%u without its object in shmem.img",
		       pid, d->id);
		return -1;
	}
	return 0;
}

static int memfd_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	return file_reopen_object(rc, pid, d->memfd, d);
}

const struct file_kind fk_memfd = {
	.name = "memfd",
	.kind = FILE_KIND__FILE_MEMFD,
	.match = memfd_match,
	.dump = memfd_dump,
	.free = memfd_free,
	.validate = memfd_validate,
	.open = memfd_open,
};
