// SPDX-License-Identifier: GPL-2.0-only
/*
 * mlockall(MCL_CURRENT | MCL_FUTURE) is kept: the areas that existed are
 * locked ("lo" in smaps), and an area mapped after the restore is locked
 * and populated as it is mapped, as MCL_FUTURE makes it.
 * With the argument onfault (mem_mlockall_onfault) MCL_ONFAULT is added:
 * areas are locked ("lo" and "lf") but a new one is not populated.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_vmflags.h"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT	4	/* Linux 4.4 */
#endif

static int onfault;

static void check_new_area(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec[4];
	void *p;

	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail_errno("mmap after restore");
	if (!has_vmflag(p, " lo"))
		fail("an area mapped after restore is not locked: MCL_FUTURE lost");
	if (onfault != has_vmflag(p, " lf"))
		fail("a new area is%s locked on fault, want%s", onfault ? " not" : "",
		     onfault ? "" : " not");
	if (mincore(p, 4 * page, vec))
		fail_errno("mincore");
	if (onfault == !!(vec[0] & 1))
		fail("a new area is%s populated, want%s", onfault ? "" : " not",
		     onfault ? " not" : "");
	munmap(p, 4 * page);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	void *old;

	test_init(argc, argv);
	onfault = argc > 1 && !strcmp(argv[argc - 1], "onfault");
	old = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (old == MAP_FAILED)
		fail_errno("mmap");
	memset(old, 0x5a, 8 * page);
	if (mlockall(MCL_CURRENT | MCL_FUTURE | (onfault ? MCL_ONFAULT : 0)))
		skip("mlockall: %m (RLIMIT_MEMLOCK too low?)");
	/* what the kernel takes but does not show can't be checked */
	if (onfault && !has_vmflag(old, " lf"))
		skip("this kernel does not show a lock on fault (lf) in smaps");
	check_new_area();

	test_ready();
	test_waitsig();

	if (!has_vmflag(old, " lo"))
		fail("an area locked before the dump is not locked");
	if (onfault != has_vmflag(old, " lf"))
		fail("the old area's lock on fault differs");
	if (((unsigned char *)old)[5 * page] != 0x5a)
		fail("the old area's data changed");
	check_new_area();
	pass();
}
