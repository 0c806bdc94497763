// SPDX-License-Identifier: GPL-2.0-only
/*
 * The advice an area was given, as its smaps VmFlags show it, is kept:
 * MADV_HUGEPAGE (hg), MADV_NOHUGEPAGE (nh), MADV_MERGEABLE (mg, KSM),
 * MADV_DONTFORK (dc), MADV_DONTDUMP (dd), MADV_WIPEONFORK (wf), and a
 * lock on fault, mlock2(MLOCK_ONFAULT) (lo lf), which must not fill the
 * area as a plain mlock would. Advice the kernel does not offer (no THP,
 * no KSM: EINVAL) is left out and said so; with none offered, the test
 * is skipped.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem_vmflags.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	1	/* Linux 4.4 */
#endif
#define AREA_PAGES	8

static const struct {
	int advice;		/* -1: mlock2(MLOCK_ONFAULT) */
	const char *name, *flag;
} advs[] = {
	{ MADV_HUGEPAGE, "MADV_HUGEPAGE", " hg" },
	{ MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE", " nh" },
	{ MADV_MERGEABLE, "MADV_MERGEABLE", " mg" },
	{ MADV_DONTFORK, "MADV_DONTFORK", " dc" },
	{ MADV_DONTDUMP, "MADV_DONTDUMP", " dd" },
	{ MADV_WIPEONFORK, "MADV_WIPEONFORK", " wf" },
	{ -1, "mlock2(MLOCK_ONFAULT)", " lf" },
};

#define NR_ADVS	(sizeof(advs) / sizeof(advs[0]))

static void *area[NR_ADVS];
static long page;

static int advise(size_t i)
{
	size_t len = AREA_PAGES * page;

	if (advs[i].advice < 0)
		return syscall(SYS_mlock2, area[i], len, MLOCK_ONFAULT);
	return madvise(area[i], len, advs[i].advice);
}

int main(int argc, char **argv)
{
	unsigned char vec[AREA_PAGES];
	size_t i, offered = 0;

	test_init(argc, argv);
	page = sysconf(_SC_PAGESIZE);
	for (i = 0; i < NR_ADVS; i++) {
		/* a gap after each area keeps the kernel from merging them */
		area[i] = mmap(NULL, (AREA_PAGES + 1) * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area[i] == MAP_FAILED)
			fail_errno("mmap");
		munmap((char *)area[i] + AREA_PAGES * page, page);
		if (advise(i)) {
			if (errno != EINVAL)
				fail_errno("%s", advs[i].name);
			test_msg("%s: not offered by this kernel, left out\n", advs[i].name);
			munmap(area[i], AREA_PAGES * page);
			area[i] = NULL;
			continue;
		}
		((char *)area[i])[0] = 0x3c;	/* one page of data in each */
		/* what the kernel takes but does not show can't be checked */
		if (!has_vmflag(area[i], advs[i].flag)) {
			test_msg("%s: this kernel does not show%s in smaps, left out\n",
				 advs[i].name, advs[i].flag);
			munmap(area[i], AREA_PAGES * page);
			area[i] = NULL;
			continue;
		}
		offered++;
	}
	if (!offered)
		skip("the kernel offers none of the advice");

	test_ready();
	test_waitsig();

	for (i = 0; i < NR_ADVS; i++) {
		if (!area[i])
			continue;
		if (!has_vmflag(area[i], advs[i].flag))
			fail("the area given %s lost it (no%s)", advs[i].name, advs[i].flag);
		if (((char *)area[i])[0] != 0x3c)
			fail("the area given %s lost its data", advs[i].name);
		if (advs[i].advice >= 0)
			continue;
		if (!has_vmflag(area[i], " lo"))
			fail("the area locked on fault is not locked");
		if (mincore(area[i], AREA_PAGES * page, vec))
			fail_errno("mincore");
		if (vec[AREA_PAGES - 1] & 1)
			fail("the area locked on fault was filled: locked as by mlock");
	}
	pass();
}
