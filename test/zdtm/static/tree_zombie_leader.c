// SPDX-License-Identifier: GPL-2.0-only
/*
 * Zombies that led something: one made a session of its own before it
 * exited, one made a process group that two live tasks still belong to
 * (one of them joined it after the leader was dead, one before). The
 * zombies keep their session and group ids, and the live members must be
 * back in the dead leader's group after restore.
 */
#include "tree_lib.h"

static const struct node nodes[] = {
	/* LIVE(name, parent, before parent's setsid, setsid, pgrp, threads)
	 * ZOMBIE(name, parent, setsid, pgrp, exit code, signal) */
	LIVE("tzl-root", -1, 0, 0, KEEP, 0),	/* 0 */
	ZOMBIE("tzl-zsess", 0, 1, KEEP, 3, 0),	/* 1 */
	ZOMBIE("tzl-zgrp", 0, 0, 2, 4, 0),	/* 2 */
	LIVE("tzl-m1", 0, 0, 0, 2, 0),		/* 3 */
	LIVE("tzl-m2", 3, 0, 0, 2, 0),		/* 4 */
};

int main(int argc, char **argv)
{
	tree_test(argc, argv, nodes, ARRAY_SIZE(nodes));
}
