// SPDX-License-Identifier: GPL-2.0
/*
 * The filesystem context of a task: its root, its working directory and
 * its umask.
 *
 * Both directories are read from /proc/PID/{root,cwd}, which name them as
 * criu sees them, i.e. relative to criu's root, not the task's; or, in a
 * mount namespace of the tree's own that criu's root does not reach, as
 * the namespace sees them. A name is only trusted if it still leads to the
 * directory the task holds, from criu's root or the task's: it may have
 * been deleted. The cwd's mount is kept too: restore changes to it through
 * that mount (task/mounts.h), which another mount may cover. A cwd that
 * was removed (rmdir) is made again in its parent, entered and removed at
 * once: an empty directory, as a deleted one always is, with its mode; each
 * task that had it gets one of its own (no task can tell: nothing can be
 * made in it). In a user namespace of the tree's, a child with the
 * namespace's filesystem ids makes it (idmap_make_fd()): criu's, which
 * the task still has, can't own it.
 *
 * Restore changes directory in the new task itself, with the path as
 * dumped, and chroots later, in the batch: every part's child hook still
 * opens files by criu's paths, which a chroot would break. chroot() leaves
 * the working directory alone, so "chdir(cwd); chroot(root)" gives the
 * task both directories exactly as it had them, even a cwd outside root.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "task/idmap.h"
#include "task/mounts.h"
#include "parts/part.h"
#include "fs.pb-c.h"

/* ---------------------------------------------------------------- dump */

static int same_dir(const char *path, const struct stat *held)
{
	struct stat named;

	return !stat(path, &named) && named.st_dev == held->st_dev &&
	       named.st_ino == held->st_ino;
}

/*
 * Does @path, as a task of the tree sees it, lead to @held? A chrooted
 * task's path is its mount namespace's, which its own root can't resolve
 * (a chroot inside a container): an ancestor's root may, and the inode
 * check keeps a wrong match out.
 */
static int leads_to(const struct dtask *t, const char *path, const struct stat *held)
{
	char inside[PATH_MAX + 64];

	if (same_dir(path, held))
		return 1;
	for (; t; t = t->parent) {
		snprintf(inside, sizeof(inside), "/proc/%d/root%s", t->pid, path);
		if (same_dir(inside, held))
			return 1;
	}
	return 0;
}

/*
 * Reads /proc/PID/@link into @buf and checks that the path leads there;
 * with @deleted, a removed directory is taken: @buf is its path, " (deleted)"
 * cut, and @held says what it was.
 */
static int read_dir_link(const struct dtask *t, const char *link, char *buf, size_t size,
			 uint64_t *mnt, struct stat *held, int *deleted)
{
	pid_t pid = t->pid;
	char path[64];
	struct stat named;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, link);
	n = readlink(path, buf, size - 1);
	if (n < 0 || stat(path, held)) {
		pr_perror("Task %d: can't read its %s", pid, link);
		return -1;
	}
	buf[n] = '\0';
	if (n > 11 && !strcmp(buf + n - 10, " (deleted)") && stat(buf, &named)) {
		if (!deleted || held->st_nlink || buf[0] != '/') {
			pr_err("Task %d: its %s %s is not supported", pid, link, buf);
			return -1;
		}
		buf[n - 10] = '\0';
		*deleted = 1;
		*mnt = mnt_id_of(path);
		return mnt_dump_reaches(pid, *mnt, link) ? 0 : -1;
	}
	if (buf[0] != '/' || !leads_to(t, buf, held)) {
		pr_err("Task %d: its %s %s names another directory for criu and for "
		       "itself; not supported", pid, link, buf);
		return -1;
	}
	*mnt = mnt_id_of(path);
	return mnt_dump_reaches(pid, *mnt, link) ? 0 : -1;
}

/*
 * The directories the check found, kept for the dump: the task is frozen
 * in between and nothing criu runs inside changes them.
 */
struct fs_dirs {
	char cwd[PATH_MAX], root[PATH_MAX];
	uint64_t cwd_mnt, root_mnt;
	struct stat cwd_st, root_st;
	int cwd_deleted;
};

static int fs_check(struct dump_ctx *dc, struct dtask *t)
{
	struct fs_dirs *d;

	if (t->status.umask < 0) {
		pr_err("Task %d: the kernel does not show its umask", t->pid);
		return -1;
	}
	d = xzalloc(sizeof(*d));
	if (!d)
		return -1;
	if (read_dir_link(t, "cwd", d->cwd, sizeof(d->cwd), &d->cwd_mnt, &d->cwd_st,
			  &d->cwd_deleted) ||
	    read_dir_link(t, "root", d->root, sizeof(d->root), &d->root_mnt, &d->root_st,
			  NULL)) {
		free(d);
		return -1;
	}
	t->priv[PART_FS] = d;
	return 0;
}

static int fs_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct fs_dirs *d = t->priv[PART_FS];
	FsEntry fe = FS_ENTRY__INIT;
	int ret;

	fe.cwd = d->cwd;
	fe.root = d->root;
	fe.umask = t->status.umask;
	fe.has_cwd_mnt = !!d->cwd_mnt;
	fe.cwd_mnt = d->cwd_mnt;
	fe.has_cwd_deleted = fe.cwd_deleted = d->cwd_deleted;
	fe.has_cwd_mode = d->cwd_deleted;
	fe.cwd_mode = d->cwd_st.st_mode & 07777;
	ret = img_write(dc->dirfd, IMG_FS, t->ns_pid, &fe.base);
	free(d);
	t->priv[PART_FS] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static int is_root(const FsEntry *fe)
{
	return !strcmp(fe->root, "/");
}

