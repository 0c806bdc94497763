/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_KIND_H
#define CRIU_PARTS_FILE_KIND_H

/*
 * Kinds of open files. The fd table (file.c) finds the open file
 * descriptions of the whole tree, each once however many fds of however
 * many tasks use it, and lets its kind save and reopen what is special
 * about it; one kind per file (file-reg.c, file-timerfd.c, file-pipe.c,
 * ...), each a FILE_KIND() line of the registry (images/kinds.def), which
 * file.c makes its table of.
 *
 * On restore a description that one task uses is opened by that task
 * itself; one that several tasks share, and every end of a pipe or a
 * socket pair (whose other end may be elsewhere), is opened by criu before
 * the first fork and inherited by every task, which dup()s it into place.
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

#include "core/opts.h"
#include "parts/part.h"
#include "fdinfo.pb-c.h"

/* One fd of a task being dumped (frozen). */
struct fd_dump {
	pid_t pid;			/* criu's view: /proc, kcmp, pidfd */
	pid_t ns_pid;			/* the task's own, for what images keep */
	int fd;
	const char *link;		/* what /proc/PID/fd/FD points to */
	const struct stat *st;		/* stat() of it */
	const char *fdinfo;		/* the /proc/PID/fdinfo/FD text */
	int mnt_id;			/* the mount it is on (fdinfo) */
	const struct opts *opts;	/* the dump's options */
};

/* A saved description and the first fd that showed it (for messages). */
struct file_ref {
	FileDesc *d;
	pid_t pid;
	int fd;
	int shared;		/* seen in another task too: criu opens it at restore */
};

struct file_kind {
	const char *name;
	FileKind kind;
	/* dump: is this description mine? */
	int (*match)(const char *link, const struct stat *st);
	/*
	 * dump, instead of match, for kinds that the link and stat() can't
	 * tell apart (every socket is "socket:[INO]"): asked about fd @fd of
	 * task @pid itself, before the kinds that match by the link
	 */
	int (*match_fd)(pid_t pid, int fd, const char *link, const struct stat *st);
	/* dump, before anything is changed: refuse what can't be saved, saying why */
	int (*check)(const struct fd_dump *f);
	/*
	 * dump: fill what is special about a new description; kind, path,
	 * flags and pos are filled. @same_inode is an earlier description
	 * on the same inode (another end or open of the same pipe), or NULL.
	 */
	int (*dump)(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d);
	/* dump: the saved description @d is behind fd @f (of this or another task) too */
	int (*dump_more)(const struct fd_dump *f, FileDesc *d);
	/* dump, once every task is saved: check what spans tasks (all descriptions) */
	int (*dump_done)(struct file_ref *files, size_t n);
	/* frees what dump allocated in @d */
	void (*free)(FileDesc *d);
	/*
	 * dump, once the tree's fate is known (part.h's after_dump): @runs,
	 * it goes on; else it was killed after a complete checkpoint
	 */
	void (*after_dump)(int runs);

	/* restore: check the image's description before anything is created */
	int (*validate)(struct rst_ctx *rc, pid_t pid, const FileDesc *d);
	/* restore: open it, in task @pid or, when it is shared, in criu; returns the fd */
	int (*open)(struct rst_ctx *rc, pid_t pid, const FileDesc *d);
	/*
	 * restore: kinds whose descriptions come in objects (a pipe's ends,
	 * a socket pair) open them in criu, all of one object at once. @object
	 * names the object; @open_object fills @fds[i] for @d[i]. @data is
	 * the kind's slot, in the file part's context, for what it keeps
	 * during the restore (NULL at first). @in_tree: opened by the tree's
	 * root in its namespaces (its user namespace's, rc->idmap, name the
	 * ids there), not by criu.
	 */
	uint64_t (*object)(const FileDesc *d);
	int (*open_object)(struct rst_ctx *rc, int in_tree, void **data, FileDesc **d, int n,
			   int *fds);
	/*
	 * restore, in the one task the description names (epoll's owner), once
	 * all of its fds are in place; @fd is one of them on this description
	 */
	pid_t (*installer)(const FileDesc *d);
	int (*install)(pid_t pid, int fd, const FileDesc *d);
	/*
	 * restore, in criu, once every namespace of the tree is filled (the
	 * network namespace's links and routes): what can't be done before,
	 * from outside, on fd @fd of task @pid (@host_pid in criu's view),
	 * once per description, by the first task that holds it
	 */
	int (*finish)(struct rst_ctx *rc, pid_t pid, pid_t host_pid, int fd, const FileDesc *d);
	/* restore, in criu, every task restored, right before the tree is let go */
	int (*resume)(void);
	/*
	 * restore, in the installer when it is a session leader, right after
	 * its setsid() and before it forks its session (a terminal is inherited
	 * at fork only); @fd is criu's inherited copy of the description
	 */
	int (*session)(pid_t pid, int fd, const FileDesc *d);
	/* criu opens it in a helper inside the tree's time namespace */
	int task_clocks;
	/*
	 * a description several tasks share is not opened by criu before the
	 * first fork (what it names does not exist yet: a pidfd's process):
	 * each task's open makes or fetches it itself
	 */
	int each_task;
	/*
	 * a file reopened by its path: the dump keeps its mount (mnt_id), and
	 * the restore opens it there (mnt_open()), in the tree's mount
	 * namespace when it has one (a shared one: by the tree's root, once
	 * it made the namespace, instead of criu)
	 */
	int on_mount;
	/*
	 * restore: this object is made in the tree's namespaces (a bound unix
	 * socket: its path and abstract name): when the tree has a mount
	 * namespace of its own, opened by the tree's root once it made it,
	 * like the files of on_mount
	 */
	int (*in_tree_ns)(const FileDesc *d);
	/*
	 * restore, in criu, at the end: with @failed, undo what open_object
	 * left outside the tree (socket files); either way free *@data
	 */
	void (*restored)(void **data, int failed);
};

/* Flags that describe how a file was opened, not what open() should do now. */
#define OPEN_STATUS_MASK	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
				 O_DIRECT | O_NOATIME | O_LARGEFILE | O_PATH | O_DIRECTORY)

#endif
