// SPDX-License-Identifier: GPL-2.0-only
/*
 * eventfds: a counter wider than 32 bits (eventfd()'s initial value is
 * not), a semaphore, an empty one, blocking or not. After restore the
 * counter reads back whole, the semaphore gives one at a time exactly as
 * often as it held, and the empty one has nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtm.h"

#define BIG	0x123456789abcULL

int main(int argc, char **argv)
{
	int counter, sem, empty, i;
	uint64_t v = BIG;

	test_init(argc, argv);
	counter = eventfd(0, 0);
	sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	empty = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (counter < 0 || sem < 0 || empty < 0 || write(counter, &v, sizeof(v)) != sizeof(v))
		fail_errno("eventfd");

	test_ready();
	test_waitsig();

	if ((fcntl(counter, F_GETFL) & O_NONBLOCK) || !(fcntl(sem, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	if (read(counter, &v, sizeof(v)) != sizeof(v) || v != BIG)
		fail("the counter reads %#llx, not %#llx", (unsigned long long)v, BIG);
	for (i = 0; i < 3; i++)
		if (read(sem, &v, sizeof(v)) != sizeof(v) || v != 1)
			fail("semaphore read %d gives %llu", i, (unsigned long long)v);
	if (read(sem, &v, sizeof(v)) != -1 || errno != EAGAIN)
		fail("the semaphore held more than 3");
	if (read(empty, &v, sizeof(v)) != -1 || errno != EAGAIN)
		fail("the empty eventfd is not empty");
	v = 2;
	if (write(empty, &v, sizeof(v)) != sizeof(v) || read(empty, &v, sizeof(v)) != sizeof(v) ||
	    v != 2)
		fail("the empty eventfd does not count");
	pass();
}
