/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MNT_H
#define CRIU_PARTS_MNT_H

/*
 * The mount namespace of the tree (mnt.c, mnt-build.c, mnt-tmpfs.c), and
 * what it offers the parts that name files: at dump, whether a mount is
 * one of the tree's; at restore, a file opened in the mount it was on.
 */
#include <stdint.h>
#include <sys/mount.h>
#include <sys/types.h>

#include "parts/part.h"
#include "mnt.pb-c.h"

/* ------------------------------------------------ for the other parts */

/*
 * Dump: 1 when files on mount @mnt_id (of /proc/PID/fdinfo, statx()'s
 * stx_mnt_id) can be restored: the tree has no mount namespace of its own,
 * or the mount is in it, or in criu's (a file held since before the tree
 * made its namespace: reopened in criu's). Otherwise 0, with the task and
 * @what logged.
 */
int mnt_dump_reaches(pid_t pid, uint64_t mnt_id, const char *what);
/*
 * Dump: file @path on mount @mnt_id, held by task @pid with status flags
 * @flags: 0 when its path leads to it in the task's namespace, else N,
 * the restore's way to it (mnt_open_hidden()); -1 refused (logged).
 */
int mnt_dump_hidden(pid_t pid, uint64_t mnt_id, const char *path, unsigned int flags);
/* The mount id of what @path (a /proc/PID/... link) leads to; 0 if unknown. */
uint64_t mnt_id_of(const char *path);

/*
 * Restore, in a task: opens @path, which was on mount @mnt_id at dump,
 * in that mount of the restored tree (another mount on top of it, or on a
 * directory of the path, is not in the way). Without a mount namespace
 * of the tree's, or @mnt_id 0 (older images), by path. -1 logged.
 */
int mnt_open(pid_t pid, uint64_t mnt_id, const char *path, int flags);
/* Restore: the file mnt_dump_hidden() said was hidden, as N; -1 logged. */
int mnt_open_hidden(pid_t pid, uint32_t n, const char *path);
/* Restore: does the tree have a mount namespace of its own (mnt.img)? */
int mnt_tree_has_ns(void);

/* ------------------------------------------------- between mnt*.c */

/* MOUNT_ATTR_* of the new mount API (glibc 2.36 has them in sys/mount.h). */
#define MNT_ATTR_NOSYMFOLLOW	0x00200000U	/* Linux 5.14 */
/* the per-mount attributes a mountinfo line shows */
#define MNT_ATTR_MASK	(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | \
			 MOUNT_ATTR_NOEXEC | MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME | \
			 MNT_ATTR_NOSYMFOLLOW)

/* One mount of the tree as the restore builds it. */
struct rmount {
	MountEntry *e;
	int fd;			/* its root, once made (O_PATH or a mount fd) */
	int done;
	int64_t attrs;		/* MOUNT_ATTR_* it has once made, -1: not known */
};

struct mnt_restore {
	MntnsEntry *ns;
	int dirfd;		/* the images */
	uint32_t maker;		/* the task that made the namespace (the root) */
	struct rmount *m;	/* ns->mounts, in the image's order */
	int nr;
	const char *root;	/* --root, for MNT_ROOT */
	const char **ext_path;	/* per mount: where an MNT_EXTERNAL one comes from */
	int *ext_fd;		/* per mount: an O_PATH fd of it, while the tree is built */
	int store;		/* tmpfs-data.img, while the contents are written */
	int proc_fd;		/* criu's /proc */
	int host_root;		/* criu's root, for files on criu's mounts */
	int *hidden_fd;		/* ns->hidden[i], opened while the tree is built */
	struct rst_ctx *rc;	/* for the ids of the tree's user namespace */
};

/* mnt-build.c: in the maker, first thing: the whole tree, entered. */
/* mnt.c: the hidden files on mount @m, opened now that it is made and not covered. */
int mnt_open_hidden_on(struct mnt_restore *r, struct rmount *m);
int mnt_build(struct mnt_restore *r);
/* MOUNT_ATTR_* of the mount options of a mountinfo line. */
uint32_t mnt_attrs_of(const char *opts);
/* @path below mount point @mountpoint, without the leading '/'; NULL if not below. */
const char *mnt_below(const char *mountpoint, const char *path);

/* mnt-tmpfs.c */
struct tmpfs_dump {
	uint32_t id;		/* mount_entry.contents */
	uint64_t mnt_id;	/* the mount it is read through */
	dev_t dev;
	int unbindable;		/* can't be cloned as it is */
	const char *mountpoint;
	const char *root;	/* of that mount, in the filesystem */
};
/* Dump, in criu: the files of every tmpfs of @pid's mount namespace. */
int tmpfs_dump_all(int dirfd, pid_t pid, const struct tmpfs_dump *t, int nr);
/* Restore: fills the new (empty) tmpfs @mntfd with tmpfs-@id.img. */
int tmpfs_restore(struct rst_ctx *rc, int dirfd, int store, uint32_t id, int mntfd,
		  const char *mountpoint);

#endif
