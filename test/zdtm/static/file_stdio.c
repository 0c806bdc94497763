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

/*
 * A device node is its device: in a container whose /dev is a tmpfs (the
 * ns flavour) the restored node is a new inode on a new tmpfs.
 */
static int same_file(const struct stat *a, const struct stat *b)
{
	if ((a->st_mode & S_IFMT) != (b->st_mode & S_IFMT))
		return 0;
	if (S_ISCHR(a->st_mode) || S_ISBLK(a->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

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
		if (!same_file(&now, &st[fd]))
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
