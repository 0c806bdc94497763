// SPDX-License-Identifier: GPL-2.0-only
/*
 * For test_seccomp.py: a filter installed with a listener
 * (SECCOMP_FILTER_FLAG_NEW_LISTENER) that answers SECCOMP_RET_USER_NOTIF
 * for getsid. The listener fd is closed again, as a supervisor outside
 * would hold it; criu can't tell and must refuse the dump. The task then
 * checks that getsid fails with ENOSYS, as it does with no listener.
 */
#include <sys/prctl.h>

#include "seccomp_lib.h"

int main(int argc, char **argv)
{
	static const int nrs[] = { SYS_getsid };
	const char *why;
	long fd;

	test_init(argc, argv);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail_errno("PR_SET_NO_NEW_PRIVS");
	fd = sc_install(nrs, 1, SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (fd < 0)
		fail_errno("seccomp with a listener");
	close(fd);

	test_ready();
	test_waitsig();

	why = sc_expect("getsid", SYS_getsid, ENOSYS);
	if (why)
		fail("%s", why);
	pass();
}
