// SPDX-License-Identifier: GPL-2.0
/*
 * The inode map: paths for inodes by walking directories (irmap.h).
 *
 * A walk is kept per filesystem and view (mount namespace and root) for
 * the whole dump, with every entry it saw. The --irmap-scan-path
 * directories are read whole first; the filesystem's mounts then
 * breadth first (shallow paths are found before the entry limit), and
 * only as far as the inode looked for: the next lookup goes on from there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "task/irmap.h"

struct irmap_ent {
	unsigned long ino;
	size_t seq;		/* the order seen: hints first */
	char *path;
};

/* Directories still to read, in the order found. */
struct dir_queue {
	char **path;
	size_t head, nr, cap;
};

/* One walk: a filesystem as the tasks of one mount namespace and root see it. */
struct irmap_walk {
	ino_t mntns, root_ino;
	dev_t root_dev, dev;
	struct irmap_ent *e;
	size_t nr, cap, sorted;	/* e[0..sorted) in ino order */
	struct dir_queue q;	/* the mounts' directories not read yet */
	int mounts_queued;
	long scanned;
	int full;		/* stopped at IRMAP_MAX_ENTRIES */
	unsigned long want;	/* the inode the mounts' walk looks for */
	int seen;		/* and it went past it */
};

static struct irmap_walk *walks;
static size_t nr_walks;

/* Room for one more of @size bytes in *@arr of @nr, its capacity doubled in *@cap. */
static int room(void *arr, size_t *cap, size_t nr, size_t size)
{
	size_t more = *cap ? 2 * *cap : 256;
	void *n;

	if (nr < *cap)
		return 0;
	n = xrealloc(*(void **)arr, more * size);
	if (!n)
		return -1;
	*(void **)arr = n;
	*cap = more;
	return 0;
}

static int add_ent(struct irmap_walk *w, unsigned long ino, const char *path)
{
	struct irmap_ent *n;

	if (room(&w->e, &w->cap, w->nr, sizeof(*n)))
		return -1;
	n = &w->e[w->nr];
	n->ino = ino;
	n->seq = w->nr;
	n->path = xstrdup(path);
	if (!n->path)
		return -1;
	w->nr++;
	w->seen |= ino == w->want;
	return 0;
}

static int queue_dir(struct dir_queue *q, const char *path)
{
	if (room(&q->path, &q->cap, q->nr, sizeof(*q->path)))
		return -1;
	q->path[q->nr] = xstrdup(path);
	return q->path[q->nr] ? (q->nr++, 0) : -1;
}

static void queue_free(struct dir_queue *q)
{
	while (q->nr > q->head)
		free(q->path[--q->nr]);
	free(q->path);
	memset(q, 0, sizeof(*q));
}

static int open_in_root(int root, const char *path, int flags)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
	};

	return syscall(SYS_openat2, root, path[1] ? path + 1 : ".", &how, sizeof(how));
}

/* lstat() of @path as the task sees it, never resolved out of its root @root */
static int stat_in_root(int root, const char *path, struct stat *st)
{
	int fd = open_in_root(root, path, O_PATH | O_NOFOLLOW), ret;

	if (fd < 0)
		return -1;
	ret = fstat(fd, st);
	close(fd);
	return ret;
}

/* The entries of directory @path (as the task sees it); its subdirectories queued in @q. */
static int read_dir(struct irmap_walk *w, struct dir_queue *q, int root, const char *path)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int ret = 0, fd;
	DIR *d;

	fd = open_in_root(root, path, O_RDONLY | O_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;	/* gone or unreadable: nothing found there */
	}
	while (!ret && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->scanned > IRMAP_MAX_ENTRIES) {
			w->full = 1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_dev != w->dev)
			continue;	/* gone since, or another filesystem mounted there */
		if (snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "",
			     de->d_name) >= (int)sizeof(sub))
			continue;
		ret = add_ent(w, st.st_ino, sub);
		if (!ret && S_ISDIR(st.st_mode))
			ret = queue_dir(q, sub);
	}
	closedir(d);
	return ret;
}

/* @path of the task's view, queued in @q if it is a directory on the filesystem. */
static int queue_root(struct irmap_walk *w, struct dir_queue *q, int root, const char *path)
{
	struct stat st;
	int fd;

	if (path[0] != '/')
		return 0;
	fd = open_in_root(root, path, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || st.st_dev != w->dev) {
		close(fd);
		return 0;
	}
	close(fd);
	return add_ent(w, st.st_ino, path) || queue_dir(q, path) ? -1 : 0;
}

/* Reads @q's directories until it is done, or @stop is set and the wanted inode seen. */
static int drain(struct irmap_walk *w, struct dir_queue *q, int root, int stop)
{
	int ret = 0;

	while (!ret && q->head < q->nr && !w->full && !(stop && w->seen)) {
		ret = read_dir(w, q, root, q->path[q->head]);
		free(q->path[q->head++]);
	}
	return ret;
}

