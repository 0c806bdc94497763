/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_PTY_H
#define CRIU_TASK_PTY_H

/*
 * Pty pairs at a given index, for the restore. The kernel hands out the
 * lowest free index of a devpts instance: a pair at N is made by opening
 * its ptmx until N comes (the extra masters are closed again).
 *
 * A container binds a pty's slave (/dev/console): the mounts make that
 * pair before the files are restored, and keep its master here, where
 * the tty kind takes it instead of making another.
 */

/*
 * A master of index @index: @open_ptmx(@arg) opens a new master of the
 * instance (an fd, or -1 logged), as often as it takes. -1 logged.
 */
int pty_open_index(int (*open_ptmx)(const void *arg), const void *arg, unsigned int index);
/* Keeps @master (index @index) for pty_take(); -1 when one is kept already. */
int pty_keep(unsigned int index, int master);
/* The master kept for @index, now the caller's, or -1. */
int pty_take(unsigned int index);

/*
 * New masters of ptys whose master was outside the tree
 * (--orphan-pts-master), on their way to the driver, which hands them to
 * the RPC client: whoever made the pair (criu, or the tree's root in the
 * tree's namespaces) sends it with pty_hand_over() over a socket made
 * before the fork, criu takes them with pty_handed_over().
 */
int pty_handover_open(void);		/* idempotent; -1 logged */
int pty_hand_over(int master);		/* the caller keeps @master; -1 logged */
int pty_handed_over(void);		/* the next master, or -1: none left */
void pty_handover_close(void);

#endif
