// SPDX-License-Identifier: GPL-2.0
/*
 * The files of a tmpfs (or ramfs) of the tree's mount namespace: they live
 * nowhere else, so the dump saves them and the restore writes them into
 * the new, empty filesystem before it is mounted.
 *
 * Format (images.md): tmpfs-N.img lists every node, parents first: its
 * path below the filesystem's root, type and permissions, owner, access
 * and modification times, the device number, the symlink's target, the
 * node it is a hard link of, the xattrs, and for a regular file its size
 * and where its data lies (holes stay holes) in tmpfs-data.img, one raw
 * store for all of them, checksummed like the page stores. Sockets are
 * not kept: a socket file without its socket is of no use (and would be
 * in the way of a bind()). The change time can't be set, and is not.
 *
 * The dump reads them from a helper that joined the tree's mount
 * namespace: only there can it clone the mount (open_tree()) to see its
 * files without the mounts on top of its directories, and with no atime
 * updates (the clone is noatime). A tmpfs another mount hides, or an
 * unbindable one, is read in a private copy of the namespace (where what
 * hides it is unmounted, and nothing is unbindable): the tree's own
 * namespace is not touched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/sums.h"
#include "parts/ns-mnt-tmpfs.h"
#include "task/mounts.h"
#include "task/idmap.h"
#include "tmpfs.pb-c.h"

/* The *xattrat() calls (Linux 6.13): xattrs of any node, without /proc. */
#ifndef __NR_setxattrat
#define __NR_setxattrat		463
#define __NR_getxattrat		464
#define __NR_listxattrat	465
#endif

struct xattr_args {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

#define XATTR_LIST_MAX	65536
#define XATTR_SIZE_MAX	65536

/* ---------------------------------------------------------------- dump */

struct walk {
	TmpfsNode **n;
	size_t nr;
	int store;
	uint64_t at;			/* bytes in the store so far */
	struct {
		dev_t dev;
		ino_t ino;
		uint32_t node;		/* 1-based */
	} *links;
	size_t nr_links;
	const char *mountpoint;		/* for messages */
};

static TmpfsNode *add_node(struct walk *w, const char *path, const struct stat *st)
{
	TmpfsNode *n = xzalloc(sizeof(*n));

	if (!n || xgrow(w->n, w->nr)) {
		free(n);
		return NULL;
	}
	tmpfs_node__init(n);
	n->path = xstrdup(path);
	if (!n->path) {
		free(n);
		return NULL;
	}
	n->mode = st->st_mode;
	n->uid = st->st_uid;
	n->gid = st->st_gid;
	n->atime_ns = ts_to_ns(&st->st_atim);
	n->mtime_ns = ts_to_ns(&st->st_mtim);
	w->n[w->nr++] = n;
	return n;
}

/* An earlier name of the same inode: the node is a hard link to it. */
static int hard_link(struct walk *w, TmpfsNode *n, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->nr_links; i++)
		if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino) {
			n->has_link_to = 1;
			n->link_to = w->links[i].node;
			return 1;
		}
	if (xgrow(w->links, w->nr_links))
		return -1;
	w->links[w->nr_links].dev = st->st_dev;
	w->links[w->nr_links].ino = st->st_ino;
	w->links[w->nr_links++].node = w->nr;
	return 0;
}

static int add_extent(TmpfsNode *n, uint64_t off, uint64_t len, uint64_t at)
{
	TmpfsExtent *x = xmalloc(sizeof(*x));

	if (!x || xgrow(n->data, n->n_data)) {
		free(x);
		return -1;
	}
	tmpfs_extent__init(x);
	x->off = off;
	x->len = len;
	x->at = at;
	n->data[n->n_data++] = x;
	return 0;
}

