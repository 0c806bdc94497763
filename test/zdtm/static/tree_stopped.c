// SPDX-License-Identifier: GPL-2.0-only
/*
 * Children in a group stop whose parent has collected the stops
 * (waitpid WUNTRACED), as a shell does with a ^Z'ed job: one stopped by
 * SIGSTOP, one with a thread stopped by SIGTSTP (in a process group of its
 * own), next to one that runs. The parent blocks SIGCHLD; the first stop's
 * SIGCHLD is taken, the second's is left pending.
 *
 * After restore the stopped ones must still be stopped (state T), the
 * other running; there must be nothing to report (a new stop would be),
 * exactly the one SIGCHLD pending, from the SIGTSTP child; SIGCONT must
 * wake them (the parent sees WIFCONTINUED) and they go on as before.
 */
#include "stop_lib.h"

int main(int argc, char **argv)
{
	pid_t stopped, stopped_thr, running;
	struct timespec zero = { 0, 0 };
	sigset_t chld;
	siginfo_t si;

	test_init(argc, argv);
	stop_block_sigchld();
	stopped = stop_spawn("st-stopped", SIGSTOP, 0, 0);
	stop_take_sigchld(stopped, SIGSTOP);
	stop_collect(stopped, SIGSTOP);
	running = stop_spawn("st-running", 0, 0, 0);
	stopped_thr = stop_spawn("st-stopped-thr", SIGTSTP, 1, 1);
	stop_collect(stopped_thr, SIGTSTP);
	/* its SIGCHLD follows the report: wait for it to be there */
	while (!stop_sigchld_pending())
		usleep(1000);

	test_ready();
	test_waitsig();

	if (test_proc_state(stopped) != 'T' || test_proc_state(stopped_thr) != 'T')
		fail("the stopped children are in states %c and %c", test_proc_state(stopped),
		     test_proc_state(stopped_thr));
	if (test_proc_state(running) == 'T')
		fail("the running child is stopped");
	stop_check_no_report();
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigtimedwait(&chld, &si, &zero) != SIGCHLD)
		fail("the pending SIGCHLD is gone");
	if (si.si_pid != stopped_thr || si.si_code != CLD_STOPPED || si.si_status != SIGTSTP)
		fail("the pending SIGCHLD is from %d (code %d, status %d), not the stop "
		     "of %d", si.si_pid, si.si_code, si.si_status, stopped_thr);
	if (stop_sigchld_pending())
		fail("a second SIGCHLD is pending");
	stop_finish_child(stopped, 1);
	stop_finish_child(stopped_thr, 1);
	stop_finish_child(running, 0);
	pass();
}
