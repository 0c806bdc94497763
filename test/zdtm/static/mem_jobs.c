// SPDX-License-Identifier: GPL-2.0-only
/*
 * 256 MiB of anonymous memory, every page with data of its own, some pages
 * never touched (holes between the runs), and a few filled pages left
 * PROT_NONE (read through /proc/PID/mem at dump): enough pages for the
 * dump's page copy (--jobs) to split among its threads. Every word is
 * checked after restore; untouched pages must read as zero.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define BIG	(256UL << 20)
#define LOCKED	64		/* pages of the PROT_NONE area */

static size_t psz;

static int touched(size_t page)
{
	return page % 97 != 13;
}

static void fill(unsigned char *a, size_t pages, unsigned long long seed)
{
	size_t p, i;

	for (p = 0; p < pages; p++) {
		unsigned long long *w = (void *)(a + p * psz);

		if (!touched(p))
			continue;
		for (i = 0; i < psz / sizeof(*w); i++)
			w[i] = test_pattern(seed + p, i);
	}
}

static void check(const unsigned char *a, size_t pages, unsigned long long seed,
		  const char *what)
{
	size_t p, i;

	for (p = 0; p < pages; p++) {
		const unsigned long long *w = (const void *)(a + p * psz);

		for (i = 0; i < psz / sizeof(*w); i++) {
			unsigned long long want = touched(p) ? test_pattern(seed + p, i) : 0;

			if (w[i] != want)
				fail("%s page %zu word %zu: %#llx != %#llx", what, p, i,
				     w[i], want);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned char *big, *locked;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	/* the task, its images (often on tmpfs) and criu's buffers: about 3x */
	if ((unsigned long long)sysconf(_SC_PHYS_PAGES) * psz < 4 * BIG)
		skip("%llu MiB of memory: the task, its images and criu need about 3 x %lu MiB",
		     (unsigned long long)sysconf(_SC_PHYS_PAGES) * psz >> 20, BIG >> 20);
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	locked = mmap(NULL, LOCKED * psz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || locked == MAP_FAILED)
		fail_errno("mmap");
	fill(big, BIG / psz, 1);
	fill(locked, LOCKED, 1ULL << 40);
	if (mprotect(locked, LOCKED * psz, PROT_NONE))
		fail_errno("mprotect");

	test_ready();
	test_waitsig();

	check(big, BIG / psz, 1, "big area");
	if (mprotect(locked, LOCKED * psz, PROT_READ))
		fail_errno("mprotect");
	check(locked, LOCKED, 1ULL << 40, "PROT_NONE area");
	pass();
}
