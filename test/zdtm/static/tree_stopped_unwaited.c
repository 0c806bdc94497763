// SPDX-License-Identifier: GPL-2.0-only
/*
 * Children in a group stop whose parent has not collected the stops yet:
 * one stopped by SIGSTOP, one by SIGTSTP and one with a thread by SIGTTIN
 * (the last two in process groups of their own). The parent has a SIGCHLD
 * handler, which has run for every stop: no SIGCHLD is pending.
 *
 * After restore the handler must not run again (a new stop would send a
 * new SIGCHLD), and waitpid(WUNTRACED | WNOHANG) must report each stop,
 * with its signal, exactly once.
 */
#include "stop_lib.h"

static volatile sig_atomic_t sigchlds;

static void on_sigchld(int sig)
{
	sigchlds++;
}

static const struct {
	const char *name;
	int sig, own_pgrp, thread;
} kids[] = {
	{ "su-sigstop", SIGSTOP, 0, 0 },
	{ "su-sigtstp", SIGTSTP, 1, 0 },
	{ "su-sigttin-thr", SIGTTIN, 1, 1 },
};

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART };
	pid_t pids[ARRAY_SIZE(kids)];
	sigset_t old, wait;
	sig_atomic_t seen;
	unsigned int i;

	test_init(argc, argv);
	if (sigaction(SIGCHLD, &sa, NULL))
		fail_errno("sigaction");
	stop_block_sigchld();
	sigprocmask(SIG_BLOCK, NULL, &old);
	wait = old;
	sigdelset(&wait, SIGCHLD);
	/* one at a time: each stop's SIGCHLD is handled before the next */
	for (i = 0; i < ARRAY_SIZE(kids); i++) {
		seen = sigchlds;
		pids[i] = stop_spawn(kids[i].name, kids[i].sig, kids[i].own_pgrp,
				     kids[i].thread);
		while (sigchlds == seen)
			sigsuspend(&wait);
		if (test_proc_state(pids[i]) != 'T')
			fail("child %d is in state %c", pids[i], test_proc_state(pids[i]));
	}
	sigprocmask(SIG_SETMASK, &wait, NULL);
	seen = sigchlds;

	test_ready();
	test_waitsig();

	if (sigchlds != seen)
		fail("%d SIGCHLD(s) since the children stopped", sigchlds - seen);
	for (i = 0; i < ARRAY_SIZE(kids); i++)
		if (test_proc_state(pids[i]) != 'T')
			fail("child %d is in state %c", pids[i], test_proc_state(pids[i]));
	for (i = 0; i < ARRAY_SIZE(kids); i++)
		stop_check_report_once(pids[i], kids[i].sig);
	stop_check_no_report();
	for (i = 0; i < ARRAY_SIZE(kids); i++)
		stop_finish_child(pids[i], 1);
	pass();
}
