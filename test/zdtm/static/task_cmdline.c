// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/self/cmdline and /proc/self/environ read back byte for byte. The
 * runner passes an environment variable with an odd value to make the
 * environment distinctive, and we add one of our own.
 */
#include <stdlib.h>
#include <string.h>

#include "zdtm.h"

static char cmd[65536], cmd2[65536], env[65536], env2[65536];

int main(int argc, char **argv)
{
	ssize_t cl, cl2, el, el2;
	const char *v;

	test_init(argc, argv);
	/* setenv copies into the heap, /proc/self/environ keeps the original */
	setenv("ZDTM_CMDLINE_TEST", "value with = and spaces", 1);
	cl = test_read_file("/proc/self/cmdline", cmd, sizeof(cmd));
	el = test_read_file("/proc/self/environ", env, sizeof(env));
	if (cl <= 0 || el <= 0)
		fail_errno("read cmdline/environ");

	test_ready();
	test_waitsig();

	cl2 = test_read_file("/proc/self/cmdline", cmd2, sizeof(cmd2));
	el2 = test_read_file("/proc/self/environ", env2, sizeof(env2));
	if (cl2 != cl || memcmp(cmd, cmd2, cl))
		fail("/proc/self/cmdline changed (%zd bytes, were %zd)", cl2, cl);
	if (el2 != el || memcmp(env, env2, el))
		fail("/proc/self/environ changed (%zd bytes, were %zd)", el2, el);
	v = getenv("ZDTM_CMDLINE_TEST");
	if (!v || strcmp(v, "value with = and spaces"))
		fail("getenv lost our variable");
	if (strcmp(argv[0] + strlen(argv[0]) - strlen(test_name), test_name))
		fail("argv[0] is %s", argv[0]);
	pass();
}
