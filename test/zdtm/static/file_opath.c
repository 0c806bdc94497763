// SPDX-License-Identifier: GPL-2.0-only
/*
 * O_PATH fds: on a regular file, on a directory, and on a deleted file (a
 * ghost). After the restore each is still O_PATH (reads fail with EBADF),
 * on the same file (inode of the file and the directory, contents of the
 * ghost read through a reopening of /proc/self/fd), the ghost still
 * deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

static void check_opath(int fd, const char *what)
{
	char c;

	if (!(fcntl(fd, F_GETFL) & O_PATH))
		fail("%s is no longer O_PATH (flags %#x)", what, fcntl(fd, F_GETFL));
	if (read(fd, &c, 1) != -1 || errno != EBADF)
		fail("%s can be read: not an O_PATH fd", what);
}

static void check_same(int fd, const struct stat *was, const char *what)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_ino != was->st_ino || st.st_dev != was->st_dev)
		fail("%s is not on the file it was on", what);
}

int main(int argc, char **argv)
{
	char name[64], ghost[64], proc[64], buf[8];
	struct stat file_st, dir_st, st;
	int file, dir, gh, tmp;

	test_init(argc, argv);
	snprintf(name, sizeof(name), "%s.file", test_name);
	snprintf(ghost, sizeof(ghost), "%s.ghost", test_name);
	tmp = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (tmp < 0 || close(tmp))
		fail_errno("create %s", name);
	tmp = open(ghost, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (tmp < 0 || write(tmp, "ghost", 5) != 5 || close(tmp))
		fail_errno("create %s", ghost);
	file = open(name, O_PATH);
	dir = open(".", O_PATH | O_DIRECTORY);
	gh = open(ghost, O_PATH);
	if (file < 0 || dir < 0 || gh < 0 || fstat(file, &file_st) || fstat(dir, &dir_st))
		fail_errno("open O_PATH");
	if (unlink(ghost))
		fail_errno("unlink");

	test_ready();
	test_waitsig();

	check_opath(file, "the file's fd");
	check_opath(dir, "the directory's fd");
	check_opath(gh, "the deleted file's fd");
	check_same(file, &file_st, "the file's fd");
	check_same(dir, &dir_st, "the directory's fd");
	if (fstat(gh, &st) || st.st_nlink || st.st_size != 5)
		fail("the deleted file has %lu links, %ld bytes", (unsigned long)st.st_nlink,
		     (long)st.st_size);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", gh);
	tmp = open(proc, O_RDONLY);
	if (tmp < 0 || read(tmp, buf, 5) != 5 || memcmp(buf, "ghost", 5))
		fail("the deleted file's contents are not read through its fd");
	unlink(name);
	pass();
}