/* The data of a regular file, where it has some, copied by the kernel. */
static int save_data(struct walk *w, TmpfsNode *n, int fd, off_t size)
{
	off_t data, hole, pos;
	ssize_t k;

	n->has_size = 1;
	n->size = size;
	for (data = 0; data < size; data = hole) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || add_extent(n, data, hole - data, w->at))
			return -1;
		for (pos = data; pos < hole; pos += k) {
			k = sendfile(w->store, fd, &pos, hole - pos);
			if (k <= 0)
				return -1;
			pos -= k;	/* sendfile() moved it already */
			w->at += k;
		}
	}
	return 0;
}

static int add_xattr(TmpfsNode *n, const char *name, const void *val, size_t len)
{
	TmpfsXattr *x = xmalloc(sizeof(*x));

	if (!x || xgrow(n->xattrs, n->n_xattrs)) {
		free(x);
		return -1;
	}
	tmpfs_xattr__init(x);
	x->name = xstrdup(name);
	x->value.data = xmalloc(len + 1);
	if (!x->name || !x->value.data) {
		free(x->name);
		free(x);
		return -1;
	}
	memcpy(x->value.data, val, len);
	x->value.len = len;
	n->xattrs[n->n_xattrs++] = x;
	return 0;
}

/* xattrs of @name in @dir (@fd: the node opened, for kernels without the *at calls). */
static int save_xattrs(TmpfsNode *n, int dir, const char *name, int fd)
{
	static char list[XATTR_LIST_MAX], val[XATTR_SIZE_MAX];
	struct xattr_args a = { .value = (uintptr_t)val, .size = sizeof(val) };
	int at = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);
	ssize_t len, vl;
	char *p;

	len = syscall(__NR_listxattrat, dir, name, at, list, sizeof(list));
	if (len < 0 && errno == ENOSYS && fd >= 0)
		len = flistxattr(fd, list, sizeof(list));
	if (len < 0)
		return errno == ENOSYS || errno == EOPNOTSUPP ? 0 : -1;
	for (p = list; p < list + len; p += strlen(p) + 1) {
		vl = syscall(__NR_getxattrat, dir, name, at, p, &a, sizeof(a));
		if (vl < 0 && errno == ENOSYS && fd >= 0)
			vl = fgetxattr(fd, p, val, sizeof(val));
		if (vl < 0 || add_xattr(n, p, val, vl))
			return -1;
	}
	return 0;
}

static int walk_dir(struct walk *w, int dir, const char *path);

static int walk_one(struct walk *w, int dir, const char *name, const char *path)
{
	char target[PATH_MAX];
	struct stat st;
	TmpfsNode *n;
	ssize_t len;
	int fd = -1, ret = -1;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	if (S_ISSOCK(st.st_mode)) {
		pr_info("tmpfs at %s: socket %s not kept", w->mountpoint, path);
		return 0;
	}
	n = add_node(w, path, &st);
	if (!n)
		return -1;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		ret = hard_link(w, n, &st);
		if (ret)
			return ret < 0 ? -1 : 0;
	}
	if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
		fd = openat(dir, name, (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0) | O_RDONLY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		len = readlinkat(dir, name, target, sizeof(target) - 1);
		if (len < 0)
			return -1;
		target[len] = '\0';
		n->target = xstrdup(target);
		if (!n->target)
			return -1;
	} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		n->has_rdev = 1;
		n->rdev = st.st_rdev;
	}
	ret = save_xattrs(n, dir, name, fd);
	if (!ret && S_ISREG(st.st_mode))
		ret = save_data(w, n, fd, st.st_size);
	if (!ret && S_ISDIR(st.st_mode)) {
		ret = walk_dir(w, fd, path);
		fd = -1;	/* walk_dir() closed it */
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* @dir (taken over) is @path; its entries after it. */
static int walk_dir(struct walk *w, int dir, const char *path)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d = fdopendir(dir);
	int ret = 0;

	if (!d) {
		close(dir);
		return -1;
	}
	while (!ret && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "/" : "",
			     de->d_name) >= (int)sizeof(sub)) {
			errno = ENAMETOOLONG;
			ret = -1;
			break;
		}
		ret = walk_one(w, dirfd(d), de->d_name, sub);
	}
	if (!ret && errno)
		ret = -1;
	closedir(d);
	return ret;
}

