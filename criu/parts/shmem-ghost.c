// SPDX-License-Identifier: GPL-2.0
/*
 * Ghost files: a regular file deleted while a task holds it open or maps
 * it. Only the tree reaches its contents, so the dump saves them, up to
 * --ghost-limit bytes (holes stay holes: shmem.c copies with SEEK_DATA),
 * as a shared memory object of shmem.img: one per inode, however many
 * fds, tasks and areas use it. The restore makes the file again in its
 * directory with no name (O_TMPFILE), fills it, gives it its owner, mode
 * and times, links it as the name it had (so /proc shows the same "PATH
 * (deleted)"; if that name was taken since, as a name of criu's), opens it
 * by that name and unlinks it at once: criu holds the only reference, an
 * fd every task inherits, and fds (file-reg.c) and areas (mm.c) reopen
 * and map it. Nothing is left in the directory, whether the restore goes
 * on, fails, or criu is killed while it fills the file.
 *
 * A deleted file that still has links elsewhere is no ghost: a copy would
 * no longer be the file those links name. With --link-remap the dump
 * links it back in its directory and the restore opens that link (the
 * end of this file); without, it is refused, as CRIU does.
 *
 * In a mount namespace of the tree's own (a container), the path is the
 * one the namespace shows, and the directory is found there: at dump from
 * the tree's root (/proc/PID/root, never leaving it), at restore in the
 * restored mount tree, on the mount the file was on (task/mounts.h), by
 * the task that built the tree, before it forks: every task is born with
 * the fd. The link --link-remap made goes, once the tree runs, through
 * the restored root's /proc/PID/root again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/shmem-ghost.h"
#include "proc/proc.h"
#include "task/idmap.h"
#include "task/mounts.h"

#define DELETED		" (deleted)"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	1	/* Linux 3.15 */
#endif

static uint64_t ghost_limit(const struct opts *opts)
{
	return opts->ghost_limit_set ? opts->ghost_limit : GHOST_LIMIT_DEFAULT;
}

/* Does task @pid see criu's mounts? Then its paths are criu's too. */
static int in_criu_mntns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	return !stat(path, &a) && !stat("/proc/self/ns/mnt", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

int ghost_check(pid_t pid, const char *what, const char *src, const char *link,
		const struct stat *st, const struct opts *opts)
{
	if (!S_ISREG(st->st_mode)) {
		pr_err("Task %d: %s: %s is not a regular file: deleted ones of its kind are "
		       "not supported", pid, what, link);
		return -1;
	}
	if (st->st_nlink && !opts->link_remap) {
		pr_err("Task %d: %s: %s was unlinked but has %lu other link(s): --link-remap "
		       "links it back at dump", pid, what, link, (unsigned long)st->st_nlink);
		return -1;
	}
	if (!st->st_nlink && (uint64_t)st->st_size > ghost_limit(opts)) {
		pr_err("Task %d: %s: deleted file %s is %lld bytes, over --ghost-limit %lu",
		       pid, what, link, (long long)st->st_size, ghost_limit(opts));
		return -1;
	}
	/* on a mount the restore makes again (the container's), or on criu's */
	return mnt_dump_reaches(pid, mnt_id_of(src), what) ? 0 : -1;
}

int ghost_root(pid_t pid)
{
	char path[64];
	int fd;

	if (in_criu_mntns(pid))
		return AT_FDCWD;
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		pr_perror("Task %d: can't open its root, where its deleted files were", pid);
	return fd;
}

int ghost_fill(ShmemObject *o, const char *src, const char *link, const struct stat *st)
{
	size_t len = strlen(link) - strlen(DELETED);

	o->kind = st->st_nlink ? SHMEM_KIND__SHMEM_LINKED : SHMEM_KIND__SHMEM_GHOST;
	o->path = xmalloc(len + 1);
	if (!o->path)
		return -1;
	if (st->st_nlink && asprintf(&o->remap, ".criu-link-remap.%lu",
				     (unsigned long)st->st_ino) < 0) {
		o->remap = NULL;
		return -1;
	}
	memcpy(o->path, link, len);
	o->path[len] = '\0';
	o->mnt_id = mnt_id_of(src);
	o->has_mnt_id = !!o->mnt_id;
	o->has_mode = o->has_uid = o->has_gid = 1;
	o->mode = st->st_mode & 07777;
	o->uid = st->st_uid;
	o->gid = st->st_gid;
	o->has_atime_ns = o->has_mtime_ns = 1;
	o->atime_ns = ts_to_ns(&st->st_atim);
	o->mtime_ns = ts_to_ns(&st->st_mtim);
	return 0;
}

/* The last component of an absolute @path, or NULL if it has none to create. */
static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	if (!b || !b[1] || !strcmp(b + 1, ".") || !strcmp(b + 1, ".."))
		return NULL;
	return b + 1;
}

/* A name criu may make in a directory: one component, not "." or "..". */
static int name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) <= NAME_MAX;
}

