// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in a namespace restore can't make (argument: user, cgroup,
 * pidns-child: a child in a pid namespace nested in the tree's,
 * netns-child: a child in a network namespace of its own below the root's;
 * mnt-join: a child that joined (setns) the mount namespace its sibling
 * made, not its parent's). Not for the static suite (no flavours): test_ns.py checks that
 * criu refuses to dump it, naming the task and the namespace, and that it
 * runs on unharmed and passes.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
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
	{ "mnt-join", CLONE_NEWNS },
};

/* A second child, in the mount namespace of the first (@kid) by setns. */
static void join_child(pid_t kid, pid_t *joiner)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)kid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_errno("open %s", path);
	*joiner = fork();
	if (*joiner < 0)
		fail_errno("fork");
	if (*joiner == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setns(fd, CLONE_NEWNS))
			_exit(1);
		for (;;)
			pause();
	}
	close(fd);
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
	pid_t kid = 0, joiner = 0;
	size_t i;

	test_init(argc, argv);
	what = optind < argc ? argv[optind] : "";
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(what, kinds[i].name))
			break;
	if (i == ARRAY_SIZE(kinds))
		fail("unknown namespace kind '%s'", what);
	if (!strcmp(what, "mnt-join")) {
		ns_child(&kid, kinds[i].flag);
		join_child(kid, &joiner);
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
	if (joiner && (kill(joiner, 0) || kill(joiner, SIGKILL) || waitpid(joiner, NULL, 0) != joiner))
		fail("the child that joined its sibling's namespace is gone");
	pass();
}