static void free_walk(struct walk *w)
{
	size_t i;

	for (i = 0; i < w->nr; i++)
		tmpfs_node__free_unpacked(w->n[i], NULL);
	free(w->n);
	free(w->links);
}

/* One tmpfs, in the helper: through a noatime clone of its mount. */
static int dump_one(int dirfd, struct walk *w, const struct tmpfs_dump *t)
{
	TmpfsEntry e = TMPFS_ENTRY__INIT;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOATIME, .attr_clr = MOUNT_ATTR__ATIME };
	uint64_t from = w->at;
	int mnt, root, ret;
	struct stat st;
	TmpfsNode *n;

	mnt = open_tree(AT_FDCWD, t->mountpoint, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (mnt < 0 || syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &a, sizeof(a)) ||
	    (root = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		pr_perror("Can't look into the tmpfs at %s", t->mountpoint);
		if (mnt >= 0)
			close(mnt);
		return -1;
	}
	w->mountpoint = t->mountpoint;
	/* paths from the filesystem's root: a mount of part of it shows that part */
	n = fstat(root, &st) ? NULL : add_node(w, strcmp(t->root, "/") ? t->root + 1 : "", &st);
	ret = !n || save_xattrs(n, root, "", root) ? -1 : walk_dir(w, root, n->path);
	close(mnt);
	if (ret) {
		pr_perror("Can't save the files of the tmpfs at %s", t->mountpoint);
		return -1;
	}
	e.nodes = w->n;
	e.n_nodes = w->nr;
	pr_info("tmpfs at %s: %zu files, %lu bytes of data", t->mountpoint, w->nr, w->at - from);
	return img_write(dirfd, IMG_TMPFS, t->id, &e.base);
}

static int dev_at(const char *path, dev_t *dev)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	*dev = st.st_dev;
	return 0;
}

/*
 * In a private copy of the namespace: what is mounted over @t's mount
 * point (on it, or on a directory above it) goes, until the path leads to
 * @t's filesystem again.
 */
static int uncover(const struct tmpfs_dump *t)
{
	char path[PATH_MAX], *slash;
	dev_t dev;

	while (!dev_at(t->mountpoint, &dev) && dev != t->dev) {
		snprintf(path, sizeof(path), "%s", t->mountpoint);
		while (umount2(path, MNT_DETACH)) {
			slash = strrchr(path, '/');
			if (!slash || slash == path) {
				pr_err("tmpfs at %s (mount %lu): can't find what hides it",
				       t->mountpoint, t->mnt_id);
				return -1;
			}
			*slash = '\0';
		}
	}
	return 0;
}

/* The data store: a new one, or the one an earlier namespace's tmpfs began, at its end. */
static int open_store(int dirfd, int append, uint64_t *at)
{
	char name[64];
	off_t end;
	int fd;

	*at = 0;
	if (!append)
		return img_open_raw(dirfd, IMG_TMPFS_DATA, 0, 1);
	img_name(IMG_TMPFS_DATA, 0, name, sizeof(name));
	/* not O_APPEND: sendfile() refuses such an fd */
	fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	end = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	if (end < 0) {
		pr_perror("Can't append to image %s", name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*at = end;
	return fd;
}

/* In the helper: every tmpfs of the namespace, into the images; hidden ones last. */
static int dump_in_ns(int dirfd, int nsfd, const struct tmpfs_dump *t, int nr, int append)
{
	int i, pass, store, hidden = 0, ret = 0;
	char *covered = xzalloc(nr + 1);
	uint64_t at = 0;

	store = covered ? open_store(dirfd, append, &at) : -1;
	if (store < 0) {
		free(covered);
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNS)) {
		pr_perror("Can't join the tree's mount namespace");
		close(store);
		return -1;
	}
	for (i = 0; i < nr; i++)
		hidden += covered[i] = t[i].unbindable || mnt_id_of(t[i].mountpoint) != t[i].mnt_id;
	/* a copy of the namespace, where unmounting changes nothing for the tree */
	if (hidden && (unshare(CLONE_NEWNS) ||
		       mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))) {
		pr_perror("Can't make a private copy of the tree's mount namespace");
		ret = -1;
	}
	for (pass = 0; pass < 2 && !ret; pass++)
		for (i = 0; i < nr && !ret; i++) {
			struct walk w = { .store = store, .at = at };

			if (covered[i] != pass)
				continue;
			ret = (pass && uncover(&t[i])) || dump_one(dirfd, &w, &t[i]);
			at = w.at;
			free_walk(&w);
		}
	close(store);
	free(covered);
	return ret;
}