int ghost_valid(const ShmemObject *o, size_t i)
{
	int linked = o->kind == SHMEM_KIND__SHMEM_LINKED;

	if (!o->path || o->path[0] != '/' || strlen(o->path) >= PATH_MAX ||
	    !name_ok(base_name(o->path)) || !o->has_mode || !o->has_uid || !o->has_gid ||
	    (linked && (!name_ok(o->remap) || o->n_runs))) {
		pr_err("Image shmem.img has an invalid ghost file #%zu", i);
		return -1;
	}
	return 0;
}

/*
 * The directory the ghost was in, reached without following any symlink:
 * from @root (AT_FDCWD: criu's; a task's root, which the path may not
 * leave), or with GHOST_IN_TREE on its mount of the restored tree.
 */
static int ghost_dir(const ShmemObject *o, int root, pid_t pid)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char dir[PATH_MAX];
	size_t len = base_name(o->path) - o->path;
	int fd;

	memcpy(dir, o->path, len);
	dir[len] = '\0';
	if (root == GHOST_IN_TREE) {
		fd = mnt_open(pid, o->has_mnt_id ? o->mnt_id : 0, dir, O_PATH | O_DIRECTORY);
	} else {
		if (root != AT_FDCWD)
			how.resolve |= RESOLVE_IN_ROOT;
		fd = syscall(SYS_openat2, root, dir, &how, sizeof(how));
	}
	if (fd < 0 && errno == ENOENT)
		pr_err("Ghost file %s: its directory %s is gone; criu does not make it again",
		       o->path, dir);
	else if (fd < 0)
		pr_perror("Ghost file %s: can't open its directory %s (a symlink on the way "
			  "is refused)", o->path, dir);
	return fd;
}

/* @fd's name in /proc, with @proc a /proc directory (-1: "/proc"). */
static int proc_fd_path(char *buf, size_t size, int proc, int fd)
{
	snprintf(buf, size, "%sself/fd/%d", proc >= 0 ? "" : "/proc/", fd);
	return proc >= 0 ? proc : AT_FDCWD;
}

static int set_attrs(const ShmemObject *o, const struct ghost_at *at, int fd)
{
	struct timespec ts[2] = {
		{ o->atime_ns / 1000000000, o->atime_ns % 1000000000 },
		{ o->mtime_ns / 1000000000, o->mtime_ns % 1000000000 },
	};
	uint32_t uid = o->uid, gid = o->gid;

	/* the image holds criu's ids; a user namespace of the tree's names them */
	if (at->ids && (idmap_inside(at->ids, 0, o->uid, &uid) ||
			idmap_inside(at->ids, 1, o->gid, &gid))) {
		pr_err("Ghost file %s: its owner %u:%u is not mapped in the tree's user "
		       "namespace", o->path, o->uid, o->gid);
		return -1;
	}
	/* chown clears set-id bits: the mode after it, the times after every write */
	if (fchown(fd, uid, gid) || fchmod(fd, o->mode) ||
	    (o->has_atime_ns && o->has_mtime_ns && futimens(fd, ts))) {
		pr_perror("Ghost file %s: can't give it its owner, mode and times", o->path);
		return -1;
	}
	return 0;
}

/* Unlink @name in @dir if it still is the file @a: someone may have replaced it. */
static int unlink_is(int dir, const char *name, const struct stat *a, const char *path)
{
	struct stat b;

	if (fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) || a->st_dev != b.st_dev ||
	    a->st_ino != b.st_ino) {
		pr_err("Ghost file %s: %s is no longer the file criu made", path, name);
		return -1;
	}
	if (unlinkat(dir, name, 0)) {
		pr_perror("Ghost file %s: can't unlink %s", path, name);
		return -1;
	}
	return 0;
}

/* Unlink @name in @dir if it still is the file @fd. */
static int unlink_own(int dir, const char *name, int fd, const char *path)
{
	struct stat a;

	if (fstat(fd, &a)) {
		pr_perror("Ghost file %s: can't stat it", path);
		return -1;
	}
	return unlink_is(dir, name, &a, path);
}

/*
 * Linked as @name, or as @tmp where @name was taken again since the dump:
 * the name the file now has, or NULL (logged). @named: it is under @tmp
 * already; else it has no name yet (O_TMPFILE).
 */
static const char *give_name(int dir, int fd, int named, const char *tmp, const ShmemObject *o,
			     const struct ghost_at *at)
{
	const char *base = base_name(o->path);
	char proc[64];
	int i, ret, pdir = proc_fd_path(proc, sizeof(proc), at->proc, fd);

	for (i = 0; i < 2; i++) {
		if (named)
			ret = i ? 0 : syscall(SYS_renameat2, dir, tmp, dir, base, RENAME_NOREPLACE);
		else
			ret = linkat(pdir, proc, dir, i ? tmp : base, AT_SYMLINK_FOLLOW);
		if (!ret)
			break;
		if (errno != EEXIST || i) {
			pr_perror("Ghost file %s: can't link it in its directory", o->path);
			return NULL;
		}
	}
	if (i)
		pr_warn("Ghost file %s: the name is taken again, the restored file is %s "
			"(deleted) in the same directory", o->path, tmp);
	return i ? tmp : base;
}

