// SPDX-License-Identifier: GPL-2.0-only
/*
 * The skip protocol itself, for test_protocol.py (no flavours here): the
 * argument says how the program ends.
 *   before  skip() before test_ready(): "SKIP: ..." and TEST_EXIT_SKIP
 *   after   skip() after SIGTERM, i.e. once criu may have been at the
 *           task: the lib turns it into a failure
 *   bare    exit status TEST_EXIT_SKIP without a verdict: not a skip
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	const char *how;

	test_init(argc, argv);
	how = optind < argc ? argv[optind] : "";
	if (!strcmp(how, "before"))
		skip("the feature is missing here (%s)", how);
	if (!strcmp(how, "bare"))
		exit(TEST_EXIT_SKIP);
	if (strcmp(how, "after"))
		fail("unknown way to end '%s'", how);
	test_ready();
	test_waitsig();
	skip("the feature went away (%s)", how);
}