int tmpfs_dump_all(int dirfd, pid_t pid, const struct tmpfs_dump *t, int nr, int append)
{
	char path[64], err[512] = "";
	int nsfd, p[2], status;
	ssize_t n;
	pid_t h;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || pipe2(p, O_CLOEXEC)) {
		pr_perror("Task %d: can't open its mount namespace", pid);
		if (nsfd >= 0)
			close(nsfd);
		return -1;
	}
	h = fork();
	if (!h) {
		close(p[0]);
		if (dump_in_ns(dirfd, nsfd, t, nr, append)) {
			const char *e = log_first_error();

			if (e)
				write_full(p[1], e, strlen(e));
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	close(nsfd);
	n = h < 0 ? -1 : read(p[0], err, sizeof(err) - 1);
	close(p[0]);
	if (h < 0 || waitpid(h, &status, 0) != h || !WIFEXITED(status) || WEXITSTATUS(status)) {
		err[n > 0 ? n : 0] = '\0';
		pr_err("Task %d: can't save its tmpfs files: %s", pid, *err ? err : "helper failed");
		return -1;
	}
	return 0;
}

int tmpfs_dump_sum(int dirfd)
{
	return img_checksum_on() ? img_sums_file(dirfd, IMG_TMPFS_DATA, 0) : 0;
}

/* ------------------------------------------------------------- restore */

/* No way out of the filesystem: relative, no "", ".", ".." component. */
static int safe_path(const char *p)
{
	const char *c = p, *e;

	if (!*p)
		return 1;
	if (*p == '/')
		return 0;
	for (; c; c = *e ? e + 1 : NULL) {
		e = strchrnul(c, '/');
		if (e == c || (e - c == 1 && c[0] == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
	}
	return 1;
}

/* The directory a node goes in, opened beneath the root and through no symlink. */
static int parent_of(int root, const char *path, char *dir, const char **name)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
			   RESOLVE_NO_MAGICLINKS,
	};
	const char *slash = strrchr(path, '/');

	if (!slash) {
		*name = path;
		return dup(root);
	}
	snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
	*name = slash + 1;
	return syscall(SYS_openat2, root, dir, &how, sizeof(how));
}

static int write_data(int fd, int store, const TmpfsNode *n)
{
	size_t i;
	off_t at;
	ssize_t k;

	if (ftruncate(fd, n->size))
		return -1;
	for (i = 0; i < n->n_data; i++) {
		const TmpfsExtent *x = n->data[i];
		uint64_t left = x->len;

		if (x->off + x->len > n->size || lseek(fd, x->off, SEEK_SET) < 0)
			return -1;
		for (at = x->at; left; left -= k) {
			k = sendfile(fd, store, &at, left);
			if (k <= 0)
				return -1;
		}
	}
	return 0;
}

static int set_xattrs(int dir, const char *name, int fd, const TmpfsNode *n)
{
	int at = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);
	struct xattr_args a = { 0 };
	size_t i;
	int ret;

	for (i = 0; i < n->n_xattrs; i++) {
		a.value = (uintptr_t)n->xattrs[i]->value.data;
		a.size = n->xattrs[i]->value.len;
		ret = syscall(__NR_setxattrat, dir, name, at, n->xattrs[i]->name, &a, sizeof(a));
		if (ret && errno == ENOSYS && fd >= 0)
			ret = fsetxattr(fd, n->xattrs[i]->name, n->xattrs[i]->value.data,
					n->xattrs[i]->value.len, 0);
		if (ret)
			return -1;
	}
	return 0;
}

