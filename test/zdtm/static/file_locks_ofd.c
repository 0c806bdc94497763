// SPDX-License-Identifier: GPL-2.0-only
/*
 * OFD locks (fcntl F_OFD_SETLK) belong to the open file description. One
 * description, shared with a child, holds a write lock and a read lock; a
 * second open of the file holds a read lock on the same bytes. After
 * restore a third open of ours conflicts with the write lock (a POSIX lock
 * of our own would not), shares the read range, and each description shows
 * its locks; the child's exit leaves them, the parent holding the
 * description still.
 */
#include "file_locks_lib.h"
#include "files_lib.h"

static char path[64];
static int a;

static int ofd(int f, int type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	return fcntl(f, F_OFD_SETLK, &fl);
}

static const char *child_check(void)
{
	if (lk_fdinfo_count(a, "OFDLCK ADVISORY  WRITE") != 1)
		return "the shared description does not show its write lock";
	return NULL;
}

static void check_locks(int b)
{
	int c = open(path, O_RDWR);

	if (c < 0)
		fail_errno("open %s", path);
	if (lk_holder(path, F_RDLCK, 5, 1, 1, F_WRLCK) != -1)
		fail("no OFD write lock on [0, 10) for another process");
	if (!ofd(c, F_WRLCK, 0, 10) || errno != EAGAIN)
		fail("a new open of ours could take the write-locked range: %m");
	if (ofd(c, F_RDLCK, 50, 10))
		fail_errno("a read lock beside the two others");
	if (!ofd(c, F_WRLCK, 50, 10) || errno != EAGAIN)
		fail("a new open of ours could write-lock the read-locked range: %m");
	close(c);
	if (lk_fdinfo_count(a, "OFDLCK ADVISORY  WRITE") != 1 ||
	    lk_fdinfo_count(a, "OFDLCK ADVISORY  READ") != 1 ||
	    lk_fdinfo_count(b, "OFDLCK ADVISORY  READ") != 1 || lk_fdinfo_count(b, "WRITE"))
		fail("the descriptions do not show their locks as they were");
}

int main(int argc, char **argv)
{
	pid_t child;
	int b;

	test_init(argc, argv);
	snprintf(path, sizeof(path), "%s.data", test_name);
	a = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	b = open(path, O_RDWR);
	if (a < 0 || b < 0)
		fail_errno("open %s", path);
	if (ofd(a, F_WRLCK, 0, 10) || ofd(a, F_RDLCK, 50, 10) || ofd(b, F_RDLCK, 50, 10))
		fail_errno("F_OFD_SETLK");
	child = fork_checker(NULL, child_check);

	test_ready();
	test_waitsig();

	check_locks(b);
	end_checker(child);
	if (lk_holder(path, F_RDLCK, 5, 1, 1, F_WRLCK) != -1)
		fail("the write lock went with the child");
	pass();
}
