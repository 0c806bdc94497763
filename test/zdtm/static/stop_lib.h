/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Children in a group stop, for the tree_stopped*.c and stop_root.c tests:
 * spawned stopped by a given signal, watched through what their parent
 * sees of them (the wait report, the SIGCHLD), continued and reaped.
 */
#ifndef STOP_LIB_H
#define STOP_LIB_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

static void *stop_idle(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/*
 * A child named @name that stops itself with @sig (0: it runs), in a
 * process group of its own if @own_pgrp (SIGTSTP, SIGTTIN and SIGTTOU
 * stop only a task whose group is not orphaned: its parent's is another
 * group of the same session), with one more thread (every signal blocked)
 * if @thread. Once continued it waits for SIGTERM and exits 0.
 */
static inline pid_t stop_spawn(const char *name, int sig, int own_pgrp, int thread)
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
	if (own_pgrp && setpgid(0, 0))
		_exit(2);
	sigfillset(&all);
	if (thread) {
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&t, NULL, stop_idle, NULL))
			_exit(2);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	/* nothing of the parent's mask (SIGCHLD) in the way of its own stop */
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (sig)
		raise(sig);
	test_waitsig();
	_exit(0);
}

static inline void stop_block_sigchld(void)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
}

/* With SIGCHLD blocked: takes the SIGCHLD of @pid's stop by @sig from the queue. */
static inline void stop_take_sigchld(pid_t pid, int sig)
{
	sigset_t chld;
	siginfo_t si;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		if (sigwaitinfo(&chld, &si) < 0) {
			if (errno == EINTR)
				continue;
			fail_errno("sigwaitinfo");
		}
		if (si.si_pid == pid && si.si_code == CLD_STOPPED && si.si_status == sig)
			return;
		test_msg("SIGCHLD from %d code %d status %d while waiting for %d",
			 si.si_pid, si.si_code, si.si_status, pid);
	}
}

/* Takes the report of @pid's stop by @sig (waitpid WUNTRACED). */
static inline void stop_collect(pid_t pid, int sig)
{
	int status;

	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != sig)
		fail("child %d did not stop by signal %d (status %#x)", pid, sig, status);
}

/* The report of @pid's stop by @sig is there, once (WNOHANG). */
static inline void stop_check_report_once(pid_t pid, int sig)
{
	int status = 0;
	pid_t r;

	r = waitpid(pid, &status, WUNTRACED | WNOHANG);
	if (r != pid || !WIFSTOPPED(status) || WSTOPSIG(status) != sig)
		fail("child %d: waitpid(WUNTRACED) gives %d, status %#x, not its stop "
		     "by signal %d", pid, r, status, sig);
	r = waitpid(pid, &status, WUNTRACED | WNOHANG);
	if (r != 0)
		fail("child %d: its stop is reported twice (%d, status %#x)", pid, r, status);
}

/* No child has anything to report. */
static inline void stop_check_no_report(void)
{
	int status = 0;
	pid_t r;

	r = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
	if (r != 0)
		fail("child %d changed state (status %#x)", r, status);
}

static inline int stop_sigchld_pending(void)
{
	sigset_t set;

	if (sigpending(&set))
		fail_errno("sigpending");
	return sigismember(&set, SIGCHLD);
}

/* SIGCONT if stopped (its parent then sees WIFCONTINUED), SIGTERM, reap. */
static inline void stop_finish_child(pid_t pid, int stopped)
{
	int status;

	if (stopped) {
		kill(pid, SIGCONT);
		if (waitpid(pid, &status, WCONTINUED) != pid || !WIFCONTINUED(status))
			fail("child %d: no WIFCONTINUED after SIGCONT (status %#x)", pid,
			     status);
	}
	kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (status)
		fail("child %d: wait status %#x", pid, status);
}

#endif
