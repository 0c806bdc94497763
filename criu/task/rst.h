/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_RST_H
#define CRIU_TASK_RST_H

/*
 * What the restore offers the parts, below them (rst.c): where criu's own
 * fds go in the tasks it restores, and the objects criu makes for the
 * whole tree before the first fork. The parts ask through these, with the
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

/*
 * Objects criu makes for the whole tree before the first fork, such as
 * shared memory, named by the dev/ino they had at the dump, where the
 * areas and fds that use them recorded it. The part that restores them
 * names each before any task's load (rst_object_name, in load_tree), so
 * that loads can refuse a reference to none (rst_object_known), and gives
 * each its fd in its prefork (rst_object_set: the fd is inherited as with
 * rst_inherit_fd); the others take that fd (rst_object_fd, -1 logged).
 */
int rst_object_name(struct rst_ctx *rc, uint64_t dev, uint64_t ino);
int rst_object_known(const struct rst_ctx *rc, uint64_t dev, uint64_t ino);
int rst_object_set(struct rst_ctx *rc, uint64_t dev, uint64_t ino, int fd);
int rst_object_fd(const struct rst_ctx *rc, uint64_t dev, uint64_t ino);

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
/* In criu: closes the inherited fds, frees what the services kept. */
void rst_release(struct rst_ctx *rc);

#endif
