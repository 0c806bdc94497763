/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_MNT_BUILD_H
#define CRIU_PARTS_NS_MNT_BUILD_H

/*
 * The mount namespaces of the tree, in four files, one way down: ns-mnt.c
 * the part (dump, the restore's hooks, the service it offers the parts
 * that name files: task/mounts.h), ns-mnt-scan.c the dump's reading of
 * one namespace, ns-mnt-build.c the restore's building of one,
 * ns-mnt-tmpfs.c the files of a tmpfs.
 */
#include <stdint.h>
#include <sys/mount.h>
#include <sys/types.h>

#include "task/idmap.h"
#include "mnt.pb-c.h"

struct proc_mounts;

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
	/*
	 * MNT_INHERITED of a nested namespace: the restored parent mount it is
	 * a copy of, as mountinfo shows it now (its root and source may differ
	 * from the dump's); NULL: as dumped
	 */
	const struct proc_mount *live;
};

struct mnt_restore {
	MntnsEntry *ns;
	int dirfd;		/* the images */
	uint32_t maker;		/* the task that made the namespace (the root, or below) */
	struct rmount *m;	/* ns->mounts, in the image's order */
	int nr;
	const char *root;	/* --root, for MNT_ROOT */
	const char **ext_path;	/* per mount: where an MNT_EXTERNAL one comes from */
	int *ext_fd;		/* per mount: an O_PATH fd of it, while the tree is built */
	int store;		/* tmpfs-data.img, while the contents are written */
	int proc_fd;		/* criu's /proc */
	int host_root;		/* criu's root, for files on criu's mounts */
	HiddenFile **hidden;	/* of every namespace of the tree (the root's entry lists them) */
	size_t n_hidden;
	int *hidden_fd;		/* hidden[i], opened while its namespace is built */
	const struct idmap *ids;	/* the tree's user namespace's (rst_ctx.idmap) */
	const char *context;	/* --lsm-mount-context: SELinux's context= of mounts */
	int join[2];		/* with joiners: the maker sends, they receive, its fds */
};

/* In the maker, first thing: the whole tree, entered. */
int mnt_build(struct mnt_restore *r);
/* The hidden files on mount @m, opened now that it is made and not covered. */
int mnt_open_hidden_on(struct mnt_restore *r, struct rmount *m);
/* proc_read_mountinfo(), a root listed as its own parent made parentless */
int mnt_read_mountinfo(pid_t pid, struct proc_mounts *ms);
/* MOUNT_ATTR_* of the mount options of a mountinfo line. */
uint32_t mnt_attrs_of(const char *opts);
/* @path below mount point @mountpoint, without the leading '/'; NULL if not below. */
const char *mnt_below(const char *mountpoint, const char *path);

#endif
