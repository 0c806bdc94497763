// SPDX-License-Identifier: GPL-2.0-only
/*
 * AVX registers ymm0-15 (full 256 bits) hold patterns across the
 * checkpoint.
 */
#include <string.h>

#include "zdtm.h"

#define NREGS 16
#define WIDTH 32

unsigned char vin[NREGS][WIDTH] __attribute__((aligned(64)));
unsigned char vout[NREGS][WIDTH] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
	int i, j;

	test_init(argc, argv);
	/* libgcc checks the OS enabled the YMM state too (XCR0) */
	if (!__builtin_cpu_supports("avx"))
		skip("no AVX on this CPU, or the kernel does not enable it");
	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			vin[i][j] = (unsigned char)test_pattern(0x5e + i, j);

	test_ready();

	asm volatile(
		"vmovdqu vin+0(%%rip), %%ymm0\n\t"
		"vmovdqu vin+32(%%rip), %%ymm1\n\t"
		"vmovdqu vin+64(%%rip), %%ymm2\n\t"
		"vmovdqu vin+96(%%rip), %%ymm3\n\t"
		"vmovdqu vin+128(%%rip), %%ymm4\n\t"
		"vmovdqu vin+160(%%rip), %%ymm5\n\t"
		"vmovdqu vin+192(%%rip), %%ymm6\n\t"
		"vmovdqu vin+224(%%rip), %%ymm7\n\t"
		"vmovdqu vin+256(%%rip), %%ymm8\n\t"
		"vmovdqu vin+288(%%rip), %%ymm9\n\t"
		"vmovdqu vin+320(%%rip), %%ymm10\n\t"
		"vmovdqu vin+352(%%rip), %%ymm11\n\t"
		"vmovdqu vin+384(%%rip), %%ymm12\n\t"
		"vmovdqu vin+416(%%rip), %%ymm13\n\t"
		"vmovdqu vin+448(%%rip), %%ymm14\n\t"
		"vmovdqu vin+480(%%rip), %%ymm15\n\t"
		"1:\n\t"
		"pause\n\t"
		"cmpl $0, test_sigterm(%%rip)\n\t"
		"je 1b\n\t"
		"vmovdqu %%ymm0, vout+0(%%rip)\n\t"
		"vmovdqu %%ymm1, vout+32(%%rip)\n\t"
		"vmovdqu %%ymm2, vout+64(%%rip)\n\t"
		"vmovdqu %%ymm3, vout+96(%%rip)\n\t"
		"vmovdqu %%ymm4, vout+128(%%rip)\n\t"
		"vmovdqu %%ymm5, vout+160(%%rip)\n\t"
		"vmovdqu %%ymm6, vout+192(%%rip)\n\t"
		"vmovdqu %%ymm7, vout+224(%%rip)\n\t"
		"vmovdqu %%ymm8, vout+256(%%rip)\n\t"
		"vmovdqu %%ymm9, vout+288(%%rip)\n\t"
		"vmovdqu %%ymm10, vout+320(%%rip)\n\t"
		"vmovdqu %%ymm11, vout+352(%%rip)\n\t"
		"vmovdqu %%ymm12, vout+384(%%rip)\n\t"
		"vmovdqu %%ymm13, vout+416(%%rip)\n\t"
		"vmovdqu %%ymm14, vout+448(%%rip)\n\t"
		"vmovdqu %%ymm15, vout+480(%%rip)\n\t"
		: : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");

	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			if (vout[i][j] != vin[i][j])
				fail("ymm%d byte %d is %#x, was %#x", i, j, vout[i][j], vin[i][j]);
	pass();
}
