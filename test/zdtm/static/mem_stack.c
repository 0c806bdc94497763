// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deep recursion holding values in every frame (about 2 MiB of stack) at
 * the checkpoint; unwinding afterwards checks every frame.
 */
#include <string.h>

#include "zdtm.h"

#define DEPTH	2000
#define WORDS	128	/* 1 KiB per frame */

static int __attribute__((noinline)) dive(int level)
{
	volatile unsigned long long vals[WORDS];
	int i, bad;

	for (i = 0; i < WORDS; i++)
		vals[i] = test_pattern(level, i);

	if (level + 1 < DEPTH) {
		bad = dive(level + 1);
	} else {
		test_ready();
		test_waitsig();
		bad = 0;
	}
	for (i = 0; i < WORDS; i++)
		if (vals[i] != test_pattern(level, i))
			return level + 1;
	return bad;
}

int main(int argc, char **argv)
{
	int bad;

	test_init(argc, argv);
	bad = dive(0);
	if (bad)
		fail("stack frame at depth %d lost its values", bad - 1);
	pass();
}
