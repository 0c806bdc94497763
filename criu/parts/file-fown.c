// SPDX-License-Identifier: GPL-2.0
/*
 * The owner of an open file's signals: the process, thread or process
 * group that gets SIGIO (or the signal F_SETSIG chose) when I/O is ready
 * on a file with O_ASYNC, SIGURG for a socket's urgent data, a lease
 * break... It belongs to the open file description, like the status flags.
 *
 * Neither fdinfo nor anything else in /proc shows it: the task itself is
 * asked (F_GETSIG, F_GETOWN_EX) in the batch the dump runs in it anyway,
 * two entries per fd, and answers with the owner as its own pid namespace
 * numbers it, as the image keeps it. Any file may have an owner, set
 * before O_ASYNC is: every fd is asked. The owner must be of the tree.
 *
 * The restore sets it again in the batch of the task that installs the
 * description first: by then every task of the tree exists, as the kernel
 * wants of an owner. The kernel keeps the credentials of whoever set the
 * owner, for its permission check when it signals: criu's, still root
 * then, so the signals reach the owner as they did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-fown.h"

/* what F_SETFL changes besides O_ASYNC, as open() set it */
#define SETFL_FLAGS	(O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME)

int file_in_tree(pid_t pid, pid_t root)
{
	struct proc_stat st;
	int depth;

	for (depth = 0; pid > 0 && depth < 1 << 22; depth++) {
		if (pid == root)
			return 1;
		if (proc_read_stat(pid, 0, &st))
			return 0;
		pid = st.ppid;
	}
	return 0;
}

/*
 * Whether the owner, as the task numbers it, is the tree's: every process
 * of a pid namespace of the tree's own is (its init is the root); else it
 * is the root or a descendant, as criu sees it. -1 said when it is not.
 */
static int owner_in_tree(const struct fd_dump *f, const struct f_owner_ex *o)
{
	static const char *const what[] = { "thread", "process", "process group" };
	struct proc_status st;
	pid_t leader = o->pid;

	if (f->pid != f->ns_pid)
		return 0;
	if (o->type == F_OWNER_TID && !proc_read_status(o->pid, &st)) {
		leader = st.tgid;
		proc_status_free(&st);
	}
	if (file_in_tree(leader, f->opts->pid))
		return 0;
	pr_err("Task %d: fd %d (%s) sends its signals to %s %d, which is outside the dumped "
	       "tree", f->pid, f->fd, f->link, what[o->type % 3], o->pid);
	return -1;
}

int file_fown_ask(struct batch *b, int fd, struct fown_seen *s)
{
	memset(s, 0, sizeof(*s));
	s->own = batch_put(b, NULL, sizeof(struct f_owner_ex));
	s->idx = BATCH(b, "F_GETSIG", __NR_fcntl | SC_MAY_FAIL, fd, F_GETSIG);
	if (!s->own || s->idx < 0 ||
	    BATCH(b, "F_GETOWN_EX", __NR_fcntl | SC_MAY_FAIL, fd, F_GETOWN_EX, s->own) < 0)
		return -1;
	return 0;
}

void file_fown_answer(struct batch *b, struct fown_seen *s)
{
	int64_t sig = batch_entry(b, s->idx)->ret, own = batch_entry(b, s->idx + 1)->ret;

	s->known = sig >= 0 && own == 0;
	if (!s->known)
		return;
	s->sig = sig;
	memcpy(&s->o, batch_local(b, s->own), sizeof(s->o));
}

int file_fown_dump(const struct fd_dump *f, unsigned int flags, const struct fown_seen *s,
		   FileDesc *d)
{
	int async = !!(flags & O_ASYNC);
	FownEntry *e;

	if (!s->known || (!s->o.pid && !s->sig && !async))
		return 0;
	if (s->o.pid && owner_in_tree(f, &s->o))
		return -1;
	e = xmalloc(sizeof(*e));
	if (!e)
		return -1;
	fown_entry__init(e);
	e->pid_type = s->o.type;
	e->pid = s->o.pid;
	e->signum = s->sig;
	e->async = async;
	d->fown = e;
	pr_debug("Task %d: fd %d signals owner %d (type %d), signal %d%s", f->pid, f->fd,
		 e->pid, e->pid_type, e->signum, async ? ", O_ASYNC" : "");
	return 0;
}

void file_fown_free(FileDesc *d)
{
	free(d->fown);
	d->fown = NULL;
}

int file_fown_valid(const FileDesc *d)
{
	const FownEntry *e = d->fown;

	return !e || (e->pid_type <= F_OWNER_PGRP && e->pid <= INT32_MAX && e->signum < 65);
}

int file_fown_queue(struct batch *b, int fd, const FileDesc *d)
{
	const FownEntry *e = d->fown;
	struct f_owner_ex own = { .type = e->pid_type, .pid = e->pid };
	char desc[SC_DESC_LEN];
	uint64_t at;

	if (e->pid) {
		snprintf(desc, sizeof(desc), "F_SETOWN_EX %d of fd %d", own.pid, fd);
		at = batch_put(b, &own, sizeof(own));
		if (!at || BATCH(b, desc, __NR_fcntl, fd, F_SETOWN_EX, at) < 0)
			return -1;
	}
	snprintf(desc, sizeof(desc), "F_SETSIG %u of fd %d", e->signum, fd);
	if (e->signum && BATCH(b, desc, __NR_fcntl, fd, F_SETSIG, e->signum) < 0)
		return -1;
	snprintf(desc, sizeof(desc), "O_ASYNC on fd %d", fd);
	if (e->async &&
	    BATCH(b, desc, __NR_fcntl, fd, F_SETFL, (d->flags & SETFL_FLAGS) | O_ASYNC) < 0)
		return -1;
	return 0;
}
