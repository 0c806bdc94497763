/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_MOUNTS_H
#define CRIU_TASK_MOUNTS_H

/*
 * Where the files a task names are: what the part of the mount namespace
 * (parts/ns-mnt.c) offers the parts that save and reopen files, working
 * directories and mappings by their path (file-reg, file-pipe's FIFOs,
 * fs, mm, the fd table). Parts never call each other, so they meet here,
 * below them: the mount part offers its service (mounts_offer(), in its
 * first hooks of a dump and of a restore), the others ask through the
 * functions below. With none offered (a build or a run without the mount
 * part's state) every file is where its path says, as when the tree has
 * no mount namespace of its own.
 */
#include <stdint.h>
#include <sys/types.h>

struct mounts_service {
	int (*dump_reaches)(pid_t pid, uint64_t mnt_id, const char *what);
	int (*dump_hidden)(pid_t pid, uint64_t mnt_id, const char *path, unsigned int flags);
	int (*open)(pid_t pid, uint64_t mnt_id, const char *path, int flags);
	int (*open_hidden)(pid_t pid, uint32_t n, const char *path);
	int (*tree_has_ns)(void);
	int (*maker_of)(uint64_t mnt_id);
};

/* The mount part: answer the questions below from now on. */
void mounts_offer(const struct mounts_service *s);

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
/*
 * Restore: the task (its pid in the images) that makes the nested mount
 * namespace mount @mnt_id is in, who opens the files the tree shares on
 * it; 0 when the mount is the root's namespace's, criu's, or unknown.
 */
int mnt_maker_of(uint64_t mnt_id);

#endif
