// SPDX-License-Identifier: GPL-2.0-only
/*
 * no_new_privs stays set.
 */
#include <string.h>
#include <sys/prctl.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char buf[16];

	test_init(argc, argv);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail_errno("PR_SET_NO_NEW_PRIVS");

	test_ready();
	test_waitsig();

	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		fail("no_new_privs is not set");
	if (!test_status_field("NoNewPrivs", buf, sizeof(buf)) || strcmp(buf, "1"))
		fail("NoNewPrivs in status is '%s'", buf);
	pass();
}
