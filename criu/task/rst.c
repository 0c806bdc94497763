// SPDX-License-Identifier: GPL-2.0
/*
 * criu's own fds in the tasks it restores (task/rst.h): which numbers they
 * may take, and how they go again. The task's own fd numbers are known
 * from the loads (t->task_fds, sorted) before the first fork; everything
 * here stays out of their way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "task/rst.h"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Whether sorted @fds holds @fd. */
static int fd_in(const int *fds, int nr, int fd)
{
	return nr && bsearch(&fd, fds, nr, sizeof(int), cmp_int);
}

/* ------------------------------------------------ criu, before the fork */

int rst_fds_reserve(struct rst_ctx *rc, const struct rtask *t)
{
	int *n = xrealloc(rc->all_fds, (rc->nr_all_fds + t->nr_task_fds + 1) * sizeof(int));

	if (!n)
		return -1;
	rc->all_fds = n;
	memcpy(n + rc->nr_all_fds, t->task_fds, t->nr_task_fds * sizeof(int));
	rc->nr_all_fds += t->nr_task_fds;
	return 0;
}

int rst_fds_start(struct rst_ctx *rc)
{
	struct rlimit rl;
	int top;

	qsort(rc->all_fds, rc->nr_all_fds, sizeof(int), cmp_int);
	top = rc->nr_all_fds ? rc->all_fds[rc->nr_all_fds - 1] : 0;
	/* as many fds as a task may have (limit_fds()): fs.nr_open where criu may */
	rl.rlim_cur = rl.rlim_max = limits_get()->nofile;
	if (setrlimit(RLIMIT_NOFILE, &rl) && !getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	rc->next_inherit = max(top + 1, 16);
	return 0;
}

/*
 * A number no task uses and criu has free: above every task's fds while
 * the limit allows, else in a gap below (a task may use the highest fd).
 */
static int inherit_slot(struct rst_ctx *rc)
{
	struct rlimit rl;
	int to, wrapped = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	for (to = rc->next_inherit;; to++) {
		if ((rlim_t)to >= rl.rlim_cur) {
			if (wrapped++)
				return -1;
			to = 3;
		}
		if (!fd_in(rc->all_fds, rc->nr_all_fds, to) && fcntl(to, F_GETFD) < 0)
			break;
	}
	rc->next_inherit = to + 1;
	return to;
}

int rst_inherit_fd(struct rst_ctx *rc, int fd)
{
	int to;

	if (fd < 0)
		return -1;
	if (xgrow(rc->inherited, rc->nr_inherited))
		goto err;
	to = inherit_slot(rc);
	if (to < 0) {
		pr_err("No fd number is free in every task for criu's fd %d", fd);
		goto err;
	}
	if (dup3(fd, to, O_CLOEXEC) < 0) {
		pr_perror("Can't move fd %d to %d for the new tasks", fd, to);
		goto err;
	}
	close(fd);
	rc->inherited[rc->nr_inherited++] = to;
	return to;
err:
	close(fd);
	return -1;
}

void rst_release(struct rst_ctx *rc)
{
	int i;

	for (i = 0; i < rc->nr_inherited; i++)
		close(rc->inherited[i]);
	free(rc->inherited);
	rc->inherited = NULL;
	rc->nr_inherited = 0;
	free(rc->all_fds);
	rc->all_fds = NULL;
	rc->nr_all_fds = 0;
	free(rc->objects);
	rc->objects = NULL;
	rc->nr_objects = 0;
}

/* ------------------------------------------------ objects of the tree */

static struct rst_object *find_object(const struct rst_ctx *rc, uint64_t dev, uint64_t ino)
{
	int i;

	for (i = 0; i < rc->nr_objects; i++)
		if (rc->objects[i].dev == dev && rc->objects[i].ino == ino)
			return &rc->objects[i];
	return NULL;
}

int rst_object_name(struct rst_ctx *rc, uint64_t dev, uint64_t ino)
{
	struct rst_object *o = xpush(rc->objects, rc->nr_objects);

	if (!o)
		return -1;
	*o = (struct rst_object){ dev, ino, -1 };
	return 0;
}

int rst_object_known(const struct rst_ctx *rc, uint64_t dev, uint64_t ino)
{
	return !!find_object(rc, dev, ino);
}

int rst_object_set(struct rst_ctx *rc, uint64_t dev, uint64_t ino, int fd)
{
	struct rst_object *o = find_object(rc, dev, ino);

	if (!o) {
		close(fd);
		pr_err("Object %lu:%lu was never named", dev, ino);
		return -1;
	}
	o->fd = rst_inherit_fd(rc, fd);
	return o->fd;
}

int rst_object_fd(const struct rst_ctx *rc, uint64_t dev, uint64_t ino)
{
	struct rst_object *o = find_object(rc, dev, ino);

	if (!o || o->fd < 0) {
		pr_err("No object %lu:%lu in the images criu made for the tree", dev, ino);
		return -1;
	}
	return o->fd;
}

/* ------------------------------------------------------ in the new task */

int rst_park_fd(struct rtask *t, int fd)
{
	int slot;

	if (fd < 0)
		return -1;
	while (t->next_slot >= 0 &&
	       (fd_in(t->task_fds, t->nr_task_fds, t->next_slot) ||
		fcntl(t->next_slot, F_GETFD) >= 0))
		t->next_slot--;
	slot = t->next_slot--;
	if (slot < 0 || dup3(fd, slot, O_CLOEXEC) < 0) {
		pr_perror("Task %d: no free fd slot for criu's fd %d", t->pid, fd);
		close(fd);
		return -1;
	}
	close(fd);
	return slot;
}

static int keep_private(struct rtask *t, int fd)
{
	int *slot = xpush(t->priv_fds, t->nr_priv_fds);

	if (!slot)
		return -1;
	*slot = fd;
	return 0;
}

int rst_private_fd(struct rtask *t, int fd)
{
	fd = rst_park_fd(t, fd);
	if (fd >= 0 && keep_private(t, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* criu's private fds, sorted; NULL (logged) on error. */
static int *sorted_private(struct rtask *t)
{
	int *p = xmalloc(t->nr_priv_fds * sizeof(int) + 1);

	if (!p)
		return NULL;
	memcpy(p, t->priv_fds, t->nr_priv_fds * sizeof(int));
	qsort(p, t->nr_priv_fds, sizeof(int), cmp_int);
	return p;
}

/* Close every fd but criu's private ones. */
static int close_others(struct rtask *t)
{
	int *keep, i, from = 0;

	keep = sorted_private(t);
	if (!keep)
		return -1;
	for (i = 0; i <= t->nr_priv_fds; i++) {
		unsigned int to = i < t->nr_priv_fds ? (unsigned int)keep[i] - 1 : ~0U;

		if ((i == t->nr_priv_fds || keep[i] > from) &&
		    syscall(SYS_close_range, from, to, 0)) {
			pr_perror("Task %d: can't close criu's fds", t->pid);
			free(keep);
			return -1;
		}
		if (i < t->nr_priv_fds)
			from = keep[i] + 1;
	}
	free(keep);
	return 0;
}

/*
 * criu's fds go to the top of what the task may use: raise the soft
 * RLIMIT_NOFILE to the hard one (allowed without privileges; the rlimit
 * part puts the task's own back later) and start a little above the
 * task's highest fd, so the fd table does not grow to the hard limit.
 */
static int init_slots(struct rst_ctx *rc, struct rtask *t)
{
	struct rlimit rl;
	int top = t->nr_task_fds ? t->task_fds[t->nr_task_fds - 1] : 0, i;

	/* the fds every task inherits sit above the tasks' own: above them too */
	for (i = 0; i < rc->nr_inherited; i++)
		top = max(top, rc->inherited[i]);

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	t->next_slot = min((uint64_t)max(top + 128, 1024), (uint64_t)rl.rlim_max - 1);
	return 0;
}

int rst_fds_enter(struct rst_ctx *rc, struct rtask *t)
{
	int i, lfd;

	if (init_slots(rc, t))
		return -1;
	for (i = 0; i < rc->nr_inherited; i++)
		if (keep_private(t, rc->inherited[i]))
			return -1;
	rc->dirfd = rst_private_fd(t, rc->dirfd);
	if (rc->dirfd < 0)
		return -1;
	if (log_fd() >= 0) {
		lfd = rst_private_fd(t, dup(log_fd()));
		if (lfd >= 0)
			log_set_fd(lfd);
	}
	return close_others(t);
}

/* Whether the task has an fd above @lo and below @hi. */
static int task_uses_between(struct rtask *t, int lo, int hi)
{
	int l = 0, h = t->nr_task_fds;

	while (l < h) {		/* the first of the task's fds above @lo */
		int mid = (l + h) / 2;

		if (t->task_fds[mid] <= lo)
			l = mid + 1;
		else
			h = mid;
	}
	return l < t->nr_task_fds && t->task_fds[l] < hi;
}

/*
 * criu's fds go last: one close_range() for each run of them that no fd of
 * the task's interrupts (the numbers between are free), at most one more
 * than the task has fds; in the common case one above all of them.
 */
int rst_fds_queue_closes(struct rtask *t, struct batch *b)
{
	int *p, i, j, ret = 0;

	if (!t->nr_priv_fds)
		return 0;
	p = sorted_private(t);
	if (!p)
		return -1;
	for (i = 0; i < t->nr_priv_fds && !ret; i = j) {
		for (j = i + 1; j < t->nr_priv_fds && !task_uses_between(t, p[j - 1], p[j]); j++)
			;
		ret = BATCH(b, "close_range of criu's fds", __NR_close_range, p[i],
			    p[j - 1], 0) < 0;
	}
	free(p);
	return ret ? -1 : 0;
}
