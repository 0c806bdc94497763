// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes and FIFOs: a kind of open file for the fd table (file.c).
 *
 * Every end (and every further open, of a FIFO or through /proc/PID/fd)
 * is an open file description of its own; they share one pipe, which
 * holds the data and the size. The dump saves each description with the
 * pipe's inode as its pipe_id, and the pipe's data once, with the first.
 *
 * The data is copied without being consumed: criu opens the pipe itself
 * (/proc/PID/fd/N opens the very pipe behind a task's end, as a FIFO is
 * opened) and tee()s it into a pipe of its own, which duplicates the
 * buffers instead of reading them. So a dump that leaves the tree running
 * changes nothing.
 *
 * Restore: criu creates the pipe (or opens the FIFO by its path, read and
 * write, which never blocks), sets its size, writes the data back, gives
 * each description its own end (pipe() makes two; more are opened through
 * /proc/self/fd), and every task inherits them. A pipe end held only by
 * processes outside the tree is not recreated: the other side sees EOF
 * or EPIPE as if they had closed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "task/mounts.h"

#define PIPE_MAX_SIZE	(1U << 31)

static int pipe_match(const char *link, const struct stat *st)
{
	return S_ISFIFO(st->st_mode) && (!strncmp(link, "pipe:", 5) || link[0] == '/');
}

static int pipe_check(const struct fd_dump *f)
{
	const char *v = proc_fdinfo_field(f->fdinfo, "flags:");
	size_t len = strlen(f->link);
	unsigned int flags = 0;

	if (f->link[0] == '/' && len > 10 && !strcmp(f->link + len - 10, " (deleted)")) {
		pr_err("Task %d: fd %d is a FIFO that was unlinked (%s), which is not supported",
		       f->pid, f->fd, f->link);
		return -1;
	}
	if (v && sscanf(v, "%o", &flags) == 1 && (flags & O_DIRECT)) {
		pr_err("Task %d: fd %d is a packet-mode pipe (O_DIRECT, %s), "
		       "which is not supported", f->pid, f->fd, f->link);
		return -1;
	}
	return 0;
}

/* Our own reader on the pipe behind fd @fd of @pid: never blocks, takes nothing. */
static int open_pipe(pid_t pid, int fd)
{
	char path[64];
	int ours;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	ours = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ours < 0)
		pr_perror("Task %d: can't open the pipe of fd %d", pid, fd);
	return ours;
}

/* Copies what is queued in the pipe of @ours, leaving it there. */
static int peek_pipe(pid_t pid, int fd, int ours, int size, PipeEntry *e)
{
	int tmp[2], queued = 0;
	ssize_t n;

	if (ioctl(ours, FIONREAD, &queued)) {
		pr_perror("Task %d: can't learn how much the pipe of fd %d holds", pid, fd);
		return -1;
	}
	if (!queued)
		return 0;
	if (pipe2(tmp, O_NONBLOCK | O_CLOEXEC)) {
		pr_perror("Can't create a pipe");
		return -1;
	}
	/* as big as the task's: the buffers, however full, fit */
	if (fcntl(tmp[1], F_SETPIPE_SZ, size) < size) {
		pr_perror("Can't make a pipe of %d bytes to copy fd %d of task %d", size, fd, pid);
		goto err;
	}
	n = tee(ours, tmp[1], queued, SPLICE_F_NONBLOCK);
	if (n != queued) {
		pr_perror("Task %d: can't copy the %d bytes in the pipe of fd %d (got %zd)",
			  pid, queued, fd, n);
		goto err;
	}
	e->data.data = xmalloc(queued);
	if (!e->data.data)
		goto err;
	if (read(tmp[0], e->data.data, queued) != queued) {
		pr_perror("Task %d: can't read back the data of the pipe of fd %d", pid, fd);
		goto err;
	}
	e->data.len = queued;
	e->has_data = 1;
	close(tmp[0]);
	close(tmp[1]);
	return 0;
err:
	close(tmp[0]);
	close(tmp[1]);
	return -1;
}

static int pipe_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	PipeEntry *e;
	int ours, size, ret = -1;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	pipe_entry__init(e);
	d->pipe = e;
	e->pipe_id = f->st->st_ino;
	e->fifo = f->link[0] == '/';
	if (e->fifo) {
		d->has_mnt_id = 1;
		d->mnt_id = f->mnt_id;
		if (!mnt_dump_reaches(f->pid, f->mnt_id, f->link))
			return -1;
	}
	ours = open_pipe(f->pid, f->fd);
	if (ours < 0)
		return -1;
	size = fcntl(ours, F_GETPIPE_SZ);
	if (size <= 0) {
		pr_perror("Task %d: can't learn the size of the pipe of fd %d", f->pid, f->fd);
		goto out;
	}
	e->size = size;
	/* the data belongs to the pipe: saved with its first description only */
	ret = same_inode ? 0 : peek_pipe(f->pid, f->fd, ours, size, e);
	pr_debug("Task %d: fd %d: %s %lu, %d bytes, %zu queued", f->pid, f->fd,
		 e->fifo ? "FIFO" : "pipe", e->pipe_id, size, e->data.len);
