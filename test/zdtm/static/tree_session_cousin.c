// SPDX-License-Identifier: GPL-2.0-only
/*
 * An orphan in a session whose leader still lives, but is no sibling of
 * it: the root (a child subreaper) forked tsc-x, which forked tsc-lead,
 * which made a session of its own and forked a go-between that forked
 * tsc-cousin and exited; the root adopted tsc-cousin. No task that could
 * fork it at restore is both in that session and a child of the root, so
 * criu refuses the dump, naming tsc-cousin (test_tree_errors.py).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static int ready_pipe[2];

static void __attribute__((noreturn)) idle(const char *name, pid_t parent)
{
	prctl(PR_SET_NAME, name);
	while (getppid() != parent)
		usleep(1000);
	pid_t self = getpid();

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(ready_pipe[1], &self, sizeof(self)) != sizeof(self))
		_exit(5);
	close(ready_pipe[1]);
	close(ready_pipe[0]);
	test_waitsig();
	_exit(0);
}

static void __attribute__((noreturn)) leader(pid_t root)
{
	pid_t mid;

	if (setsid() < 0)
		_exit(2);
	mid = fork();
	if (mid == 0) {
		if (fork() == 0)
			idle("tsc-cousin", root);
		_exit(0);
	}
	if (mid < 0 || waitpid(mid, NULL, 0) != mid)
		_exit(3);
	idle("tsc-lead", getppid());
}

/* Not yet a zombie (nor gone)? */
static int is_alive(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] != 'Z';
}

int main(int argc, char **argv)
{
	pid_t root = getpid(), x, pids[3];
	int status, i;

	test_init(argc, argv);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fail_errno("PR_SET_CHILD_SUBREAPER");
	if (pipe2(ready_pipe, O_CLOEXEC))
		fail_errno("pipe");
	x = fork();
	if (x < 0)
		fail_errno("fork");
	if (x == 0) {
		if (fork() == 0)
			leader(root);
		idle("tsc-x", root);
	}
	close(ready_pipe[1]);
	for (i = 0; i < 3; i++)
		if (read(ready_pipe[0], &pids[i], sizeof(pid_t)) != sizeof(pid_t))
			fail("a task died while setting up");
	close(ready_pipe[0]);

	test_ready();
	test_waitsig();

	/* tsc-x last: tsc-lead would die of its parent death signal */
	for (i = 0; i < 3; i++) {
		if (pids[i] == x)
			continue;
		kill(pids[i], SIGTERM);
		while (is_alive(pids[i]))
			usleep(1000);
	}
	kill(x, SIGTERM);
	while (waitpid(-1, &status, 0) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("a child ended with status %#x", status);
	pass();
}