/*
 * What a node has when it is made in a directory: criu's uid, and criu's
 * gid or, below a set-group-id directory, the directory's (and its set-gid
 * bit, for a directory). Made with its mode (the umask is 0 meanwhile), a
 * node needs a chown only when its owner is another, a chmod only for the
 * set-id and sticky bits (mkdir() and a chown do not keep them).
 */
struct born {
	uid_t uid;
	gid_t gid;
	int setgid;	/* the directory is set-group-id */
};

static int needs_chmod(const TmpfsNode *n, const struct born *b)
{
	return (n->mode & 07000) || (S_ISDIR(n->mode) && b->setgid);
}

static int own(int dir, const char *name, int fd, const TmpfsNode *n, const struct born *b)
{
	if (n->uid == b->uid && n->gid == b->gid)
		return 0;
	return fd >= 0 ? fchown(fd, n->uid, n->gid) :
	       fchownat(dir, name, n->uid, n->gid, AT_SYMLINK_NOFOLLOW);
}

/* A symlink, a device or a FIFO: made, owned and done. */
static int make_special(int dir, const char *name, const TmpfsNode *n, const struct born *b)
{
	mode_t type = n->mode & S_IFMT;

	if (type == S_IFLNK) {
		if (!n->target || symlinkat(n->target, dir, name))
			return -1;
	} else if (mknodat(dir, name, type | (n->mode & 0777), n->rdev)) {
		return -1;
	}
	return own(dir, name, -1, n, b) ||
	       (type != S_IFLNK && needs_chmod(n, b) && fchmodat(dir, name, n->mode & 07777, 0)) ||
	       set_xattrs(dir, name, -1, n);
}

/* The node, with its contents and its owner and mode; its times come last. */
static int make_node(int dir, const char *name, int store, const TmpfsEntry *e,
		     const TmpfsNode *n, int root, const struct born *b)
{
	mode_t type = n->mode & S_IFMT;
	int fd = -1, ret = -1;

	if (!*n->path)
		fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (n->has_link_to)
		return n->link_to < 1 || n->link_to > e->n_nodes ||
		       !S_ISREG(e->nodes[n->link_to - 1]->mode) ? -1 :
		       linkat(root, e->nodes[n->link_to - 1]->path, dir, name, 0);
	else if (type == S_IFDIR && !mkdirat(dir, name, n->mode & 01777))
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	else if (type == S_IFREG)
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    n->mode & 0777);
	else if (type == S_IFLNK || type == S_IFCHR || type == S_IFBLK || type == S_IFIFO)
		return make_special(dir, name, n, b);
	if (fd < 0)
		return -1;
	if ((type == S_IFREG && write_data(fd, store, n)) || own(dir, name, fd, n, b) ||
	    ((!*n->path || needs_chmod(n, b)) && fchmod(fd, n->mode & 07777)) ||
	    set_xattrs(fd, "", fd, n))
		goto out;
	ret = 0;
out:
	close(fd);
	return ret;
}

/* The owner nodes are born with in directory @d. */
static int born_in(int d, struct born *b)
{
	struct stat st;

	if (fstat(d, &st))
		return -1;
	b->uid = geteuid();
	b->setgid = !!(st.st_mode & S_ISGID);
	b->gid = b->setgid ? st.st_gid : getegid();
	return 0;
}

static int set_times(int root, const TmpfsNode *n)
{
	struct timespec ts[2] = {
		{ n->atime_ns / 1000000000, n->atime_ns % 1000000000 },
		{ n->mtime_ns / 1000000000, n->mtime_ns % 1000000000 },
	};

	return utimensat(root, *n->path ? n->path : ".", ts, AT_SYMLINK_NOFOLLOW);
}

