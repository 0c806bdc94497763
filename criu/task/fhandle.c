// SPDX-License-Identifier: GPL-2.0
/* The inodes of fsnotify marks, found again by their file handles (fhandle.h). */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "task/fhandle.h"
#include "task/irmap.h"
#include "task/mounts.h"

int fhandle_parse(const char *line, struct fhandle *h)
{
	const char *p = strstr(line, " fhandle-bytes:");
	char hex[2 * FHANDLE_MAX + 1];
	unsigned int i;

	h->bytes = 0;
	if (!p)
		return 0;
	if (sscanf(p, " fhandle-bytes:%x fhandle-type:%x f_handle:%256s", &h->bytes, &h->type,
		   hex) != 3 || h->bytes > FHANDLE_MAX) {
		h->bytes = 0;
		return -1;
	}
	if (strlen(hex) < 2 * h->bytes) {
		h->bytes = 0;
		return -1;
	}
	for (i = 0; i < h->bytes; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &h->h[i]) != 1)
			return -1;
	return 0;
}

const struct proc_mount *fhandle_mount_of(const struct proc_mounts *ms, unsigned int sdev)
{
	const struct proc_mount *found = NULL;
	int i;

	for (i = 0; i < ms->nr; i++) {
		const struct proc_mount *m = &ms->m[i];

		if (m->major != KDEV_MAJOR(sdev) || m->minor != KDEV_MINOR(sdev))
			continue;
		if (!strcmp(m->root, "/"))
			return m;
		if (!found)
			found = m;
	}
	return found;
}

/*
 * An fd of a mount of @sdev in task @pid's namespace (one of its root
 * preferred, then any that opens): a path read back through it is the one
 * the task sees (a container's, not the host's).
 */
static int open_mount(pid_t pid, const struct proc_mounts *ms, unsigned int sdev)
{
	char at[PATH_MAX + 32];
	int i, fd = -1, best = 0;

	for (i = 0; i < ms->nr && best < 2; i++) {
		const struct proc_mount *m = &ms->m[i];

		if (m->major != KDEV_MAJOR(sdev) || m->minor != KDEV_MINOR(sdev))
			continue;
		if (fd >= 0 && strcmp(m->root, "/"))
			continue;
		if (fd >= 0)
			close(fd);
		snprintf(at, sizeof(at), "/proc/%d/root%s", pid, m->mountpoint);
		fd = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		best = fd >= 0 ? 1 + !strcmp(m->root, "/") : 0;
	}
	return fd;
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

/*
 * The path of inode @ino by its handle, or NULL with *@why saying why not
 * (the caller tries the irmap then).
 */
static char *by_handle(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		       unsigned long ino, const struct fhandle *h, struct stat *st,
		       const char **why, struct fhandle_hidden *hid)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[FHANDLE_MAX];
	} fh;
	char link[64], path[PATH_MAX], at[PATH_MAX + 32];
	static char err[96];
	int mfd, fd;
	ssize_t len;

	mfd = open_mount(pid, ms, sdev);
	if (mfd < 0) {
		*why = "its filesystem is not mounted in the task's mount namespace";
		return NULL;
	}
	fh.fh.handle_bytes = h->bytes;
	fh.fh.handle_type = h->type;
	memcpy(fh.fh.f_handle, h->h, h->bytes);
	fd = open_by_handle_at(mfd, &fh.fh, O_PATH | O_CLOEXEC);
	close(mfd);
	if (fd < 0) {
		snprintf(err, sizeof(err), "its file handle does not open (%s)", strerror(errno));
		*why = err;
		return NULL;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len > 0)
		path[len] = '\0';
	/* the path must lead to the very inode: not deleted, not moved out of reach */
	if (len > 0)
		snprintf(at, sizeof(at), "/proc/%d/root%s", pid, path);
	if (len > 0 && path[0] == '/' && !lstat(at, st) && st->st_ino == ino) {
		close(fd);
		return xstrdup(path);
	}
	*why = "its file handle leads to no path to it";
	if (hid && len > 0 && path[0] == '/' && !ends_with(path, " (deleted)") && !fstat(fd, st)) {
		/* a name on its mount, which another mount hides (or moved away) */
		hid->mnt_id = mnt_id_of(link);
		hid->path = xstrdup(path);
		*why = "its path is hidden by another mount";
	}
	close(fd);
	return NULL;
}


