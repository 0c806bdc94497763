// SPDX-License-Identifier: GPL-2.0-only
/*
 * The standard streams: stdin, stdout and stderr are the same files with
 * the same flags and (for the log) still writable after restore.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	struct stat st[3], now;
	int fl[3], fd;
	off_t pos1;

	test_init(argc, argv);
	for (fd = 0; fd < 3; fd++) {
		if (fstat(fd, &st[fd]))
			fail_errno("fstat %d", fd);
		fl[fd] = fcntl(fd, F_GETFL);
	}
	test_msg("before the checkpoint");

	test_ready();
	test_waitsig();

	for (fd = 0; fd < 3; fd++) {
		if (fstat(fd, &now))
			fail_errno("fd %d is gone", fd);
		if (now.st_dev != st[fd].st_dev || now.st_ino != st[fd].st_ino ||
		    now.st_rdev != st[fd].st_rdev)
			fail("fd %d is another file", fd);
		if (fcntl(fd, F_GETFL) != fl[fd])
			fail("fd %d: flags %#o, were %#o", fd, fcntl(fd, F_GETFL), fl[fd]);
	}
	pos1 = lseek(1, 0, SEEK_END);
	test_msg("after the restore");
	if (S_ISREG(st[1].st_mode) && lseek(1, 0, SEEK_END) <= pos1)
		fail("writes to stdout do not land in the log");
	pass();
}
