// SPDX-License-Identifier: GPL-2.0-only
/*
 * A non-zero gs base set with arch_prctl(ARCH_SET_GS): it must be the same
 * after restore, and %gs-relative loads must read our buffer.
 */
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

static unsigned long long gsbuf[4] = {
	0xa1a2a3a4a5a6a7a8ULL, 0xb1b2b3b4b5b6b7b8ULL,
	0xc1c2c3c4c5c6c7c8ULL, 0xd1d2d3d4d5d6d7d8ULL,
};

static unsigned long get_gs(void)
{
	unsigned long gs = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &gs))
		fail_errno("arch_prctl(ARCH_GET_GS)");
	return gs;
}

static unsigned long long gs_load(void)
{
	unsigned long long v;

	asm volatile("movq %%gs:16, %0" : "=r"(v));
	return v;
}

int main(int argc, char **argv)
{
	unsigned long gs;

	test_init(argc, argv);
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)gsbuf))
		fail_errno("arch_prctl(ARCH_SET_GS)");
	if (get_gs() != (unsigned long)gsbuf || gs_load() != gsbuf[2])
		fail("gs base does not work before the checkpoint");

	test_ready();
	test_waitsig();

	gs = get_gs();
	if (gs != (unsigned long)gsbuf)
		fail("gs base is %#lx, was %p", gs, (void *)gsbuf);
	if (gs_load() != gsbuf[2])
		fail("%%gs:16 reads %#llx", gs_load());
	pass();
}
