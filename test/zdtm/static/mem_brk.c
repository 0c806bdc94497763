// SPDX-License-Identifier: GPL-2.0-only
/*
 * The heap grown with sbrk() to an unaligned break: the break, the heap's
 * start and its content must be the same after restore, and the heap must
 * still grow.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "zdtm.h"

#define GROW (5 * 4096 * 7 + 1234)

static int stat_field(int n, unsigned long *val)
{
	char buf[4096], *p;
	int i;

	if (test_read_file("/proc/self/stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	p += 2;	/* field 3 */
	for (i = 3; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	return sscanf(p, "%lu", val) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long start_brk, start_brk2;
	unsigned char *base, *end, *now, *more;
	size_t i;

	test_init(argc, argv);

	if (stat_field(47, &start_brk))
		fail("cannot read start_brk");
	base = sbrk(0);
	if (sbrk(GROW) == (void *)-1)
		fail_errno("sbrk");
	end = sbrk(0);
	if (end != base + GROW)
		fail("sbrk moved the break to %p, not %p", end, base + GROW);
	for (i = 0; i < GROW; i++)
		base[i] = (unsigned char)test_pattern(11, i);

	test_ready();
	test_waitsig();

	now = sbrk(0);
	if (now != end)
		fail("brk is %p, was %p", now, end);
	if (stat_field(47, &start_brk2))
		fail("cannot read start_brk");
	if (start_brk2 != start_brk)
		fail("start_brk is %#lx, was %#lx", start_brk2, start_brk);
	for (i = 0; i < GROW; i++)
		if (base[i] != (unsigned char)test_pattern(11, i))
			fail("heap byte %zu differs", i);

	more = sbrk(3 * 4096);
	if (more == (void *)-1)
		fail_errno("sbrk after restore");
	if (more != end)
		fail("sbrk returned %p, not the old break %p", more, end);
	for (i = 0; i < 3 * 4096; i++)
		if (more[i])
			fail("new heap memory is not zero");
	memset(more, 0x5a, 3 * 4096);
	pass();
}
