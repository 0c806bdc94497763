// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dumped task itself in a group stop: once ready it stops by SIGSTOP
 * (a session leader's group is orphaned: no other stop signal would stop
 * it), with a child stopped by SIGSTOP whose stop it has collected and
 * whose SIGCHLD it has taken (it blocks SIGCHLD). The runner
 * (test_stop.py) checks the task's own stop from outside and continues it.
 *
 * After SIGTERM the child must still be stopped, with nothing to report
 * and no SIGCHLD pending, and must wake up on SIGCONT.
 */
#include "stop_lib.h"

int main(int argc, char **argv)
{
	pid_t kid;

	test_init(argc, argv);
	stop_block_sigchld();
	kid = stop_spawn("sr-stopped", SIGSTOP, 0, 0);
	stop_take_sigchld(kid, SIGSTOP);
	stop_collect(kid, SIGSTOP);

	test_ready();
	raise(SIGSTOP);
	test_waitsig();

	if (test_proc_state(kid) != 'T')
		fail("the stopped child is in state %c", test_proc_state(kid));
	stop_check_no_report();
	if (stop_sigchld_pending())
		fail("a SIGCHLD is pending");
	stop_finish_child(kid, 1);
	pass();
}
