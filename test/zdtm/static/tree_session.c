// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tree four levels deep with sessions and process groups: children in
 * the root's session and group; a group of its own (ts-c) joined by a
 * sibling (ts-d) and by a grandchild of another branch (ts-a1b); a child
 * that made its own session (ts-b) after forking a child that stayed in
 * the old one (ts-b0), with a group of its own inside (ts-b1, joined by its
 * sibling ts-b2); tasks with threads at two levels. Each task checks its
 * ppid, pgid, sid, name and threads after SIGTERM (see tree_lib.h).
 */
#include "tree_lib.h"

static const struct node nodes[] = {
	/* LIVE(name, parent, before parent's setsid, setsid, pgrp, threads)
	 * ZOMBIE(name, parent, setsid, pgrp, exit code, signal) */
	LIVE("ts-root", -1, 0, 0, KEEP, 0),	/* 0 */
	LIVE("ts-a", 0, 0, 0, KEEP, 0),		/* 1 */
	LIVE("ts-a1", 1, 0, 0, KEEP, 0),	/* 2 */
	LIVE("ts-a1a", 2, 0, 0, KEEP, 0),	/* 3 */
	LIVE("ts-c", 0, 0, 0, 4, 0),		/* 4 */
	LIVE("ts-c1", 4, 0, 0, KEEP, 0),	/* 5 */
	LIVE("ts-d", 0, 0, 0, 4, 0),		/* 6 */
	LIVE("ts-b", 0, 0, 1, KEEP, 0),		/* 7 */
	LIVE("ts-b1", 7, 0, 0, 8, 0),		/* 8 */
	LIVE("ts-b1a", 8, 0, 0, KEEP, 0),	/* 9 */
	LIVE("ts-b2", 7, 0, 0, 8, 0),		/* 10 */
	LIVE("ts-b3", 7, 0, 0, KEEP, 0),	/* 11 */
	LIVE("ts-b0", 7, 1, 0, KEEP, 0),	/* 12 */
	LIVE("ts-a1b", 2, 0, 0, 4, 0),		/* 13 */
	LIVE("ts-thr", 0, 0, 0, KEEP, 2),	/* 14 */
	LIVE("ts-b1t", 8, 0, 0, KEEP, 3),	/* 15 */
};

int main(int argc, char **argv)
{
	tree_test(argc, argv, nodes, ARRAY_SIZE(nodes));
}
