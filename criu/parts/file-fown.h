/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_FOWN_H
#define CRIU_PARTS_FILE_FOWN_H

/*
 * Who gets an open file's signals (F_SETOWN_EX, F_SETSIG) and O_ASYNC, for
 * any kind of file: the fd table (file.c) asks at dump for each new
 * description, and at restore queues the calls in the batch of the task
 * that installs the description first, when every task of the tree exists.
 */
#include <fcntl.h>

#include "parts/file-kind.h"

/* Whether @pid (criu's view) is the tree's root @root or one of its descendants. */
int file_in_tree(pid_t pid, pid_t root);

/* What the task answered about one of its fds. */
struct fown_seen {
	int idx;		/* the F_GETSIG entry of the batch; F_GETOWN_EX's follows */
	uint64_t own;		/* where F_GETOWN_EX writes, in the task */
	struct f_owner_ex o;	/* pid in the task's own pid namespace */
	int sig;
	int known;		/* 0: the fd takes no fcntl() (O_PATH): no owner */
};

/* dump, in prepare: queue the questions about the task's fd @fd */
int file_fown_ask(struct batch *b, int fd, struct fown_seen *s);
/* dump, once the batch ran: read its answers */
void file_fown_answer(struct batch *b, struct fown_seen *s);
/* dump: fills d->fown where an owner, a signal or O_ASYNC is set; @flags from fdinfo */
int file_fown_dump(const struct fd_dump *f, unsigned int flags, const struct fown_seen *s,
		   FileDesc *d);
void file_fown_free(FileDesc *d);
/* restore: 0 when the image's owner is one criu can set */
int file_fown_valid(const FileDesc *d);
/* restore: in the task, the calls that set it again on @fd */
int file_fown_queue(struct batch *b, int fd, const FileDesc *d);
#define FOWN_BATCH_ENTRIES	3
#define FOWN_BATCH_DATA		32

#endif