/* The last component of a deleted cwd, which restore makes again in its parent. */
static int deleted_name_ok(const char *cwd)
{
	const char *b = strrchr(cwd, '/') + 1;

	return *b && strcmp(b, ".") && strcmp(b, "..") && strlen(b) <= NAME_MAX &&
	       strlen(cwd) < PATH_MAX;
}

static int fs_load(struct rst_ctx *rc, struct rtask *t)
{
	const char *why = NULL;
	FsEntry *fe;

	if (img_read(rc->dirfd, IMG_FS, t->pid, (void **)&fe, 0) < 0)
		return -1;
	t->img[PART_FS] = fe;
	if (fe->cwd[0] != '/')
		why = "the cwd is not an absolute path";
	else if (fe->root[0] != '/' || strlen(fe->root) >= PATH_MAX)
		why = "the root is not an absolute path";
	else if (fe->umask & ~0777U)
		why = "the umask has bits beyond 0777";
	else if (fe->cwd_deleted && !deleted_name_ok(fe->cwd))
		why = "the deleted cwd has no name to make again";
	if (why) {
		pr_err("Task %d: image fs is invalid: %s", t->pid, why);
		return -1;
	}
	if (!is_root(fe)) {
		t->batch_entries += 1;
		t->batch_data += strlen(fe->root) + 16;
	}
	return 0;
}

/*
 * A removed cwd made again: a directory of criu's in its parent, renamed
 * to the old name while that is free (so /proc shows "PATH (deleted)"),
 * opened and removed; the fd to change to, or -1 (logged).
 */
static int deleted_cwd(struct rtask *t, const FsEntry *fe)
{
	const char *base = strrchr(fe->cwd, '/') + 1, *name;
	char parent[PATH_MAX], tmp[64];
	int pfd, fd = -1;

	snprintf(parent, sizeof(parent), "%.*s", (int)(base - fe->cwd), fe->cwd);
	snprintf(tmp, sizeof(tmp), ".criu-ghost-cwd.%d", getpid());
	pfd = mnt_open(t->pid, fe->cwd_mnt, parent, O_PATH | O_DIRECTORY);
	if (pfd < 0 || mkdirat(pfd, tmp, 0700)) {
		pr_perror("Task %d: can't make its deleted cwd %s again in %s", t->pid, fe->cwd,
			  parent);
		goto out;
	}
	fd = openat(pfd, tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmodat(pfd, tmp, fe->cwd_mode & 07777, 0)) {
		pr_perror("Task %d: can't open its deleted cwd %s", t->pid, fe->cwd);
		goto err;
	}
	name = syscall(SYS_renameat2, pfd, tmp, pfd, base, 1 /* RENAME_NOREPLACE */) ? tmp : base;
	if (!unlinkat(pfd, name, AT_REMOVEDIR))
		goto out;
	pr_perror("Task %d: can't remove its cwd %s again", t->pid, fe->cwd);
	tmp[0] = '\0';
err:
	if (fd >= 0)
		close(fd);
	fd = -1;
	if (tmp[0])
		unlinkat(pfd, tmp, AT_REMOVEDIR);
out:
	if (pfd >= 0)
		close(pfd);
	return fd;
}

struct cwd_arg {
	struct rtask *t;
	const FsEntry *fe;
};

static int deleted_cwd_fn(void *arg)
{
	struct cwd_arg *c = arg;

	return deleted_cwd(c->t, c->fe);
}

static int fs_child(struct rst_ctx *rc, struct rtask *t)
{
	FsEntry *fe = t->img[PART_FS];
	struct cwd_arg arg = { t, fe };
	/* in a user namespace of the tree's: made with its ids, criu's can't own it */
	int fd = fe->cwd_deleted ? idmap_make_fd(rc->idmap, deleted_cwd_fn, &arg, fe->cwd) :
		 mnt_open(t->pid, fe->cwd_mnt, fe->cwd, O_PATH | O_DIRECTORY);

	if (fd < 0 || fchdir(fd)) {
		pr_perror("Task %d: can't change to its working directory %s", t->pid,
			  fe->cwd);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	umask(fe->umask);
	return 0;
}

static int fs_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	FsEntry *fe = t->img[PART_FS];
	uint64_t path;

	if (is_root(fe))
		return 0;
	path = batch_put(b, fe->root, strlen(fe->root) + 1);
	if (!path || BATCH(b, "chroot to the task's root", __NR_chroot, path) < 0)
		return -1;
	return 0;
}

static void fs_release(struct rtask *t)
{
	img_free(IMG_FS, t->img[PART_FS]);
	t->img[PART_FS] = NULL;
}

const struct part part_fs = {
	.name = "fs",
	.id = PART_FS,
	.check = fs_check,
	.dump = fs_dump,
	.load = fs_load,
	.child = fs_child,
	.batch = fs_batch,
	.release = fs_release,
};
