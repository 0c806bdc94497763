/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_FHANDLE_H
#define CRIU_TASK_FHANDLE_H

/*
 * The inodes fsnotify marks hold (inotify watches, fanotify marks), as
 * /proc/PID/fdinfo shows them: inode number, device and a file handle.
 * The path comes from the handle: open_by_handle_at() (CAP_DAC_READ_SEARCH)
 * on a mount of the inode's filesystem in the task's mount namespace, then
 * the /proc/self/fd link of what it opened, checked to lead back to the
 * very inode through the task's root; else from the irmap (irmap.h).
 */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/opts.h"
#include "proc/proc.h"

#define FHANDLE_MAX	128

struct fhandle {
	unsigned int bytes;	/* 0: the filesystem gives none */
	int type;
	unsigned char h[FHANDLE_MAX];
};

/*
 * The "fhandle-bytes:B fhandle-type:T f_handle:HEX" of an fdinfo line
 * @line; h->bytes is 0 where the line has none. -1 when it is malformed.
 */
int fhandle_parse(const char *line, struct fhandle *h);

/* A mount of the filesystem of @sdev among @ms, one of its root preferred; NULL if none. */
const struct proc_mount *fhandle_mount_of(const struct proc_mounts *ms, unsigned int sdev);

/*
 * The path task @pid sees for inode @ino of device @sdev by its handle @h,
 * @ms being the task's mounts; its stat() in @st. Where the handle gives
 * none (no handles, one that does not open, as overlayfs's, or
 * --force-irmap in @o), the irmap's (irmap.h, --irmap-scan-path in @o).
 * NULL when it has none, with why in @err (deleted, moved out of reach,
 * not mounted there), not logged: the caller may know another way.
 * @what names the mark in the log ("inotify fd 3, wd 4").
 */
char *fhandle_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		   unsigned long ino, const struct fhandle *h, const struct opts *o,
		   struct stat *st, const char *what, char *err, size_t errlen);

/* A name on the mount the inode is on, which another mount hides. */
struct fhandle_hidden {
	char *path;		/* the caller's to free; NULL: none */
	uint64_t mnt_id;
};

/*
 * The first half of fhandle_path(): by the handle alone; NULL with *@why,
 * and where its name is hidden by another mount (@hid not NULL), that name
 * in @hid and the inode's stat() in @st.
 */
char *fhandle_open_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
			unsigned long ino, const struct fhandle *h, const struct opts *o,
			struct stat *st, const char **why, struct fhandle_hidden *hid);
/* The second: by the irmap, the handle having said @why; NULL with @err. */
char *fhandle_irmap_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
			 unsigned long ino, const struct opts *o, struct stat *st,
			 const char *what, const char *why, char *err, size_t errlen);


/* How a mark's inode is reached again at restore (fhandle_mark_path()). */
struct fhandle_mark {
	char *path;		/* its path; a deleted file's "PATH (deleted)" link */
	int deleted;		/* a ghost the task holds: by its object (@st's ino/dev) */
	int hidden;		/* under another mount of the tree's: mnt.img's file N */
};

/*
 * Everything fsnotify marks (inotify, fanotify) may be on, for @what
 * ("inotify fd 3, wd 4"): its path by handle or irmap (fhandle_path()); a
 * file under another mount of the tree's own (task/mounts.h's hidden
 * files); a deleted file the task holds by an fd or area. 0, or -1 with
 * one line logged.
 */
int fhandle_mark_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		      unsigned long ino, const struct fhandle *h, const struct opts *o,
		      const char *what, struct fhandle_mark *m, struct stat *st);

#endif
