// SPDX-License-Identifier: GPL-2.0
/*
 * Regular files, directories and character devices: kinds of open file
 * for the fd table (file.c). They are reopened by path with their
 * status flags; a regular file is seeked to its offset. A file that is
 * no longer the one dumped (another device, a directory now...) is refused.
 * A regular file deleted while open is a ghost (shmem-ghost.c): its
 * contents are a shared memory object of the tree, which the restore
 * made again and every fd on it reopens, with its own flags and offset.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-object.h"
#include "parts/file-kind.h"
#include "task/mounts.h"

/* The flags the kernel keeps of an O_PATH open (fs/open.c) */
#define O_PATH_FLAGS	(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

/* A path that still leads to the file: not " (deleted)" (that is refused). */
static int has_path(const char *link)
{
	size_t len = strlen(link);

	return link[0] == '/' && (len < 10 || strcmp(link + len - 10, " (deleted)"));
}

static int reg_match(const char *link, const struct stat *st)
{
	return (has_path(link) && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))) ||
	       proc_is_ghost(link, st->st_mode, st->st_dev);
}

static int chr_match(const char *link, const struct stat *st)
{
	return has_path(link) && S_ISCHR(st->st_mode);
}

static int reg_check(const struct fd_dump *f)
{
	char what[PATH_MAX + 32];

	/* its contents are saved by the shmem part, whose check says whether they can be */
	if (proc_is_ghost(f->link, f->st->st_mode, f->st->st_dev))
		return 0;
	snprintf(what, sizeof(what), "fd %d (%s)", f->fd, f->link);
	return mnt_dump_reaches(f->pid, f->mnt_id, what) ? 0 : -1;
}

static int reg_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	int hidden;

	/* its contents are an object shmem.c saved, known by the dev/ino it has */
	if (proc_is_ghost(f->link, f->st->st_mode, f->st->st_dev)) {
		d->ghost = file_object_ref(f->st);
		return d->ghost ? 0 : -1;
	}
	hidden = mnt_dump_hidden(f->pid, f->mnt_id, f->link, d->flags);
	if (hidden < 0)
		return -1;
	d->has_hidden = !!hidden;
	d->hidden = hidden;
	if (S_ISCHR(f->st->st_mode)) {
		d->has_rdev = 1;
		d->rdev = f->st->st_rdev;
	} else if (S_ISREG(f->st->st_mode)) {
		d->has_size = 1;
		d->size = f->st->st_size;
	}
	return 0;
}

static void reg_free(FileDesc *d)
{
	free(d->ghost);
	d->ghost = NULL;
}

static int reg_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	unsigned int flags = (d->flags & OPEN_STATUS_MASK) | O_NOCTTY;
	struct stat st;
	int fd;

	/* open() ignores the rest with O_PATH, openat2() (mnt_open()) refuses it */
	if (flags & O_PATH)
		flags &= O_PATH_FLAGS;
	if (d->ghost)
		return file_reopen_object(rc, pid, d->ghost, d);
	fd = d->hidden ? mnt_open_hidden(pid, d->hidden, d->path) :
			 mnt_open(pid, d->mnt_id, d->path, flags);
	if (fd < 0) {
		pr_perror("Task %d: can't reopen %s", pid, d->path);
		return -1;
	}
	if (fstat(fd, &st) || (d->kind == FILE_KIND__FILE_CHR) != !!S_ISCHR(st.st_mode) ||
	    (d->has_rdev && st.st_rdev != d->rdev)) {
		pr_err("Task %d: %s is not the file it was at dump time", pid, d->path);
		goto err;
	}
	/* an O_PATH fd has no offset: lseek() on it is EBADF */
	if (S_ISREG(st.st_mode) && !(d->flags & O_PATH) &&
	    lseek(fd, d->pos, SEEK_SET) != (off_t)d->pos) {
		pr_perror("Task %d: can't seek %s to %lu", pid, d->path, d->pos);
		goto err;
	}
	return fd;
err:
	close(fd);
	return -1;
}

static int reg_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	if (d->path[0] != '/') {
		pr_err("Task %d: image files.img has file #%u with a relative path", pid, d->id);
		return -1;
	}
	if (d->ghost && (d->kind != FILE_KIND__FILE_REG ||
			 !rst_object_known(rc, d->ghost->dev, d->ghost->ino))) {
		pr_err("Task %d: image files.img has deleted file #%u without its object in "
		       "shmem.img", pid, d->id);
		return -1;
	}
	return 0;
}

const struct file_kind fk_reg = {
	.name = "regular file",
	.kind = FILE_KIND__FILE_REG,
	.match = reg_match,
	.check = reg_check,
	.dump = reg_dump,
	.free = reg_free,
	.validate = reg_validate,
	.open = reg_open,
	.on_mount = 1,
};

const struct file_kind fk_chr = {
	.name = "character device",
	.kind = FILE_KIND__FILE_CHR,
	.match = chr_match,
	.check = reg_check,
	.dump = reg_dump,
	.validate = reg_validate,
	.open = reg_open,
	.on_mount = 1,
};
