// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lightweight guard regions (madvise MADV_GUARD_INSTALL, Linux 6.13+): they
 * live in the page tables, not as separate VMAs, and must still fault after
 * restore while their neighbours keep their content.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define PAGES 16

/* Skips unless this kernel installs guard regions (EINVAL before 6.13). */
static void need_guard_regions(long psz)
{
	void *p = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fail_errno("mmap");
	if (madvise(p, psz, MADV_GUARD_INSTALL)) {
		if (errno == EINVAL)
			skip("MADV_GUARD_INSTALL is not supported (Linux 6.13+)");
		fail_errno("madvise(MADV_GUARD_INSTALL)");
	}
	munmap(p, psz);
}

static int is_guard(int p)
{
	return p == 0 || p == 5 || p == 6 || p == PAGES - 1;
}

int main(int argc, char **argv)
{
	unsigned char *a;
	long psz;
	int p;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	need_guard_regions(psz);

	a = mmap(NULL, PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		fail_errno("mmap");
	for (p = 0; p < PAGES; p++)
		memset(a + p * psz, 'a' + p, psz);
	for (p = 0; p < PAGES; p++)
		if (is_guard(p) && madvise(a + p * psz, psz, MADV_GUARD_INSTALL))
			fail_errno("madvise(MADV_GUARD_INSTALL) of page %d", p);

	test_ready();
	test_waitsig();

	for (p = 0; p < PAGES; p++) {
		unsigned char *pg = a + p * psz;
		long i;

		if (is_guard(p)) {
			if (!test_faults(pg))
				fail("page %d is no longer a guard", p);
			continue;
		}
		if (test_faults(pg))
			fail("page %d faults", p);
		for (i = 0; i < psz; i++)
			if (pg[i] != 'a' + p)
				fail("page %d byte %ld: %#x", p, i, pg[i]);
	}
	pass();
}
