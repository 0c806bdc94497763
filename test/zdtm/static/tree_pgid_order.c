// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process groups joined in an order a restore cannot simply follow: a
 * child joins the group of a sibling created after it, and a grandchild
 * joins the group of its uncle, made after the grandchild was born, while
 * the group's leader itself was forked last. Restore must create the
 * groups before their members join them, whatever the order of the pids.
 */
#include "tree_lib.h"

static const struct node nodes[] = {
	/* LIVE(name, parent, before parent's setsid, setsid, pgrp, threads)
	 * ZOMBIE(name, parent, setsid, pgrp, exit code, signal) */
	LIVE("tp-root", -1, 0, 0, KEEP, 0),	/* 0 */
	LIVE("tp-early", 0, 0, 0, 4, 0),	/* 1: joins tp-leader's group */
	LIVE("tp-mid", 0, 0, 0, KEEP, 0),	/* 2 */
	LIVE("tp-mid1", 2, 0, 0, 4, 0),		/* 3: so does its nephew */
	LIVE("tp-leader", 0, 0, 0, 4, 0),	/* 4: forked last, own group */
};

int main(int argc, char **argv)
{
	tree_test(argc, argv, nodes, ARRAY_SIZE(nodes));
}
