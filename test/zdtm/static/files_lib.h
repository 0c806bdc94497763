/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A child for the tests of files shared between tasks: it sets its part
 * up, waits for SIGTERM (the parent forwards it), checks its part and
 * exits 0, or 1 after saying why in the log. The parent fails when the
 * child did. The pipe used to wait for the child's setup is gone before
 * the parent calls test_ready().
 */
#ifndef FILES_LIB_H
#define FILES_LIB_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

/* @setup runs in the child before the parent goes on; @check after SIGTERM. */
static pid_t fork_checker(void (*setup)(void), const char *(*check)(void))
{
	int sync[2];
	const char *why;
	pid_t pid;
	char c;

	if (pipe(sync))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sync[0]);
		if (setup)
			setup();
		if (write(sync[1], "r", 1) != 1)
			_exit(2);
		close(sync[1]);
		test_waitsig();
		why = check();
		if (why) {
			test_msg("child: FAIL: %s", why);
			_exit(1);
		}
		_exit(0);
	}
	close(sync[1]);
	if (read(sync[0], &c, 1) != 1)
		fail("the child died while setting up");
	close(sync[0]);
	return pid;
}

/* In the parent after SIGTERM: the child checks its part now. */
static void end_checker(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("the child failed (wait status %#x); see the log", status);
}

#endif
