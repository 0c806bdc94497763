/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_MNT_TMPFS_H
#define CRIU_PARTS_NS_MNT_TMPFS_H

#include <stdint.h>
#include <sys/types.h>

#include "task/idmap.h"

/* A tmpfs of the tree's namespace, as the dump reads it. */
struct tmpfs_dump {
	uint32_t id;		/* mount_entry.contents */
	uint64_t mnt_id;	/* the mount it is read through */
	dev_t dev;
	int unbindable;		/* can't be cloned as it is */
	const char *mountpoint;
	const char *root;	/* of that mount, in the filesystem */
};
/*
 * The files of namespace @pid's tmpfs @t, into tmpfs-ID.img and the data
 * store: a new one, or with @append the end of the one an earlier
 * namespace's began (tmpfs_dump_sum() once the last is in).
 */
int tmpfs_dump_all(int dirfd, pid_t pid, const struct tmpfs_dump *t, int nr, int append);
int tmpfs_dump_sum(int dirfd);
/* Restore: fills the new (empty) tmpfs @mntfd with tmpfs-@id.img. */
int tmpfs_restore(const struct idmap *ids, int dirfd, int store, uint32_t id, int mntfd,
		  const char *mountpoint);

#endif
