/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_SHMEM_GHOST_H
#define CRIU_PARTS_SHMEM_GHOST_H

/*
 * Ghost files: regular files deleted while a task still holds them open
 * or mapped. Their contents exist nowhere but in the kernel, so they are
 * saved as shared memory objects (shmem.c keeps the contents, once per
 * inode, for every fd and area on it); this helper of shmem.c says which
 * deleted files can be saved, what is kept of them, and makes them again.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/opts.h"
#include "shmem.pb-c.h"

#define GHOST_LIMIT_DEFAULT	(1ULL << 20)	/* CRIU's --ghost-limit default */

struct idmap;

/*
 * Dump, before anything is changed: 0 when the ghost @link that task @pid
 * holds as @what ("fd 3", "the area at 0x..."), @src in /proc, can be
 * saved, else -1 with one line that says why (still linked elsewhere, over
 * --ghost-limit, on a mount the restore can't make...).
 */
int ghost_check(pid_t pid, const char *what, const char *src, const char *link,
		const struct stat *st, const struct opts *opts);
/*
 * Where task @pid's deleted files are found from criu, for ghost_link_back()
 * and ghost_unlink_back(): AT_FDCWD when it sees criu's mounts, else an fd
 * of its root (the caller's to close); -1 logged.
 */
int ghost_root(pid_t pid);
/* Dump: what is kept of the ghost @link besides its contents; -1 logged. */
int ghost_fill(ShmemObject *o, const char *src, const char *link, const struct stat *st);
/* Restore: is the image's object @o a ghost that can be made again? (logged) */
int ghost_valid(const ShmemObject *o, size_t i);
/* root: the restored mount tree, through the mount the file was on (mnt_open()) */
#define GHOST_IN_TREE	(-1000)

/* Restore: where the ghosts are made again. */
struct ghost_at {
	int root;		/* AT_FDCWD: criu's mounts; or GHOST_IN_TREE */
	pid_t pid;		/* the task that makes them, for the log */
	int proc;		/* a /proc that shows it (-1: "/proc") */
	const struct idmap *ids;	/* the tree's user namespace, or NULL */
};

/*
 * Restore, in criu, or in the task that built the tree's mounts: the ghost
 * made again next to where it was, filled by @fill, given its owner, mode
 * and times, and unlinked: its fd, or -1 (logged) with nothing left behind.
 */
int ghost_create(const ShmemObject *o, const struct ghost_at *at,
		 int (*fill)(void *arg, int fd), void *arg);

/*
 * --link-remap: a deleted file still linked elsewhere is no ghost: its
 * contents are in the filesystem. Dump: link the file @src (a /proc path
 * of it) back in its directory as o->remap; -1 logged. ghost_unlink_back()
 * removes that link if it still is the file @st (logged): after a failed
 * dump, and once a restore let the tree run. Both find the directory from
 * @root (ghost_root()).
 */
int ghost_link_back(const ShmemObject *o, const char *src, int root);
void ghost_unlink_back(const ShmemObject *o, const struct stat *st, int root);
/* Restore, as ghost_create(): the linked-back file opened (stat() in @st); -1 logged. */
int ghost_open_linked(const ShmemObject *o, const struct ghost_at *at, struct stat *st);

#endif
