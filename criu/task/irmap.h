/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_IRMAP_H
#define CRIU_TASK_IRMAP_H

/*
 * The inode map (CRIU's "irmap"): a path for an inode that fsnotify marks
 * name only by device and number, found by walking directories, where
 * its file handle gives none: a filesystem whose handles can't be opened
 * (overlayfs without nfs_export, the root of most containers), one with
 * no handles at all, or any with --force-irmap. The directories named
 * with --irmap-scan-path are walked first, then the mounts of the inode's
 * filesystem from their roots, as the task sees them, never leaving the
 * filesystem nor following a symlink, up to IRMAP_MAX_ENTRIES entries.
 * What one walk saw is kept for the rest of the dump.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include "proc/proc.h"

#define IRMAP_MAX_ENTRIES	200000

struct irmap_hints {
	const char *const *paths;	/* --irmap-scan-path, as the task sees them */
	int nr;
};

/*
 * The path task @pid sees for inode @ino of device @sdev (fdinfo's
 * encoding), @ms being its mounts; its lstat() in @st. NULL when none was
 * found: *@scanned says how many entries were looked at (for the caller's
 * message). -1 in *@scanned: an error, logged.
 */
char *irmap_path(pid_t pid, const struct proc_mounts *ms, unsigned int sdev,
		 unsigned long ino, const struct irmap_hints *hints, struct stat *st,
		 long *scanned);

/* Forget what the walks saw (the dump's end). */
void irmap_forget(void);

#endif
