// SPDX-License-Identifier: GPL-2.0-only
/*
 * AVX-512 state: zmm0-31 (all 512 bits) and the opmask registers k0-7
 * hold patterns across the checkpoint.
 */
#include <string.h>

#include "zdtm.h"

#define NREGS 32
#define WIDTH 64

unsigned char vin[NREGS][WIDTH] __attribute__((aligned(64)));
unsigned char vout[NREGS][WIDTH] __attribute__((aligned(64)));
unsigned long long kin[8], kout[8];

int main(int argc, char **argv)
{
	int i, j;

	test_init(argc, argv);
	/* libgcc checks the OS enabled the ZMM and opmask states too (XCR0) */
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw"))
		skip("no AVX-512F/BW on this CPU, or the kernel does not enable it");
	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			vin[i][j] = (unsigned char)test_pattern(0x5e + i, j);
	for (i = 0; i < 8; i++)
		kin[i] = test_pattern(0x4b, i);

	test_ready();

	asm volatile(
		"vmovdqu64 vin+0(%%rip), %%zmm0\n\t"
		"vmovdqu64 vin+64(%%rip), %%zmm1\n\t"
		"vmovdqu64 vin+128(%%rip), %%zmm2\n\t"
		"vmovdqu64 vin+192(%%rip), %%zmm3\n\t"
		"vmovdqu64 vin+256(%%rip), %%zmm4\n\t"
		"vmovdqu64 vin+320(%%rip), %%zmm5\n\t"
		"vmovdqu64 vin+384(%%rip), %%zmm6\n\t"
		"vmovdqu64 vin+448(%%rip), %%zmm7\n\t"
		"vmovdqu64 vin+512(%%rip), %%zmm8\n\t"
		"vmovdqu64 vin+576(%%rip), %%zmm9\n\t"
		"vmovdqu64 vin+640(%%rip), %%zmm10\n\t"
		"vmovdqu64 vin+704(%%rip), %%zmm11\n\t"
		"vmovdqu64 vin+768(%%rip), %%zmm12\n\t"
		"vmovdqu64 vin+832(%%rip), %%zmm13\n\t"
		"vmovdqu64 vin+896(%%rip), %%zmm14\n\t"
		"vmovdqu64 vin+960(%%rip), %%zmm15\n\t"
		"vmovdqu64 vin+1024(%%rip), %%zmm16\n\t"
		"vmovdqu64 vin+1088(%%rip), %%zmm17\n\t"
		"vmovdqu64 vin+1152(%%rip), %%zmm18\n\t"
		"vmovdqu64 vin+1216(%%rip), %%zmm19\n\t"
		"vmovdqu64 vin+1280(%%rip), %%zmm20\n\t"
		"vmovdqu64 vin+1344(%%rip), %%zmm21\n\t"
		"vmovdqu64 vin+1408(%%rip), %%zmm22\n\t"
		"vmovdqu64 vin+1472(%%rip), %%zmm23\n\t"
		"vmovdqu64 vin+1536(%%rip), %%zmm24\n\t"
		"vmovdqu64 vin+1600(%%rip), %%zmm25\n\t"
		"vmovdqu64 vin+1664(%%rip), %%zmm26\n\t"
		"vmovdqu64 vin+1728(%%rip), %%zmm27\n\t"
		"vmovdqu64 vin+1792(%%rip), %%zmm28\n\t"
		"vmovdqu64 vin+1856(%%rip), %%zmm29\n\t"
		"vmovdqu64 vin+1920(%%rip), %%zmm30\n\t"
		"vmovdqu64 vin+1984(%%rip), %%zmm31\n\t"
		"kmovq kin+0(%%rip), %%k0\n\t"
		"kmovq kin+8(%%rip), %%k1\n\t"
		"kmovq kin+16(%%rip), %%k2\n\t"
		"kmovq kin+24(%%rip), %%k3\n\t"
		"kmovq kin+32(%%rip), %%k4\n\t"
		"kmovq kin+40(%%rip), %%k5\n\t"
		"kmovq kin+48(%%rip), %%k6\n\t"
		"kmovq kin+56(%%rip), %%k7\n\t"
		"1:\n\t"
		"pause\n\t"
		"cmpl $0, test_sigterm(%%rip)\n\t"
		"je 1b\n\t"
		"vmovdqu64 %%zmm0, vout+0(%%rip)\n\t"
		"vmovdqu64 %%zmm1, vout+64(%%rip)\n\t"
		"vmovdqu64 %%zmm2, vout+128(%%rip)\n\t"
		"vmovdqu64 %%zmm3, vout+192(%%rip)\n\t"
		"vmovdqu64 %%zmm4, vout+256(%%rip)\n\t"
		"vmovdqu64 %%zmm5, vout+320(%%rip)\n\t"
		"vmovdqu64 %%zmm6, vout+384(%%rip)\n\t"
		"vmovdqu64 %%zmm7, vout+448(%%rip)\n\t"
		"vmovdqu64 %%zmm8, vout+512(%%rip)\n\t"
		"vmovdqu64 %%zmm9, vout+576(%%rip)\n\t"
		"vmovdqu64 %%zmm10, vout+640(%%rip)\n\t"
		"vmovdqu64 %%zmm11, vout+704(%%rip)\n\t"
		"vmovdqu64 %%zmm12, vout+768(%%rip)\n\t"
		"vmovdqu64 %%zmm13, vout+832(%%rip)\n\t"
		"vmovdqu64 %%zmm14, vout+896(%%rip)\n\t"
		"vmovdqu64 %%zmm15, vout+960(%%rip)\n\t"
		"vmovdqu64 %%zmm16, vout+1024(%%rip)\n\t"
		"vmovdqu64 %%zmm17, vout+1088(%%rip)\n\t"
		"vmovdqu64 %%zmm18, vout+1152(%%rip)\n\t"
		"vmovdqu64 %%zmm19, vout+1216(%%rip)\n\t"
		"vmovdqu64 %%zmm20, vout+1280(%%rip)\n\t"
		"vmovdqu64 %%zmm21, vout+1344(%%rip)\n\t"
		"vmovdqu64 %%zmm22, vout+1408(%%rip)\n\t"
		"vmovdqu64 %%zmm23, vout+1472(%%rip)\n\t"
		"vmovdqu64 %%zmm24, vout+1536(%%rip)\n\t"
		"vmovdqu64 %%zmm25, vout+1600(%%rip)\n\t"
		"vmovdqu64 %%zmm26, vout+1664(%%rip)\n\t"
		"vmovdqu64 %%zmm27, vout+1728(%%rip)\n\t"
		"vmovdqu64 %%zmm28, vout+1792(%%rip)\n\t"
		"vmovdqu64 %%zmm29, vout+1856(%%rip)\n\t"
		"vmovdqu64 %%zmm30, vout+1920(%%rip)\n\t"
		"vmovdqu64 %%zmm31, vout+1984(%%rip)\n\t"
		"kmovq %%k0, kout+0(%%rip)\n\t"
		"kmovq %%k1, kout+8(%%rip)\n\t"
		"kmovq %%k2, kout+16(%%rip)\n\t"
		"kmovq %%k3, kout+24(%%rip)\n\t"
		"kmovq %%k4, kout+32(%%rip)\n\t"
		"kmovq %%k5, kout+40(%%rip)\n\t"
		"kmovq %%k6, kout+48(%%rip)\n\t"
		"kmovq %%k7, kout+56(%%rip)\n\t"
		: : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");

	for (i = 0; i < NREGS; i++)
		for (j = 0; j < WIDTH; j++)
			if (vout[i][j] != vin[i][j])
				fail("zmm%d byte %d is %#x, was %#x", i, j, vout[i][j], vin[i][j]);
	/* k0 is writable even though it cannot be used as a mask */
	for (i = 0; i < 8; i++)
		if (kout[i] != kin[i])
			fail("k%d is %#llx, was %#llx", i, kout[i], kin[i]);
	pass();
}
