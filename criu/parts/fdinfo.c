// SPDX-License-Identifier: GPL-2.0
/*
 * The fd table: which fds are open, on which open file descriptions
 * (several fds, dup()ed, may share one, and with it the offset), and what
 * each description is: for now regular files, directories and character
 * devices. Restore reopens each description once, seeks it, and dup()s it
 * onto every fd that used it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/files.h"

/* Flags that describe how a file was opened, not what open() should do now. */
#define OPEN_STATUS_MASK	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
				 O_DIRECT | O_NOATIME | O_LARGEFILE | O_PATH | O_DIRECTORY)

struct fd_scan {
	int fd;
	struct stat st;
	struct proc_fdinfo fi;
	char *fdinfo;		/* the text, for kinds that parse more of it */
	char path[PATH_MAX];
	int file;		/* index into the descriptions */
};

/* ------------------------------------------------ regular files, devices */

static int reg_match(const char *link, const struct stat *st)
{
	return link[0] == '/' && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode));
}

static int chr_match(const char *link, const struct stat *st)
{
	return link[0] == '/' && S_ISCHR(st->st_mode);
}

static int reg_dump(pid_t pid, int fd, const char *fdinfo, FileDesc *d)
{
	struct stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st)) {
		pr_perror("Task %d: can't stat fd %d", pid, fd);
		return -1;
	}
	if (S_ISCHR(st.st_mode)) {
		d->has_rdev = 1;
		d->rdev = st.st_rdev;
	} else if (S_ISREG(st.st_mode)) {
		d->has_size = 1;
		d->size = st.st_size;
	}
	return 0;
}

static int reg_open(struct rtask *t, const FileDesc *d)
{
	unsigned int flags = (d->flags & OPEN_STATUS_MASK) | O_NOCTTY;
	struct stat st;
	int fd;

	fd = open(d->path, flags);
	if (fd < 0) {
		pr_perror("Task %d: can't reopen %s", t->pid, d->path);
		return -1;
	}
	if (fstat(fd, &st) || (d->kind == FILE_KIND__FILE_CHR) != !!S_ISCHR(st.st_mode) ||
	    (d->has_rdev && st.st_rdev != d->rdev)) {
		pr_err("Task %d: %s is not the file it was at dump time", t->pid, d->path);
		goto err;
	}
	if (S_ISREG(st.st_mode) && lseek(fd, d->pos, SEEK_SET) != (off_t)d->pos) {
		pr_perror("Task %d: can't seek %s to %lu", t->pid, d->path, d->pos);
		goto err;
	}
	return fd;
err:
	close(fd);
	return -1;
}

static const struct file_kind fk_reg = {
	.name = "regular file",
	.kind = FILE_KIND__FILE_REG,
	.match = reg_match,
	.dump = reg_dump,
	.open = reg_open,
};

static const struct file_kind fk_chr = {
	.name = "character device",
	.kind = FILE_KIND__FILE_CHR,
	.match = chr_match,
	.dump = reg_dump,
	.open = reg_open,
};

/* ------------------------------------------------------------ the table */

static const struct file_kind *const kinds[] = {
	&fk_reg,
	&fk_chr,
	&fk_timerfd,
};

static const struct file_kind *kind_of_link(const char *link, const struct stat *st)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->match(link, st))
			return kinds[i];
	return NULL;
}

static const struct file_kind *kind_of_desc(const FileDesc *d)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i]->kind == d->kind)
			return kinds[i];
	return NULL;
}

/* Names what an fd no kind takes is, for the error message. */
static const char *fd_unsupported(const char *path, const struct stat *st)
{
	size_t len = strlen(path);

	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		return "an open deleted file";
	if (kind_of_link(path, st))
		return NULL;
	if (!strncmp(path, "socket:", 7))
		return "a socket";
	if (!strncmp(path, "pipe:", 5) || S_ISFIFO(st->st_mode))
		return "a pipe or FIFO";
	if (!strncmp(path, "anon_inode:", 11))
		return path + 11;	/* [timerfd], [eventfd], [eventpoll]... */
	if (path[0] != '/')
		return "a non-file object";
	return "a special file";
}

