// SPDX-License-Identifier: GPL-2.0-only
/*
 * General purpose registers hold patterns across the checkpoint: they are
 * loaded in one asm block that then spins until SIGTERM (the signal frame
 * saves and restores them around the handler) and finally stores them.
 */
#include <string.h>

#include "zdtm.h"

#define NREGS 15

unsigned long long gp_in[NREGS], gp_out[NREGS];

static const char *const names[NREGS] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

int main(int argc, char **argv)
{
	int i;

	test_init(argc, argv);
	for (i = 0; i < NREGS; i++)
		gp_in[i] = test_pattern(0x6770, i);

	test_ready();

	asm volatile(
		"subq $128, %%rsp\n\t"		/* stay clear of the red zone */
		"pushq %%rbp\n\t"
		"movq gp_in+0(%%rip), %%rax\n\t"
		"movq gp_in+8(%%rip), %%rbx\n\t"
		"movq gp_in+16(%%rip), %%rcx\n\t"
		"movq gp_in+24(%%rip), %%rdx\n\t"
		"movq gp_in+32(%%rip), %%rsi\n\t"
		"movq gp_in+40(%%rip), %%rdi\n\t"
		"movq gp_in+48(%%rip), %%rbp\n\t"
		"movq gp_in+56(%%rip), %%r8\n\t"
		"movq gp_in+64(%%rip), %%r9\n\t"
		"movq gp_in+72(%%rip), %%r10\n\t"
		"movq gp_in+80(%%rip), %%r11\n\t"
		"movq gp_in+88(%%rip), %%r12\n\t"
		"movq gp_in+96(%%rip), %%r13\n\t"
		"movq gp_in+104(%%rip), %%r14\n\t"
		"movq gp_in+112(%%rip), %%r15\n\t"
		"1:\n\t"
		"pause\n\t"
		"cmpl $0, test_sigterm(%%rip)\n\t"
		"je 1b\n\t"
		"movq %%rax, gp_out+0(%%rip)\n\t"
		"movq %%rbx, gp_out+8(%%rip)\n\t"
		"movq %%rcx, gp_out+16(%%rip)\n\t"
		"movq %%rdx, gp_out+24(%%rip)\n\t"
		"movq %%rsi, gp_out+32(%%rip)\n\t"
		"movq %%rdi, gp_out+40(%%rip)\n\t"
		"movq %%rbp, gp_out+48(%%rip)\n\t"
		"movq %%r8, gp_out+56(%%rip)\n\t"
		"movq %%r9, gp_out+64(%%rip)\n\t"
		"movq %%r10, gp_out+72(%%rip)\n\t"
		"movq %%r11, gp_out+80(%%rip)\n\t"
		"movq %%r12, gp_out+88(%%rip)\n\t"
		"movq %%r13, gp_out+96(%%rip)\n\t"
		"movq %%r14, gp_out+104(%%rip)\n\t"
		"movq %%r15, gp_out+112(%%rip)\n\t"
		"popq %%rbp\n\t"
		"addq $128, %%rsp\n\t"
		: : : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9",
		      "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc");

	for (i = 0; i < NREGS; i++)
		if (gp_out[i] != gp_in[i])
			fail("%s is %#llx, was %#llx", names[i], gp_out[i], gp_in[i]);
	pass();
}
