// SPDX-License-Identifier: GPL-2.0-only
/*
 * One seccomp filter, installed with no_new_privs and SECCOMP_FILTER_FLAG_LOG,
 * makes getppid fail with ESTALE and allows everything else. After restore
 * getppid still fails so, other calls work, and the thread is in filter
 * mode with exactly one filter.
 */
#include <sys/prctl.h>

#include "seccomp_lib.h"

int main(int argc, char **argv)
{
	static const int nrs[] = { SYS_getppid };
	const char *why;

	test_init(argc, argv);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail_errno("PR_SET_NO_NEW_PRIVS");
	if (sc_install(nrs, 1, SECCOMP_RET_ERRNO | ESTALE, SECCOMP_FILTER_FLAG_LOG))
		fail_errno("seccomp");
	why = sc_expect("getppid", SYS_getppid, ESTALE);
	if (why)
		fail("before the dump: %s", why);

	test_ready();
	test_waitsig();

	why = sc_expect("getppid", SYS_getppid, ESTALE);
	if (!why)
		why = sc_expect("getpgrp", SYS_getpgrp, 0);
	if (why)
		fail("%s", why);
	if (sc_status("Seccomp") != SECCOMP_MODE_FILTER || sc_status("Seccomp_filters") != 1)
		fail("Seccomp %ld, Seccomp_filters %ld instead of 2 and 1", sc_status("Seccomp"),
		     sc_status("Seccomp_filters"));
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		fail("no_new_privs is not set");
	pass();
}