/* Opened by @name, the name it was linked as: what /proc shows is that name. */
static int open_named(int dir, int fd, const char *name, const char *path)
{
	struct stat a, b;
	int nfd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (nfd < 0 || fstat(fd, &a) || fstat(nfd, &b) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		pr_perror("Ghost file %s: can't open %s, the file criu linked", path, name);
		if (nfd >= 0)
			close(nfd);
		return -1;
	}
	return nfd;
}

/*
 * A new file in @dir: with no name (O_TMPFILE), so that nothing is left if
 * criu dies while it fills it; under @tmp where the filesystem can't.
 */
static int new_file(int dir, const char *tmp, const char *path, int *named)
{
	int fd = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	*named = fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL);
	if (*named)
		fd = openat(dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		pr_perror("Ghost file %s: can't create it in its directory", path);
	return fd;
}

int ghost_create(const ShmemObject *o, const struct ghost_at *at,
		 int (*fill)(void *arg, int fd), void *arg)
{
	const char *name = NULL;
	int dir, fd, nfd, named;
	char tmp[64];

	dir = ghost_dir(o, at->root, at->pid);
	if (dir < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), ".criu-ghost.%d.%lu", getpid(), (unsigned long)o->ino);
	fd = new_file(dir, tmp, o->path, &named);
	if (fd < 0)
		goto out;
	if (named)
		name = tmp;
	if (ftruncate(fd, o->size)) {
		pr_perror("Ghost file %s: can't size it to %lu", o->path, o->size);
		goto err;
	}
	if (fill(arg, fd) || set_attrs(o, at, fd))
		goto err;
	fault_point("ghost-filled");
	name = give_name(dir, fd, named, tmp, o, at);
	if (!name) {
		name = named ? tmp : NULL;
		goto err;
	}
	nfd = named ? fd : open_named(dir, fd, name, o->path);
	if (nfd < 0)
		goto err;
	if (nfd != fd)
		close(fd);
	fd = nfd;
	if (unlink_own(dir, name, fd, o->path))
		goto err_close;
	close(dir);
	return fd;
err:
	if (name)
		unlink_own(dir, name, fd, o->path);
err_close:
	close(fd);
out:
	close(dir);
	return -1;
}

/* ------------------------------------------------------- --link-remap */

int ghost_link_back(const ShmemObject *o, const char *src, int root)
{
	struct stat a, b;
	int dir, ret;

	dir = ghost_dir(o, root, 0);
	if (dir < 0)
		return -1;
	ret = linkat(AT_FDCWD, src, dir, o->remap, AT_SYMLINK_FOLLOW);
	/* a dump before this one (--leave-running) made it: the same file, kept */
	if (ret && errno == EEXIST && !stat(src, &a) &&
	    !fstatat(dir, o->remap, &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		ret = 0;
	if (ret)
		pr_perror("Deleted file %s: can't link it back as %s in its directory",
			  o->path, o->remap);
	close(dir);
	return ret;
}

void ghost_unlink_back(const ShmemObject *o, const struct stat *st, int root)
{
	int dir = ghost_dir(o, root, 0);

	if (dir < 0)
		return;
	unlink_is(dir, o->remap, st, o->path);
	close(dir);
}

/* Opened by @name in @dir: read-write if it can be (shared writable areas), else read-only. */
static int open_linked(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && (errno == ETXTBSY || errno == EROFS || errno == EACCES))
		fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/*
 * The file the dump linked back as o->remap, opened by its old name while
 * it is free (linked, opened, unlinked: /proc shows "PATH (deleted)" as
 * before). The remap link stays until the tree runs (ghost_unlink_back).
 */
int ghost_open_linked(const ShmemObject *o, const struct ghost_at *at, struct stat *st)
{
	const char *base = base_name(o->path);
	int dir, fd, nfd, bad;
	struct stat nst;

	dir = ghost_dir(o, at->root, at->pid);
	if (dir < 0)
		return -1;
	fd = open_linked(dir, o->remap);
	if (fd < 0 || fstat(fd, st) || !S_ISREG(st->st_mode)) {
		pr_perror("Deleted file %s: can't open %s, the link the dump made", o->path,
			  o->remap);
		goto err;
	}
	if (linkat(dir, o->remap, dir, base, 0)) {
		pr_warn("Deleted file %s: its name is taken again, the restored file is %s",
			o->path, o->remap);
		close(dir);
		return fd;
	}
	nfd = open_linked(dir, base);
	bad = nfd < 0 || fstat(nfd, &nst) || nst.st_ino != st->st_ino || nst.st_dev != st->st_dev;
	if (unlink_is(dir, base, st, o->path) || bad) {
		pr_err("Deleted file %s: can't reopen it by its name", o->path);
		if (nfd >= 0)
			close(nfd);
		goto err;
	}
	close(fd);
	close(dir);
	return nfd;
err:
	if (fd >= 0)
		close(fd);
	close(dir);
	return -1;
}
