// SPDX-License-Identifier: GPL-2.0-only
/*
 * x87 and SSE control state: a non-default x87 control word (rounding down,
 * double precision), a non-default MXCSR (round up, FTZ, DAZ) and three
 * values on the x87 register stack, all across the checkpoint.
 */
#include <string.h>

#include "zdtm.h"

#define CW_IN		0x067f
#define MXCSR_IN	0xdfc0

unsigned short cw_in = CW_IN, cw_out;
unsigned int mxcsr_in = MXCSR_IN, mxcsr_out;
long double st_in[3] = { 1.5L, -3.25L, 123456.0078125L }, st_out[3];

int main(int argc, char **argv)
{
	unsigned short cw_def;
	unsigned int mx_def;
	int i;

	test_init(argc, argv);
	asm volatile("fnstcw %0\n\tstmxcsr %1" : "=m"(cw_def), "=m"(mx_def));
	if (cw_def == CW_IN || mx_def == MXCSR_IN)
		fail("the defaults are already the test values");

	test_ready();

	asm volatile(
		"fldcw cw_in(%%rip)\n\t"
		"ldmxcsr mxcsr_in(%%rip)\n\t"
		"fldt st_in+0(%%rip)\n\t"
		"fldt st_in+16(%%rip)\n\t"
		"fldt st_in+32(%%rip)\n\t"
		"1:\n\t"
		"pause\n\t"
		"cmpl $0, test_sigterm(%%rip)\n\t"
		"je 1b\n\t"
		"fstpt st_out+32(%%rip)\n\t"
		"fstpt st_out+16(%%rip)\n\t"
		"fstpt st_out+0(%%rip)\n\t"
		"fnstcw cw_out(%%rip)\n\t"
		"stmxcsr mxcsr_out(%%rip)\n\t"
		"fldcw %0\n\t"
		"ldmxcsr %1\n\t"
		: : "m"(cw_def), "m"(mx_def) : "memory", "cc", "st", "st(1)", "st(2)");

	if (cw_out != CW_IN)
		fail("x87 control word is %#x, was %#x", cw_out, CW_IN);
	if (mxcsr_out != MXCSR_IN)
		fail("MXCSR is %#x, was %#x", mxcsr_out, MXCSR_IN);
	for (i = 0; i < 3; i++)
		if (memcmp(&st_out[i], &st_in[i], 10))
			fail("x87 register st(%d) changed", 2 - i);
	pass();
}
