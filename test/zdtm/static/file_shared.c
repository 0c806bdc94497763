// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several fds on one open file description (dup, dup2, F_DUPFD_CLOEXEC)
 * and a second, independent open of the same file. After restore an offset
 * change through one shared fd is visible through the others, flag changes
 * too, and the independent one is not affected.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	int a, b, c, d, other;
	char name[64];

	test_init(argc, argv);
	snprintf(name, sizeof(name), "%s.data", test_name);
	a = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (a < 0)
		fail_errno("open");
	if (ftruncate(a, 100000))
		fail_errno("ftruncate");
	b = dup(a);
	c = dup2(a, 42);
	d = fcntl(a, F_DUPFD_CLOEXEC, 100);
	other = open(name, O_RDWR);
	if (b < 0 || c != 42 || d < 100 || other < 0)
		fail_errno("dup");
	lseek(b, 1234, SEEK_SET);
	lseek(other, 777, SEEK_SET);

	test_ready();
	test_waitsig();

	if (lseek(a, 0, SEEK_CUR) != 1234 || lseek(c, 0, SEEK_CUR) != 1234 ||
	    lseek(d, 0, SEEK_CUR) != 1234)
		fail("shared offsets differ: %ld %ld %ld", (long)lseek(a, 0, SEEK_CUR),
		     (long)lseek(c, 0, SEEK_CUR), (long)lseek(d, 0, SEEK_CUR));
	if (lseek(other, 0, SEEK_CUR) != 777)
		fail("independent offset is %ld", (long)lseek(other, 0, SEEK_CUR));
	if (fcntl(d, F_GETFD) != FD_CLOEXEC || fcntl(c, F_GETFD) != 0)
		fail("FD_CLOEXEC flags wrong");

	/* an offset change through one is seen through all the others */
	lseek(c, 5555, SEEK_SET);
	if (lseek(a, 0, SEEK_CUR) != 5555 || lseek(b, 0, SEEK_CUR) != 5555 ||
	    lseek(d, 0, SEEK_CUR) != 5555)
		fail("the fds no longer share one file description");
	if (lseek(other, 0, SEEK_CUR) != 777)
		fail("the independent fd shares the description");
	if (write(b, "x", 1) != 1 || lseek(d, 0, SEEK_CUR) != 5556)
		fail("a write through one does not move the others");
	/* so do status flag changes */
	fcntl(a, F_SETFL, O_APPEND);
	if (!(fcntl(c, F_GETFL) & O_APPEND) || (fcntl(other, F_GETFL) & O_APPEND))
		fail("status flags are not shared as they were");
	pass();
}