char *fhandle_open_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
			unsigned long ino, const struct fhandle *h, const struct opts *o,
			struct stat *st, const char **why, struct fhandle_hidden *hid)
{
	if (o->force_irmap) {
		*why = "--force-irmap";
		return NULL;
	}
	if (!h->bytes) {
		*why = "its filesystem gives no file handles";
		return NULL;
	}
	return by_handle(pid, ms, sdev, ino, h, st, why, hid);
}

char *fhandle_irmap_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
			 unsigned long ino, const struct opts *o, struct stat *st,
			 const char *what, const char *why, char *err, size_t errlen)
{
	struct irmap_hints hints = { o->irmap_paths, o->nr_irmap_paths };
	long scanned;
	char *path;

	path = irmap_path(pid, ms, sdev, ino, &hints, st, &scanned);
	if (path) {
		pr_info("Task %d: %s: inode %lu found at %s by the irmap (%s)", pid, what, ino,
			path, why);
		return path;
	}
	if (scanned < 0)
		snprintf(err, errlen, "the irmap can't walk device %u:%u", KDEV_MAJOR(sdev),
			 KDEV_MINOR(sdev));
	else
		snprintf(err, errlen, "inode %lu of device %u:%u has no path (deleted?): %s, "
			 "and the irmap found it nowhere in %ld entries (--irmap-scan-path names "
			 "where to look)", ino, KDEV_MAJOR(sdev), KDEV_MINOR(sdev), why, scanned);
	return NULL;
}

char *fhandle_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		   unsigned long ino, const struct fhandle *h, const struct opts *o,
		   struct stat *st, const char *what, char *err, size_t errlen)
{
	const char *why;
	char *path;

	path = fhandle_open_path(pid, ms, sdev, ino, h, o, st, &why, NULL);
	return path ?: fhandle_irmap_path(pid, ms, sdev, ino, o, st, what, why, err, errlen);
}

/*
 * The "PATH (deleted)" link of an fd or area of task @pid on deleted file
 * @ino of @sdev, its stat() in @st: a ghost the shmem part saves. NULL
 * when the task holds it by none.
 */
static char *held_ghost(pid_t pid, unsigned int sdev, unsigned long ino, struct stat *st)
{
	static const char *const dirs[] = { "fd", "map_files" };
	dev_t dev = makedev(KDEV_MAJOR(sdev), KDEV_MINOR(sdev));
	char at[64], link[PATH_MAX];
	struct dirent *de;
	char *found = NULL;
	unsigned int i;
	ssize_t len;
	DIR *d;

	for (i = 0; i < ARRAY_SIZE(dirs) && !found; i++) {
		snprintf(at, sizeof(at), "/proc/%d/%s", pid, dirs[i]);
		d = opendir(at);
		while (d && !found && (de = readdir(d))) {
			if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, st, 0) ||
			    st->st_ino != ino || st->st_dev != dev)
				continue;
			len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
			if (len <= 0)
				continue;
			link[len] = '\0';
			if (proc_is_ghost(link, st->st_mode, st->st_dev))
				found = xstrdup(link);
		}
		if (d)
			closedir(d);
	}
	return found;
}

int fhandle_mark_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		      unsigned long ino, const struct fhandle *h, const struct opts *o,
		      const char *what, struct fhandle_mark *m, struct stat *st)
{
	struct fhandle_hidden hid = { 0 };
	char err[512];
	const char *why;

	memset(m, 0, sizeof(*m));
	m->path = fhandle_open_path(pid, ms, sdev, ino, h, o, st, &why, &hid);
	if (m->path)
		return 0;
	if (hid.path) {
		/* under another mount of the tree's: the mount part reopens it */
		m->hidden = mnt_dump_hidden(pid, hid.mnt_id, hid.path, O_PATH | O_NOFOLLOW);
		if (m->hidden > 0) {
			m->path = hid.path;
			return 0;
		}
		free(hid.path);
		if (m->hidden < 0)
			return -1;
	}
	/* before the irmap, which walks the whole filesystem for a deleted one */
	m->path = held_ghost(pid, sdev, ino, st);
	if (m->path) {
		m->deleted = 1;
		pr_info("Task %d: %s: inode %lu is the deleted file %s the task holds: marked "
			"again on the file the restore makes of it", pid, what, ino, m->path);
		return 0;
	}
	m->path = fhandle_irmap_path(pid, ms, sdev, ino, o, st, what, why, err, sizeof(err));
	if (m->path)
		return 0;
	pr_err("Task %d: %s: %s, nor does the task hold it deleted", pid, what, err);
	return -1;
}
