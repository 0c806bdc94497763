// SPDX-License-Identifier: GPL-2.0-only
/*
 * A child stopped by SIGSTOP (group stop, as a shell's ^Z leaves a job)
 * next to one that runs, one with a thread. After restore the stopped one
 * must still be stopped (state T), the others running; SIGCONT must wake
 * it (its parent sees WIFCONTINUED) and it then goes on as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static char state_of(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

static void *idle(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

static pid_t spawn(const char *name, int stop, int thread)
{
	sigset_t all, old;
	pthread_t t;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, name);
	if (thread) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&t, NULL, idle, NULL))
			_exit(2);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (stop)
		raise(SIGSTOP);
	test_waitsig();
	_exit(0);
}

int main(int argc, char **argv)
{
	pid_t stopped, stopped_thr, running;
	int status, i;

	test_init(argc, argv);
	stopped = spawn("st-stopped", 1, 0);
	stopped_thr = spawn("st-stopped-thr", 1, 1);
	running = spawn("st-running", 0, 0);
	for (i = 0; i < 2; i++) {
		pid_t pid = i ? stopped_thr : stopped;

		if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status) ||
		    WSTOPSIG(status) != SIGSTOP)
			fail("child %d did not stop (status %#x)", pid, status);
	}

	test_ready();
	test_waitsig();

	if (state_of(stopped) != 'T' || state_of(stopped_thr) != 'T')
		fail("the stopped children are in states %c and %c", state_of(stopped),
		     state_of(stopped_thr));
	if (state_of(running) == 'T')
		fail("the running child is stopped");
	/* nothing to report while they stay stopped */
	if (waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED) != 0)
		fail("a child changed state (status %#x)", status);
	for (i = 0; i < 2; i++) {
		pid_t pid = i ? stopped_thr : stopped;

		kill(pid, SIGCONT);
		if (waitpid(pid, &status, WCONTINUED) != pid || !WIFCONTINUED(status))
			fail("child %d: no WIFCONTINUED after SIGCONT (status %#x)", pid, status);
	}
	for (i = 0; i < 3; i++) {
		pid_t pid = i == 0 ? stopped : i == 1 ? stopped_thr : running;

		kill(pid, SIGTERM);
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				fail_errno("waitpid");
		if (status)
			fail("child %d: wait status %#x", pid, status);
	}
	pass();
}