/* The --irmap-scan-path directories, whole. */
static int walk_hints(struct irmap_walk *w, int root, const struct irmap_hints *hints)
{
	struct dir_queue q = { 0 };
	int i, ret = 0;

	for (i = 0; hints && i < hints->nr && !ret; i++)
		ret = queue_root(w, &q, root, hints->paths[i]);
	if (!ret)
		ret = drain(w, &q, root, 0);
	queue_free(&q);
	if (!ret)
		pr_info("irmap: walked %ld entries of device %u:%u in the --irmap-scan-path "
			"directories", w->scanned, major(w->dev), minor(w->dev));
	return ret;
}

/* The filesystem's mounts, breadth first, on until inode @ino was seen. */
static int walk_mounts(struct irmap_walk *w, int root, const struct proc_mounts *ms,
		       unsigned long ino)
{
	long before = w->scanned;
	int i, ret = 0;

	if (!w->mounts_queued) {
		w->mounts_queued = 1;
		for (i = 0; i < ms->nr && !ret; i++)
			if (makedev(ms->m[i].major, ms->m[i].minor) == w->dev)
				ret = queue_root(w, &w->q, root, ms->m[i].mountpoint);
	}
	w->want = ino;
	w->seen = 0;
	if (!ret)
		ret = drain(w, &w->q, root, 1);
	if (!ret)
		pr_info("irmap: walked %ld more entries of device %u:%u from its mounts' roots%s",
			w->scanned - before, major(w->dev), minor(w->dev),
			w->full ? " (stopped at the limit)" : w->q.head < w->q.nr ? "" :
			" (all of them)");
	return ret;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct irmap_ent *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The walk of @sdev for task @pid's view (its root opened in @root), made now if new. */
static struct irmap_walk *walk_of(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
				  const struct irmap_hints *hints, int *root)
{
	struct irmap_walk key = { .dev = makedev(KDEV_MAJOR(sdev), KDEV_MINOR(sdev)) }, *w;
	char at[64];
	struct stat st;
	size_t i;

	snprintf(at, sizeof(at), "/proc/%d/ns/mnt", pid);
	if (stat(at, &st))
		return NULL;
	key.mntns = st.st_ino;
	snprintf(at, sizeof(at), "/proc/%d/root", pid);
	*root = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*root < 0 || fstat(*root, &st))
		return NULL;
	key.root_dev = st.st_dev;
	key.root_ino = st.st_ino;
	for (i = 0; i < nr_walks; i++)
		if (walks[i].mntns == key.mntns && walks[i].root_dev == key.root_dev &&
		    walks[i].root_ino == key.root_ino && walks[i].dev == key.dev)
			return &walks[i];
	w = xpush(walks, nr_walks);
	if (!w)
		return NULL;
	*w = key;
	return walk_hints(w, *root, hints) ? NULL : w;
}

/* The path of the first entry of @ino seen that still leads to it, or NULL. */
static char *lookup(struct irmap_walk *w, int root, unsigned long ino, struct stat *st)
{
	struct irmap_ent *e, k = { .ino = ino };
	size_t lo, hi, mid;

	if (w->sorted != w->nr) {
		qsort(w->e, w->nr, sizeof(*w->e), ent_cmp);
		w->sorted = w->nr;
	}
	for (lo = 0, hi = w->nr; lo < hi;) {
		mid = (lo + hi) / 2;
		if (ent_cmp(&w->e[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (e = &w->e[lo]; e < w->e + w->nr && e->ino == ino; e++)
		/* still there, and still that inode */
		if (!stat_in_root(root, e->path, st) && st->st_ino == ino &&
		    st->st_dev == w->dev)
			return xstrdup(e->path);
	return NULL;
}

char *irmap_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		 unsigned long ino, const struct irmap_hints *hints, struct stat *st,
		 long *scanned)
{
	struct irmap_walk *w;
	char *found = NULL;
	int root = -1;

	w = walk_of(pid, ms, sdev, hints, &root);
	while (w && !(found = lookup(w, root, ino, st))) {
		/* on through the filesystem, for what was not seen yet */
		if (w->full || (w->mounts_queued && w->q.head == w->q.nr) ||
		    walk_mounts(w, root, ms, ino)) {
			break;
		}
	}
	*scanned = w ? w->scanned : -1;
	if (!w)
		pr_perror("Task %d: irmap: can't walk device %u:%u", pid, KDEV_MAJOR(sdev),
			  KDEV_MINOR(sdev));
	if (root >= 0)
		close(root);
	return found;
}

void irmap_forget(void)
{
	size_t i, j;

	for (i = 0; i < nr_walks; i++) {
		for (j = 0; j < walks[i].nr; j++)
			free(walks[i].e[j].path);
		free(walks[i].e);
		queue_free(&walks[i].q);
	}
	free(walks);
	walks = NULL;
	nr_walks = 0;
}
