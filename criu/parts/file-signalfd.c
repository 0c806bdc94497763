// SPDX-License-Identifier: GPL-2.0
/*
 * signalfd: a kind of open file for the fd table (file.c).
 *
 * A signalfd holds only the set of signals it reads (fdinfo "sigmask:");
 * the signals themselves wait in the pending queues of whoever reads it,
 * which the signal part restores. So a pending signal is read through the
 * restored signalfd as it would have been through the old one.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"

static int sfd_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[signalfd]");
}

static int sfd_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	const char *mask = proc_fdinfo_field(f->fdinfo, "sigmask:");
	SignalfdEntry *e;
	unsigned long long m;

	if (!mask || sscanf(mask, "%llx", &m) != 1) {
		pr_err("Task %d: fdinfo of signalfd %d does not show its mask", f->pid, f->fd);
		return -1;
	}
	e = xmalloc(sizeof(*e));
	if (!e)
		return -1;
	signalfd_entry__init(e);
	e->sigmask = m;
	d->sfd = e;
	pr_debug("Task %d: signalfd %d: mask %#llx", f->pid, f->fd, m);
	return 0;
}

static void sfd_free(FileDesc *d)
{
	free(d->sfd);
	d->sfd = NULL;
}

static int sfd_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	if (!d->sfd) {
		pr_err("Task %d: image files.img has a signalfd #%u without its mask", pid, d->id);
		return -1;
	}
	return 0;
}

static int sfd_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	int flags = SFD_CLOEXEC | (d->flags & O_NONBLOCK ? SFD_NONBLOCK : 0);
	uint64_t mask = d->sfd->sigmask;	/* the kernel's sigset_t */
	int fd;

	/* the raw call: glibc's sigset_t is 128 bytes, the kernel's 8 */
	fd = syscall(SYS_signalfd4, -1, &mask, sizeof(mask), flags);
	if (fd < 0) {
		pr_perror("Task %d: can't create a signalfd for mask %#lx", pid, mask);
		return -1;
	}
	return fd;
}

const struct file_kind fk_signalfd = {
	.name = "signalfd",
	.kind = FILE_KIND__FILE_SIGNALFD,
	.match = sfd_match,
	.dump = sfd_dump,
	.free = sfd_free,
	.validate = sfd_validate,
	.open = sfd_open,
};
