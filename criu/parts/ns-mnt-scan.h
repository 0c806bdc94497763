/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_MNT_SCAN_H
#define CRIU_PARTS_NS_MNT_SCAN_H

/*
 * The dump's half of ns-mnt.c that reads one mount namespace: each mount
 * of its mountinfo sorted into how restore makes it again (mnt.proto's
 * kinds), against the namespace it was copied from. ns-mnt.c keeps the
 * list of the tree's namespaces and writes them.
 */
#include <stdint.h>
#include <sys/types.h>

#include "core/opts.h"
#include "proc/proc.h"
#include "parts/ns-mnt-tmpfs.h"
#include "mnt.pb-c.h"

/* One mount namespace of the tree: the root's own, or one nested below it. */
struct mnt_dump {
	uint64_t ns;
	pid_t maker, maker_ns;
	int nested;			/* made by a task below the root (unshare) */
	struct proc_mounts ms;		/* the namespace's, as its maker sees them */
	struct proc_mounts host;	/* the one it was copied from: criu's, or the maker's parent's */
	struct proc_mounts cg;		/* the tree's, read in its cgroup namespace */
	MountEntry *e;
	int *host_of;			/* inherited: the host mount's index, else -1 */
	int root;			/* index of the root mount in ms */
	int inherited;			/* the namespace is a copy of the one it came from */
	struct tmpfs_dump *tmpfs;
	int nr_tmpfs;
	uint32_t *contents;		/* the last tmpfs image number, across namespaces */
	uint32_t *joiners;		/* tasks that joined it (setns), their ns pids */
	size_t nr_joiners;
};

/*
 * Fills @d->e (and the tmpfs to save) from @d->ms, read against @d->host:
 * 0, or -1 with one line naming the mount and why it can't be restored.
 */
int mnt_scan(struct mnt_dump *d, const struct opts *o);
/* The value of --external mnt[@inside]:VALUE, or NULL. */
const char *mnt_ext_value(const struct opts *o, const char *inside);
dev_t mnt_dev_of(const struct proc_mount *m);

#endif
