/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TREE_FREEZE_H
#define CRIU_TREE_FREEZE_H

#include <sys/types.h>

/*
 * --freeze-cgroup (freeze.c): the dump driver freezes the tree with its
 * cgroup's freezer, seizes every thread that is frozen without waiting,
 * thaws, collects the stops; at the end the cgroup is left as it was.
 */
/* Freezes cgroup directory @path and waits until it is; -1 logged. */
int freezer_freeze(const char *path);
/* @tid was frozen by it: it can't clone or fork until thawed. */
int freezer_holds(pid_t tid);
/* Thaws what freezer_freeze() froze (once every frozen thread is seized). */
int freezer_thaw(void);
/*
 * The cgroup as it was before the dump: frozen again (while criu still
 * holds the tree) if it was, else thawed. -1 logged.
 */
int freezer_end(void);
void freezer_release(void);

#endif
