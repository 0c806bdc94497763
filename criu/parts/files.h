/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILES_H
#define CRIU_PARTS_FILES_H

/*
 * Kinds of open files. The fd table (fdinfo.c) finds the kind of each
 * open file description and lets it save and reopen what is special about
 * it; one kind per file (file-reg in fdinfo.c, timerfd.c, ...), listed in
 * the table in fdinfo.c.
 */
#include <sys/stat.h>

#include "parts/part.h"
#include "fdinfo.pb-c.h"

struct file_kind {
	const char *name;
	FileKind kind;
	/* dump: is this description mine? @link is the /proc/PID/fd link */
	int (*match)(const char *link, const struct stat *st);
	/* dump: fill what is special; kind, path, flags and pos are filled */
	int (*dump)(pid_t pid, int fd, const char *fdinfo, FileDesc *d);
	/* restore: check the image's description before anything is created */
	int (*validate)(pid_t pid, const FileDesc *d);
	/* restore, in the new task: open it; returns the fd */
	int (*open)(struct rtask *t, const FileDesc *d);
	/* frees what dump allocated in @d */
	void (*free)(FileDesc *d);
};

/* Kinds that live in their own file. */
extern const struct file_kind fk_timerfd;

#endif
