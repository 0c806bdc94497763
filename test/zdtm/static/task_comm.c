// SPDX-License-Identifier: GPL-2.0-only
/*
 * The task name set with PR_SET_NAME is kept.
 */
#include <string.h>
#include <sys/prctl.h>

#include "zdtm.h"

#define NAME "zdtm-comm:X 15"

int main(int argc, char **argv)
{
	char name[32] = "", buf[32];

	test_init(argc, argv);
	if (prctl(PR_SET_NAME, NAME))
		fail_errno("PR_SET_NAME");

	test_ready();
	test_waitsig();

	if (prctl(PR_GET_NAME, name))
		fail_errno("PR_GET_NAME");
	if (strcmp(name, NAME))
		fail("comm is '%s', was '%s'", name, NAME);
	if (test_read_file("/proc/self/comm", buf, sizeof(buf)) < 0)
		fail_errno("read comm");
	if (strcmp(buf, NAME "\n"))
		fail("/proc/self/comm is '%s'", buf);
	pass();
}
