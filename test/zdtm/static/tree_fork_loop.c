// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tasks that fork all the time, so that the dump meets children being
 * born, running, exiting and being reaped at every level: the root and its
 * child fl-forker each fork short-lived children in a loop; every other
 * child forks a grandchild of its own and waits for it. Every child exits
 * with a code derived from its round, and its parent checks the wait
 * status it gets: a child restored half-way must still finish its round,
 * and one restored as a zombie must give its status.
 *
 * The root and fl-forker are listed in tree.stable: the runner compares
 * only them; after SIGTERM both stop, check they are as they were, and
 * that nothing but what they forked was ever their child.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

static unsigned long rounds;

static int code_of(unsigned long round, int level)
{
	return (round * 7 + level * 3) % 120 + 1;
}

/* a child of round @round at @level: exits with its code, maybe via a grandchild */
static void __attribute__((noreturn)) child(unsigned long round, int level)
{
	int status;
	pid_t pid;

	if (level == 0 && round % 2) {
		pid = fork();
		if (pid < 0)
			_exit(125);
		if (pid == 0)
			child(round, 1);
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				_exit(126);
		if (status != W_EXITCODE(code_of(round, 1), 0))
			_exit(127);
	}
	_exit(code_of(round, level));
}

/* One round: fork, wait, check. Returns 0 or fails. */
static void round_trip(const char *who)
{
	unsigned long r = rounds++;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		fail_errno("%s: fork", who);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child(r, 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail_errno("%s: waitpid %d", who, pid);
	if (status != W_EXITCODE(code_of(r, 0), 0))
		fail("%s: round %lu: child %d has wait status %#x, not %#x", who, r, pid,
		     status, W_EXITCODE(code_of(r, 0), 0));
}

static void loop(const char *who)
{
	struct timespec pause = { 0, 200 * 1000 };

	while (!test_sigterm) {
		round_trip(who);
		nanosleep(&pause, NULL);
	}
}

static void no_more_children(const char *who)
{
	int status;
	pid_t pid = waitpid(-1, &status, WNOHANG);

	if (pid > 0)
		fail("%s: an unexpected child %d with wait status %#x", who, pid, status);
	if (pid == 0)
		fail("%s: an unexpected live child", who);
}

int main(int argc, char **argv)
{
	pid_t root = getpid(), forker, ppid, pgid;
	unsigned long before;
	int status;
	FILE *f;

	test_init(argc, argv);
	forker = fork();
	if (forker < 0)
		fail_errno("fork");
	if (forker == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "fl-forker");
		ppid = getppid();
		pgid = getpgid(0);
		loop("fl-forker");
		before = rounds;
		round_trip("fl-forker");
		if (getppid() != ppid || getpgid(0) != pgid || getsid(0) != root)
			fail("fl-forker: ppid %d pgid %d sid %d", getppid(), getpgid(0),
			     getsid(0));
		no_more_children("fl-forker");
		test_msg("fl-forker: %lu rounds", before);
		_exit(0);
	}
	f = fopen("tree.stable", "w");
	if (!f || fprintf(f, "%d\n%d\n", root, forker) < 0 || fclose(f))
		fail_errno("tree.stable");
	/* let both loops turn a while before we are dumped */
	while (rounds < 50)
		round_trip("root");

	test_ready();
	loop("root");
	before = rounds;
	round_trip("root");
	kill(forker, SIGTERM);
	while (waitpid(forker, &status, 0) < 0)
		if (errno != EINTR)
			fail_errno("waitpid fl-forker");
	if (status)
		fail("fl-forker: wait status %#x; see the log", status);
	no_more_children("root");
	test_msg("root: %lu rounds", before);
	pass();
}