static int fill(int root, int store, const TmpfsEntry *e, const char *mountpoint)
{
	char dir[PATH_MAX], last[PATH_MAX] = "";
	const char *name = NULL;
	struct born b = { 0 };
	int d = -1, ret = 0;
	size_t i;

	for (i = 0; i < e->n_nodes && !ret; i++) {
		const TmpfsNode *n = e->nodes[i];
		const char *slash = strrchr(n->path, '/');
		size_t dl = slash ? (size_t)(slash - n->path) : 0;

		if (!safe_path(n->path) || strlen(n->path) >= PATH_MAX) {
			pr_err("Image tmpfs: node #%zu has a bad path", i);
			ret = -1;
			break;
		}
		/* nodes come directory by directory: one open per directory */
		if (d < 0 || strlen(last) != dl || strncmp(last, n->path, dl)) {
			if (d >= 0)
				close(d);
			d = parent_of(root, n->path, dir, &name);
			if (d >= 0 && born_in(d, &b)) {
				close(d);
				d = -1;
			}
			snprintf(last, sizeof(last), "%.*s", (int)dl, n->path);
		}
		name = slash ? slash + 1 : n->path;
		ret = d < 0 ? -1 : make_node(d, name, store, e, n, root, &b);
		if (ret)
			pr_perror("Can't restore %s in the tmpfs at %s", n->path, mountpoint);
	}
	if (d >= 0)
		close(d);
	for (i = 0; i < e->n_nodes && !ret; i++)
		if (!e->nodes[i]->has_link_to && set_times(root, e->nodes[i])) {
			pr_perror("Can't set the times of %s in the tmpfs at %s",
				  e->nodes[i]->path, mountpoint);
			ret = -1;
		}
	return ret;
}

/*
 * The owners as the tree's user namespace names them (the files are made
 * from inside it; the images hold criu's view), in memory only.
 */
static int owners_inside(const struct idmap *ids, TmpfsEntry *e, const char *mountpoint)
{
	uint32_t uid, gid;
	TmpfsNode *n;
	size_t i;

	for (i = 0; i < e->n_nodes; i++) {
		n = e->nodes[i];
		uid = n->uid;
		gid = n->gid;
		if (idmap_inside(ids, 0, uid, &n->uid) || idmap_inside(ids, 1, gid, &n->gid)) {
			pr_err("Tmpfs at %s: %s is owned by %u:%u, not mapped into the tree's "
			       "user namespace", mountpoint, *n->path ? n->path : ".", uid, gid);
			return -1;
		}
	}
	return 0;
}

/*
 * In the tree's user namespace, a child makes the files, with that
 * namespace's ids as its filesystem ids (idmap_take_fs_ids()); the task
 * keeps criu's, for the images and host files it opens later.
 */
static int fill_in_userns(const struct idmap *ids, int root, int store, const TmpfsEntry *e,
			  const char *mountpoint)
{
	int status;
	pid_t h;

	if (!ids)
		return fill(root, store, e, mountpoint);
	h = fork();
	if (h == 0)
		_exit(idmap_take_fs_ids(ids) || fill(root, store, e, mountpoint) ? 1 : 0);
	if (h < 0 || waitpid(h, &status, 0) != h) {
		pr_perror("Can't run the helper that fills the tmpfs at %s", mountpoint);
		return -1;
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (!WIFEXITED(status))
		pr_err("The helper that fills the tmpfs at %s died of signal %d", mountpoint,
		       WTERMSIG(status));
	return -1;
}

int tmpfs_restore(const struct idmap *ids, int dirfd, int store, uint32_t id, int mntfd,
		  const char *mountpoint)
{
	TmpfsEntry *e;
	mode_t mask;
	int ret;

	if (img_read(dirfd, IMG_TMPFS, id, (void **)&e, 0) < 0)
		return -1;
	if (owners_inside(ids, e, mountpoint)) {
		img_free(IMG_TMPFS, e);
		return -1;
	}
	mask = umask(0);	/* the modes as they are */
	ret = fill_in_userns(ids, mntfd, store, e, mountpoint);
	umask(mask);
	img_free(IMG_TMPFS, e);
	return ret;
}
