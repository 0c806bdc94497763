// SPDX-License-Identifier: GPL-2.0-only
/*
 * A filter that kills the process (SECCOMP_RET_KILL_PROCESS) on system
 * calls criu makes a dumped task run: sigaltstack (the first injected
 * call), getitimer, gettid and tgkill (the executor's end), munmap (the
 * scratch area at dump, the trampoline at restore). The test itself never
 * makes them. That the task survives dump and restore shows criu's calls
 * are not filtered (PTRACE_O_SUSPEND_SECCOMP); afterwards a child forked
 * for each of them is killed by SIGSYS: the filter is still there.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "seccomp_lib.h"

static const int nrs[] = { SYS_sigaltstack, SYS_getitimer, SYS_gettid, SYS_tgkill,
			   SYS_munmap };

int main(int argc, char **argv)
{
	int status;
	size_t i;
	pid_t pid;

	test_init(argc, argv);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail_errno("PR_SET_NO_NEW_PRIVS");
	if (sc_install(nrs, ARRAY_SIZE(nrs), SECCOMP_RET_KILL_PROCESS, 0))
		fail_errno("seccomp");

	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		pid = fork();
		if (pid < 0)
			fail_errno("fork");
		if (pid == 0) {
			syscall(nrs[i], 0, 0, 0);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			fail_errno("waitpid");
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
			fail("system call %d did not kill a child (wait status %#x)", nrs[i],
			     status);
	}
	if (sc_status("Seccomp_filters") != 1)
		fail("%ld filters instead of 1", sc_status("Seccomp_filters"));
	pass();
}