static void free_scan(struct fd_scan *fds, int nr)
{
	while (nr > 0)
		free(fds[--nr].fdinfo);
	free(fds);
}

static int scan_fds(pid_t pid, struct fd_scan **out)
{
	char dir[64], link[80];
	struct fd_scan *fds = NULL, *n, *f;
	struct dirent *de;
	int nr = 0;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d) {
		pr_perror("Task %d: can't list its fds", pid);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n = xrealloc(fds, (nr + 1) * sizeof(*fds));
		if (!n)
			goto err;
		fds = n;
		f = &fds[nr++];
		f->fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "%s/%d", dir, f->fd);
		len = readlink(link, f->path, sizeof(f->path) - 1);
		if (len < 0 || stat(link, &f->st)) {
			/* anon inodes and sockets can't be stat()ed by path: lstat the link */
			if (len < 0) {
				pr_perror("Task %d: can't read fd %d", pid, f->fd);
				goto err;
			}
			memset(&f->st, 0, sizeof(f->st));
		}
		f->path[len] = '\0';
		snprintf(link, sizeof(link), "/proc/%d/fdinfo/%d", pid, f->fd);
		f->fdinfo = read_file(-1, link, NULL);
		if (!f->fdinfo || proc_parse_fdinfo(f->fdinfo, &f->fi)) {
			pr_perror("Task %d: can't read fdinfo of fd %d", pid, f->fd);
			free(f->fdinfo);
			nr--;
			goto err;
		}
	}
	closedir(d);
	*out = fds;
	return nr;
err:
	closedir(d);
	free_scan(fds, nr);
	return -1;
}

static int fdinfo_check(struct dump_ctx *dc, struct dtask *t)
{
	struct fd_scan *fds;
	const char *why;
	int i, nr, ret = 0;

	nr = scan_fds(t->pid, &fds);
	if (nr < 0)
		return -1;
	for (i = 0; i < nr; i++) {
		why = fd_unsupported(fds[i].path, &fds[i].st);
		if (why) {
			pr_err("Task %d: fd %d is %s (%s), which is not supported yet",
			       t->pid, fds[i].fd, why, fds[i].path);
			ret = -1;
			break;
		}
	}
	free_scan(fds, nr);
	return ret;
}

static int same_description(pid_t pid, int a, int b)
{
	return syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b) == 0;
}

static int fdinfo_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	FdinfoEntry e = FDINFO_ENTRY__INIT;
	struct fd_scan *fds;
	FileDesc *files = NULL, **pf = NULL;
	FdEntry *ents = NULL, **pe = NULL;
	int i, j, nr, nfiles = 0, ret = -1;

	nr = scan_fds(t->pid, &fds);
	if (nr < 0)
		return -1;
	files = xzalloc(nr * sizeof(*files));
	pf = xzalloc(nr * sizeof(*pf));
	ents = xzalloc(nr * sizeof(*ents));
	pe = xzalloc(nr * sizeof(*pe));
	if (!files || !pf || !ents || !pe)
		goto out;
	for (i = 0; i < nr; i++) {
		struct fd_scan *f = &fds[i];
		const struct file_kind *kind = kind_of_link(f->path, &f->st);

		if (!kind || fd_unsupported(f->path, &f->st)) {
			pr_err("Task %d: fd %d (%s) appeared during the dump", t->pid,
			       f->fd, f->path);
			goto out;
		}
		/* cheap test first: kcmp only fds on the same inode */
		f->file = -1;
		for (j = 0; j < i && f->file < 0; j++)
			if (fds[j].st.st_ino == f->st.st_ino && fds[j].st.st_dev == f->st.st_dev &&
			    same_description(t->pid, fds[j].fd, f->fd))
				f->file = fds[j].file;
		if (f->file < 0) {
			FileDesc *d = &files[nfiles];

			file_desc__init(d);
			d->id = nfiles;
			d->kind = kind->kind;
			d->path = f->path;
			d->flags = f->fi.flags & OPEN_STATUS_MASK;
			d->pos = f->fi.pos;
			pf[nfiles] = d;
			f->file = nfiles++;
			if (kind->dump && kind->dump(t->pid, f->fd, f->fdinfo, d))
				goto out;
		}
		fd_entry__init(&ents[i]);
		ents[i].fd = f->fd;
		ents[i].file_id = f->file;
		ents[i].cloexec = !!(f->fi.flags & O_CLOEXEC);
		pe[i] = &ents[i];
	}
	e.files = pf;
	e.n_files = nfiles;
	e.fds = pe;
	e.n_fds = nr;
	ret = img_write(dc->dirfd, IMG_FDINFO, t->pid, &e.base);
