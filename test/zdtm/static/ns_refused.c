// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in a namespace restore can't make (argument: user, cgroup,
 * pidns-child: a child in a pid namespace nested in the tree's,
 * netns-child: a child in a network namespace of its own below the root's;
 * mnt-before: a grandchild in criu's mount namespace, forked by its parent
 * before that one unshared its own). Not for the static suite (no flavours): test_ns.py checks that
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
	{ "netns-child", CLONE_NEWNET },
	{ "cgroup", CLONE_NEWCGROUP },
	{ "pidns-child", CLONE_NEWPID },
	{ "mnt-before", CLONE_NEWNS },
};

/*
 * A child that forks a grandchild, then unshares a mount namespace: the
 * grandchild stays in the one it was born in, which its parent left.
 */
static void before_child(pid_t *kid)
{
	int p[2];
	char c;

	if (pipe(p))
		fail_errno("pipe");
	*kid = fork();
	if (*kid < 0)
		fail_errno("fork");
	if (*kid == 0) {
		pid_t g;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		g = fork();
		if (g == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(p[0]);
			close(p[1]);
			for (;;)
				pause();
		}
		if (g < 0 || unshare(CLONE_NEWNS))
			_exit(1);
		close(p[0]);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 0)
		fail("the child said something");
	close(p[0]);
}

/* A child that unshares a namespace of its own, ready once it did. */
static void ns_child(pid_t *kid, int flag)
{
	int p[2];
	char c;

	if (pipe(p))
		fail_errno("pipe");
	*kid = fork();
	if (*kid < 0)
		fail_errno("fork");
	if (*kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(flag))
			_exit(1);
		close(p[0]);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 0)
		fail("the child said something");
	close(p[0]);
}

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
	if (!strcmp(what, "mnt-before")) {
		before_child(&kid);
	} else if (strstr(what, "-child") && kinds[i].flag != CLONE_NEWPID) {
		ns_child(&kid, kinds[i].flag);
	} else if (unshare(kinds[i].flag)) {
		fail_errno("unshare(%s)", what);
	}
	if (kinds[i].flag == CLONE_NEWPID) {
		kid = fork();
		if (kid < 0)
			fail_errno("fork");
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
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
