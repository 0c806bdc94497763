/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_MNT_TMPFS_H
#define CRIU_PARTS_NS_MNT_TMPFS_H

#include <stdint.h>
#include <sys/types.h>

/* A tmpfs of the tree's namespace, as the dump reads it. */
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
int tmpfs_restore(int dirfd, int store, uint32_t id, int mntfd, const char *mountpoint);

#endif
