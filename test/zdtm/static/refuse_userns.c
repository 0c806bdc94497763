// SPDX-License-Identifier: GPL-2.0-only
/*
 * For test_tree_errors.py: a tree with a child in a user namespace of its
 * own (unshare(CLONE_NEWUSER)), which criu cannot restore and must refuse
 * to dump, naming the child. Run through the normal flavours it would only
 * be refused, so its .desc lists none. After SIGTERM the child checks it
 * is still in its own user namespace and the root that the child is well.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static ino_t userns(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	return stat(path, &st) ? 0 : st.st_ino;
}

int main(int argc, char **argv)
{
	int status, pfd[2];
	ino_t ours;
	pid_t kid;
	char c;

	test_init(argc, argv);
	ours = userns(getpid());
	if (pipe2(pfd, O_CLOEXEC))
		fail_errno("pipe");
	kid = fork();
	if (kid < 0)
		fail_errno("fork");
	if (kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "ru-child");
		if (unshare(CLONE_NEWUSER))
			_exit(2);
		close(pfd[0]);
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		close(pfd[1]);
		test_waitsig();
		_exit(userns(getpid()) != ours ? 0 : 4);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		fail("the child could not make a user namespace");
	close(pfd[0]);
	if (userns(kid) == ours)
		fail("the child is in our user namespace");

	test_ready();
	test_waitsig();

	kill(kid, SIGTERM);
	while (waitpid(kid, &status, 0) < 0)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (status)
		fail("the child: wait status %#x", status);
	pass();
}
