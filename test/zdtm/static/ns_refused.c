// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in a namespace restore can't make (argument: user, net, cgroup,
 * pidns-child: a child in a pid namespace nested in the tree's, or
 * mnt-child: a child in a mount namespace of its own below the tree's). Not for the static suite (no flavours): test_ns.py checks that
 * criu refuses to dump it, naming the task and the namespace, and that it
 * runs on unharmed and passes.
 */
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static const struct {
	const char *name;
	int flag;
} kinds[] = {
	{ "user", CLONE_NEWUSER },
	{ "mnt", CLONE_NEWNS },
	{ "net", CLONE_NEWNET },
	{ "cgroup", CLONE_NEWCGROUP },
	{ "pidns-child", CLONE_NEWPID },
	{ "mnt-child", CLONE_NEWNS },
};

int main(int argc, char **argv)
{
	const char *what;
	pid_t kid = 0;
	size_t i;

	test_init(argc, argv);
	what = optind < argc ? argv[optind] : "";
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(what, kinds[i].name))
			break;
	if (i == ARRAY_SIZE(kinds))
		fail("unknown namespace kind '%s'", what);
	/* mnt-child: the child makes it, for itself */
	if (strcmp(what, "mnt-child") && unshare(kinds[i].flag))
		fail_errno("unshare(%s)", what);
	if (kinds[i].flag == CLONE_NEWPID || !strcmp(what, "mnt-child")) {
		kid = fork();
		if (kid < 0)
			fail_errno("fork");
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (!strcmp(what, "mnt-child") && unshare(CLONE_NEWNS))
				_exit(1);
			for (;;)
				pause();
		}
	}
	test_ready();
	test_waitsig();
	if (kid && (kill(kid, 0) || kill(kid, SIGKILL) || waitpid(kid, NULL, 0) != kid))
		fail("the child in the nested namespace is gone");
	pass();
}