out:
	for (i = 0; i < nfiles; i++) {
		const struct file_kind *k = kind_of_desc(&files[i]);

		if (k && k->free)
			k->free(&files[i]);
	}
	free(files);
	free(pf);
	free(ents);
	free(pe);
	free_scan(fds, nr);
	return ret;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int fdinfo_load(struct rst_ctx *rc, struct rtask *t)
{
	FdinfoEntry *e;
	size_t i, j;

	if (img_read(rc->dirfd, IMG_FDINFO, t->pid, (void **)&t->img[PART_FDINFO], 0) < 0)
		return -1;
	e = t->img[PART_FDINFO];
	for (i = 0; i < e->n_files; i++) {
		const struct file_kind *k = kind_of_desc(e->files[i]);

		if (e->files[i]->id != i || !e->files[i]->path[0] || !k) {
			pr_err("Task %d: image fdinfo has an invalid file #%zu", t->pid, i);
			return -1;
		}
		if (k->validate && k->validate(t->pid, e->files[i]))
			return -1;
	}
	for (i = 0; i < e->n_fds; i++) {
		if (e->fds[i]->fd >= (1U << 20) || e->fds[i]->file_id >= e->n_files) {
			pr_err("Task %d: image fdinfo has an invalid fd entry #%zu (fd %u)",
			       t->pid, i, e->fds[i]->fd);
			return -1;
		}
		for (j = 0; j < i; j++)
			if (e->fds[j]->fd == e->fds[i]->fd) {
				pr_err("Task %d: image fdinfo lists fd %u twice", t->pid,
				       e->fds[i]->fd);
				return -1;
			}
	}
	t->task_fds = xmalloc(e->n_fds * sizeof(int));
	if (!t->task_fds)
		return -1;
	for (i = 0; i < e->n_fds; i++)
		t->task_fds[i] = e->fds[i]->fd;
	t->nr_task_fds = e->n_fds;
	qsort(t->task_fds, e->n_fds, sizeof(int), cmp_int);
	return 0;
}

static int open_desc(struct rtask *t, const FileDesc *d)
{
	/* parked out of the task's way until it is dup()ed into place */
	return rst_park_fd(t, kind_of_desc(d)->open(t, d));
}

static int fdinfo_child(struct rst_ctx *rc, struct rtask *t)
{
	FdinfoEntry *e = t->img[PART_FDINFO];
	int *open_fds, ret = -1;
	size_t i;

	open_fds = xmalloc(e->n_files * sizeof(int));
	if (!open_fds)
		return -1;
	for (i = 0; i < e->n_files; i++)
		open_fds[i] = -1;
	for (i = 0; i < e->n_files; i++) {
		open_fds[i] = open_desc(t, e->files[i]);
		if (open_fds[i] < 0)
			goto out;
	}
	for (i = 0; i < e->n_fds; i++) {
		FdEntry *f = e->fds[i];

		if (dup3(open_fds[f->file_id], f->fd, f->cloexec ? O_CLOEXEC : 0) < 0) {
			pr_perror("Task %d: can't install fd %u", t->pid, f->fd);
			goto out;
		}
	}
	ret = 0;
out:
	for (i = 0; i < e->n_files; i++)
		if (open_fds[i] >= 0)
			close(open_fds[i]);
	free(open_fds);
	return ret;
}

static void fdinfo_release(struct rtask *t)
{
	img_free(IMG_FDINFO, t->img[PART_FDINFO]);
	t->img[PART_FDINFO] = NULL;
}

const struct part part_fdinfo = {
	.name = "fdinfo",
	.id = PART_FDINFO,
	.check = fdinfo_check,
	.dump = fdinfo_dump,
	.load = fdinfo_load,
	.child = fdinfo_child,
	.release = fdinfo_release,
};
