/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_RST_H
#define CRIU_TASK_RST_H

/*
 * What the restore offers the parts, below them: where criu's own fds go
 * in the tasks it restores (rst.c). The parts ask through these, with the
 * context, and never call the driver; the driver sets the service up and
 * takes it down around the parts' hooks (the rst_fds_* calls).
 *
 * criu's fds in a new task must never take a number the task had: the
 * task's own fds are put back where they were. Those criu opens before
 * the first fork, for the whole tree (a shared memory object, a pipe of
 * two tasks), go above every fd of every task; every task inherits them.
 * Those a new task opens for itself (a page store, the file an area
 * maps) go to the top of its own fd table. All of them are closed by the
 * task's batch, after the last step that uses them.
 */
#include "task/batch.h"
#include "task/task.h"

/* In criu before the fork: move @fd where every task will find it; returns the new fd. */
int rst_inherit_fd(struct rst_ctx *rc, int fd);
/*
 * In the new task: move @fd to a slot the task does not use, at the top of
 * the fd table. A private fd stays until the batch closes it; a parked one
 * is the caller's to close. Both close @fd, and take -1 (failing then).
 */
int rst_private_fd(struct rtask *t, int fd);
int rst_park_fd(struct rtask *t, int fd);

/* ------------------------------------------------------ for the driver */

/* In criu, after the loads: @t's fds are the task's, out of criu's way. */
int rst_fds_reserve(struct rst_ctx *rc, const struct rtask *t);
/* In criu, once every task's fds are reserved, before the prefork hooks. */
int rst_fds_start(struct rst_ctx *rc);
/*
 * In the new task, before the child hooks: criu's fds (those inherited,
 * the images directory, the log) move out of the task's way, every other
 * fd is closed.
 */
int rst_fds_enter(struct rst_ctx *rc, struct rtask *t);
/* In the new task: its batch's last steps close criu's fds. */
int rst_fds_queue_closes(struct rtask *t, struct batch *b);
/* In criu: closes the inherited fds, frees what the service kept. */
void rst_fds_release(struct rst_ctx *rc);

#endif
