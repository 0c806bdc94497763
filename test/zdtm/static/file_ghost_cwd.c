// SPDX-License-Identifier: GPL-2.0-only
/*
 * A working directory that was removed (a ghost cwd): the test changes
 * into a directory of mode 0751 and removes it. After the restore the cwd
 * must still be a removed directory (no link, /proc/self/cwd "PATH
 * (deleted)"), with its mode, in which nothing can be created, and the
 * directory must not be back in its parent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char cwd[PATH_MAX], dir[PATH_MAX + 64], want[PATH_MAX + 128], shown[PATH_MAX + 128];
	struct stat st;
	ssize_t n;

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	snprintf(dir, sizeof(dir), "%s/%s.cwd", cwd, test_name);
	snprintf(want, sizeof(want), "%s (deleted)", dir);
	if (mkdir(dir, 0700) || chmod(dir, 0751) || chdir(dir) || rmdir(dir))
		fail_errno("mkdir, chdir, rmdir %s", dir);

	test_ready();
	test_waitsig();

	n = readlink("/proc/self/cwd", shown, sizeof(shown) - 1);
	if (n < 0)
		fail_errno("readlink /proc/self/cwd");
	shown[n] = '\0';
	if (strcmp(shown, want))
		fail("the cwd is '%s', not '%s'", shown, want);
	if (stat(".", &st) || !S_ISDIR(st.st_mode) || st.st_nlink || (st.st_mode & 07777) != 0751)
		fail("the cwd: mode %o, %lu links", st.st_mode, (unsigned long)st.st_nlink);
	if (open("file", O_WRONLY | O_CREAT, 0600) >= 0 || errno != ENOENT)
		fail("a file could be created in the removed cwd");
	if (!access(dir, F_OK))
		fail("%s is back", dir);
	pass();
}
