// SPDX-License-Identifier: GPL-2.0-only
/*
 * The current directory (a directory created by the test, with a space in
 * its name) is the same directory after restore.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char dir[PATH_MAX], want[PATH_MAX], now[PATH_MAX];
	struct stat st, st2;

	test_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s.dir with space", test_name);
	if (mkdir(dir, 0700) && access(dir, F_OK))
		fail_errno("mkdir %s", dir);
	if (chdir(dir))
		fail_errno("chdir %s", dir);
	if (!getcwd(want, sizeof(want)) || stat(".", &st))
		fail_errno("getcwd");

	test_ready();
	test_waitsig();

	if (!getcwd(now, sizeof(now)))
		fail_errno("getcwd");
	if (strcmp(now, want))
		fail("cwd is %s, was %s", now, want);
	if (stat(".", &st2))
		fail_errno("stat .");
	if (st.st_dev != st2.st_dev || st.st_ino != st2.st_ino)
		fail("cwd is another directory with the same name");
	pass();
}
