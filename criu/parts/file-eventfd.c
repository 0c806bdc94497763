// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd: a kind of open file for the fd table (file.c).
 *
 * Its whole state is in /proc/PID/fdinfo: the counter (in hex) and, since
 * Linux 6.5, whether it counts as a semaphore (EFD_SEMAPHORE: a read takes
 * one, not all). Restore creates it empty and writes the counter into it:
 * eventfd()'s initial value is only 32 bits wide.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"

/* a write that would take the counter past this blocks (or fails) */
#define EFD_MAX		(UINT64_MAX - 1)

static int efd_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[eventfd]");
}

static int efd_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	const char *count = proc_fdinfo_field(f->fdinfo, "eventfd-count:");
	const char *sem = proc_fdinfo_field(f->fdinfo, "eventfd-semaphore:");
	EventfdEntry *e;
	unsigned long long c;
	int s = 0;

	if (!count || sscanf(count, "%llx", &c) != 1 || (sem && sscanf(sem, "%d", &s) != 1)) {
		pr_err("Task %d: fdinfo of eventfd %d does not show its counter", f->pid, f->fd);
		return -1;
	}
	if (!sem) {
		/* before 6.5 the mode is not shown, and can't be asked for */
		pr_err("Task %d: fd %d is an eventfd, and this kernel does not show whether "
		       "it is a semaphore (Linux 6.5+)", f->pid, f->fd);
		return -1;
	}
	e = xmalloc(sizeof(*e));
	if (!e)
		return -1;
	eventfd_entry__init(e);
	e->count = c;
	e->semaphore = !!s;
	d->efd = e;
	pr_debug("Task %d: eventfd %d: count %llu%s", f->pid, f->fd, c, s ? ", semaphore" : "");
	return 0;
}

static void efd_free(FileDesc *d)
{
	free(d->efd);
	d->efd = NULL;
}

static int efd_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	if (!d->efd || d->efd->count > EFD_MAX) {
		pr_err("Task %d: image files.img has an invalid eventfd #%u", pid, d->id);
		return -1;
	}
	return 0;
}

static int efd_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	int flags = EFD_CLOEXEC | (d->flags & O_NONBLOCK ? EFD_NONBLOCK : 0);
	uint64_t count = d->efd->count;
	int fd;

	if (d->efd->semaphore)
		flags |= EFD_SEMAPHORE;
	fd = eventfd(0, flags);
	if (fd < 0) {
		pr_perror("Task %d: can't create an eventfd", pid);
		return -1;
	}
	if (count && write(fd, &count, sizeof(count)) != sizeof(count)) {
		pr_perror("Task %d: can't set an eventfd's counter to %lu", pid, count);
		close(fd);
		return -1;
	}
	return fd;
}

const struct file_kind fk_eventfd = {
	.name = "eventfd",
	.kind = FILE_KIND__FILE_EVENTFD,
	.match = efd_match,
	.dump = efd_dump,
	.free = efd_free,
	.validate = efd_validate,
	.open = efd_open,
};
