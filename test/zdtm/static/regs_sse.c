// SPDX-License-Identifier: GPL-2.0-only
/*
 * SSE registers xmm0-15 hold patterns across the checkpoint (loaded and
 * stored by one asm block that spins until SIGTERM in between).
 */
#include <string.h>

#include "zdtm.h"

#define NREGS 16
#define WIDTH 16

unsigned char vin[NREGS][WIDTH] __attribute__((aligned(64)));
unsigned char vout[NREGS][WIDTH] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
	int i, j;

	test_init(argc, argv);
	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			vin[i][j] = (unsigned char)test_pattern(0x5e + i, j);

	test_ready();

	asm volatile(
		"movdqu vin+0(%%rip), %%xmm0\n\t"
		"movdqu vin+16(%%rip), %%xmm1\n\t"
		"movdqu vin+32(%%rip), %%xmm2\n\t"
		"movdqu vin+48(%%rip), %%xmm3\n\t"
		"movdqu vin+64(%%rip), %%xmm4\n\t"
		"movdqu vin+80(%%rip), %%xmm5\n\t"
		"movdqu vin+96(%%rip), %%xmm6\n\t"
		"movdqu vin+112(%%rip), %%xmm7\n\t"
		"movdqu vin+128(%%rip), %%xmm8\n\t"
		"movdqu vin+144(%%rip), %%xmm9\n\t"
		"movdqu vin+160(%%rip), %%xmm10\n\t"
		"movdqu vin+176(%%rip), %%xmm11\n\t"
		"movdqu vin+192(%%rip), %%xmm12\n\t"
		"movdqu vin+208(%%rip), %%xmm13\n\t"
		"movdqu vin+224(%%rip), %%xmm14\n\t"
		"movdqu vin+240(%%rip), %%xmm15\n\t"
		"1:\n\t"
		"pause\n\t"
		"cmpl $0, test_sigterm(%%rip)\n\t"
		"je 1b\n\t"
		"movdqu %%xmm0, vout+0(%%rip)\n\t"
		"movdqu %%xmm1, vout+16(%%rip)\n\t"
		"movdqu %%xmm2, vout+32(%%rip)\n\t"
		"movdqu %%xmm3, vout+48(%%rip)\n\t"
		"movdqu %%xmm4, vout+64(%%rip)\n\t"
		"movdqu %%xmm5, vout+80(%%rip)\n\t"
		"movdqu %%xmm6, vout+96(%%rip)\n\t"
		"movdqu %%xmm7, vout+112(%%rip)\n\t"
		"movdqu %%xmm8, vout+128(%%rip)\n\t"
		"movdqu %%xmm9, vout+144(%%rip)\n\t"
		"movdqu %%xmm10, vout+160(%%rip)\n\t"
		"movdqu %%xmm11, vout+176(%%rip)\n\t"
		"movdqu %%xmm12, vout+192(%%rip)\n\t"
		"movdqu %%xmm13, vout+208(%%rip)\n\t"
		"movdqu %%xmm14, vout+224(%%rip)\n\t"
		"movdqu %%xmm15, vout+240(%%rip)\n\t"
		: : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");

	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			if (vout[i][j] != vin[i][j])
				fail("xmm%d byte %d is %#x, was %#x", i, j, vout[i][j], vin[i][j]);
	pass();
}
