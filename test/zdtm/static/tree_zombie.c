// SPDX-License-Identifier: GPL-2.0-only
/*
 * Zombies at two levels: children that exited with 42, 0 and 255, one
 * killed by SIGUSR1 and one by SIGKILL, never reaped. After restore each
 * parent's waitpid(WNOHANG) must give the same wait status it would have
 * given before (see tree_lib.h), and the zombies must still be there until
 * then.
 */
#include "tree_lib.h"

static const struct node nodes[] = {
	/* LIVE(name, parent, before parent's setsid, setsid, pgrp, threads)
	 * ZOMBIE(name, parent, setsid, pgrp, exit code, signal) */
	LIVE("tz-root", -1, 0, 0, KEEP, 0),		/* 0 */
	ZOMBIE("tz-z42", 0, 0, KEEP, 42, 0),		/* 1 */
	ZOMBIE("tz-zusr1", 0, 0, KEEP, 0, SIGUSR1),	/* 2 */
	LIVE("tz-p", 0, 0, 0, KEEP, 0),			/* 3 */
	ZOMBIE("tz-pz7", 3, 0, KEEP, 7, 0),		/* 4 */
	ZOMBIE("tz-pzkill", 3, 0, KEEP, 0, SIGKILL),	/* 5 */
	LIVE("tz-p1", 3, 0, 0, KEEP, 1),		/* 6 */
	ZOMBIE("tz-p1z", 6, 0, KEEP, 255, 0),		/* 7 */
	ZOMBIE("tz-z0", 0, 0, KEEP, 0, 0),		/* 8 */
};

int main(int argc, char **argv)
{
	tree_test(argc, argv, nodes, ARRAY_SIZE(nodes));
}