out:
	close(ours);
	return ret;
}

static void pipe_free(FileDesc *d)
{
	if (!d->pipe)
		return;
	free(d->pipe->data.data);
	free(d->pipe);
	d->pipe = NULL;
}

static int pipe_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const PipeEntry *e = d->pipe;
	unsigned int acc = d->flags & O_ACCMODE;

	if (!e || e->size < PAGE_SIZE || e->size > PIPE_MAX_SIZE ||
	    (e->has_data && e->data.len > e->size) || acc == 3 ||
	    (e->fifo ? d->path[0] != '/' : strncmp(d->path, "pipe:", 5))) {
		pr_err("Task %d: image files.img has an invalid pipe #%u", pid, d->id);
		return -1;
	}
	return 0;
}

static uint64_t pipe_object(const FileDesc *d)
{
	return d->pipe->pipe_id;
}

/* The descriptions of one pipe agree on what belongs to the pipe. */
static int check_group(FileDesc **d, int n, const PipeEntry **data)
{
	int i;

	*data = NULL;
	for (i = 0; i < n; i++) {
		if (d[i]->pipe->size != d[0]->pipe->size || d[i]->pipe->fifo != d[0]->pipe->fifo ||
		    strcmp(d[i]->path, d[0]->path) || (d[i]->pipe->has_data && *data)) {
			pr_err("Image files.img: the ends of %s disagree", d[0]->path);
			return -1;
		}
		if (d[i]->pipe->has_data)
			*data = d[i]->pipe;
	}
	return 0;
}

/* A fresh description of the same pipe as @fd, with access mode @acc. */
static int reopen(const char *what, int fd, unsigned int acc)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = open(path, acc | O_NONBLOCK | O_CLOEXEC);
	if (n < 0)
		pr_perror("Can't open %s again", what);
	return n;
}

static int fill(int rd, int wr, const FileDesc *first, const PipeEntry *e, const PipeEntry *data)
{
	if (fcntl(rd, F_GETPIPE_SZ) != (int)e->size &&
	    fcntl(rd, F_SETPIPE_SZ, e->size) < (int)e->size) {
		pr_perror("Can't give %s its size of %u bytes", first->path, e->size);
		return -1;
	}
	if (!data || !data->data.len)
		return 0;
	if (fcntl(wr, F_SETFL, O_NONBLOCK) ||
	    write(wr, data->data.data, data->data.len) != (ssize_t)data->data.len) {
		pr_perror("Can't put the %zu bytes of %s back", data->data.len, first->path);
		return -1;
	}
	return 0;
}

static int pipe_open_object(struct rst_ctx *rc, int in_tree, void **own, FileDesc **d, int n,
			    int *fds)
{
	int p[2] = { -1, -1 }, base = -1, i, ret = -1;
	const PipeEntry *data;
	unsigned int acc;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	if (check_group(d, n, &data))
		return -1;
	if (d[0]->pipe->fifo) {
		/* read and write: never blocks */
		p[0] = mnt_open(0, d[0]->mnt_id, d[0]->path, O_RDWR | O_NONBLOCK);
		if (p[0] < 0) {
			pr_perror("Can't open the FIFO %s", d[0]->path);
			return -1;
		}
		p[1] = fcntl(p[0], F_DUPFD_CLOEXEC, 0);
	} else if (pipe2(p, O_CLOEXEC)) {
		pr_perror("Can't create a pipe for %s", d[0]->path);
		return -1;
	}
	/* a reader of our own: further opens never wait for one, nor fail without */
	base = fcntl(p[0], F_DUPFD_CLOEXEC, 0);
	if (p[1] < 0 || base < 0 || fill(base, p[1], d[0], d[0]->pipe, data))
		goto out;
	for (i = 0; i < n; i++) {
		acc = d[i]->flags & O_ACCMODE;
		/* pipe() made one reader and one writer: the first of each take them */
		if (!d[0]->pipe->fifo && acc != O_RDWR && p[acc == O_WRONLY] >= 0) {
			fds[i] = p[acc == O_WRONLY];
			p[acc == O_WRONLY] = -1;
		} else {
			fds[i] = d[0]->pipe->fifo ?
				 mnt_open(0, d[i]->mnt_id, d[i]->path, acc | O_NONBLOCK) :
				 reopen(d[i]->path, base, acc);
		}
		if (fds[i] < 0) {
			pr_perror("Can't open %s for description #%u", d[i]->path, d[i]->id);
			goto out;
		}
		if (fcntl(fds[i], F_SETFL, d[i]->flags & (O_NONBLOCK | O_APPEND))) {
			pr_perror("Can't set the flags of %s", d[i]->path);
			goto out;
		}
	}
	ret = 0;
out:
	if (base >= 0)
		close(base);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	for (i = 0; ret && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

const struct file_kind fk_pipe = {
	.name = "pipe",
	.kind = FILE_KIND__FILE_PIPE,
	.match = pipe_match,
	.check = pipe_check,
	.dump = pipe_dump,
	.free = pipe_free,
	.validate = pipe_validate,
	.object = pipe_object,
	.open_object = pipe_open_object,
};
