// SPDX-License-Identifier: GPL-2.0-only
/*
 * Holes punched with MADV_DONTNEED into filled anonymous memory read back
 * as zero after restore; the rest keeps its data. A page that was written
 * and then cleared by hand must read as zero too.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define PAGES 64

static int hole(int p)
{
	return (p >= 10 && p < 20) || p == 33 || p == PAGES - 1;
}

static int zeroed(int p)
{
	return p == 40 || p == 41;
}

int main(int argc, char **argv)
{
	unsigned char *a;
	long psz, i;
	int p;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	a = mmap(NULL, PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		fail_errno("mmap");
	madvise(a, PAGES * psz, MADV_NOHUGEPAGE);
	for (p = 0; p < PAGES; p++)
		memset(a + p * psz, p + 1, psz);
	for (p = 0; p < PAGES; p++) {
		if (hole(p) && madvise(a + p * psz, psz, MADV_DONTNEED))
			fail_errno("madvise");
		if (zeroed(p))
			memset(a + p * psz, 0, psz);
	}
	for (i = 0; i < psz; i++)
		if (a[10 * psz + i])
			fail("MADV_DONTNEED did not zero the page");

	test_ready();
	test_waitsig();

	for (p = 0; p < PAGES; p++) {
		int want = hole(p) || zeroed(p) ? 0 : p + 1;

		for (i = 0; i < psz; i++)
			if (a[p * psz + i] != want)
				fail("page %d byte %ld: %#x, want %#x", p, i, a[p * psz + i], want);
	}
	pass();
}
