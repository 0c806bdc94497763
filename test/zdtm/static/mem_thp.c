// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transparent huge pages stay huge: an area of four 2 MiB-aligned huge
 * pages given MADV_HUGEPAGE and written whole holds them as huge pages
 * (smaps AnonHugePages) before the dump; after the restore it holds as
 * many again, not 4 KiB pages (the advice comes before the restore fills
 * the area, so the fill's faults are huge), and every byte is as it was.
 * Skipped where the kernel gives no huge page to such an area (THP
 * "never", or none free).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_vmflags.h"

#define HUGE	(2UL << 20)
#define NR	4

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 13 + (i >> 16) + 5);
}

int main(int argc, char **argv)
{
	unsigned char *raw, *a;
	long before, after;
	size_t i;

	test_init(argc, argv);
	raw = mmap(NULL, (NR + 1) * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (raw == MAP_FAILED)
		fail_errno("mmap");
	a = (unsigned char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	/* the area alone, aligned: its huge pages can't merge with a neighbour's */
	if (a > raw && munmap(raw, a - raw))
		fail_errno("munmap head");
	if (munmap(a + NR * HUGE, raw + HUGE - a))
		fail_errno("munmap tail");
	if (madvise(a, NR * HUGE, MADV_HUGEPAGE))
		skip("MADV_HUGEPAGE: %m (no transparent huge pages)");
	for (i = 0; i < NR * HUGE; i++)
		a[i] = pattern(i);
	before = smaps_kb(a, "AnonHugePages:");
	if (before <= 0)
		skip("the kernel gave the area no huge page (THP off, or none free)");
	test_msg("%ld kB of the area in huge pages", before);

	test_ready();
	test_waitsig();

	if (!has_vmflag(a, " hg"))
		fail("MADV_HUGEPAGE is lost");
	after = smaps_kb(a, "AnonHugePages:");
	if (after < before)
		fail("%ld kB of the area in huge pages, %ld before", after, before);
	for (i = 0; i < NR * HUGE; i++)
		if (a[i] != pattern(i))
			fail("byte %zu differs", i);
	pass();
}
