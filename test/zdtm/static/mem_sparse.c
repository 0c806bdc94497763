// SPDX-License-Identifier: GPL-2.0-only
/*
 * A 64 MiB anonymous area touched sparsely: one word every 1 MiB plus a few
 * scattered pages. Only those must hold data after restore; all the rest
 * reads as zero.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define AREA	(64UL << 20)

static int is_touched(size_t page, size_t psz)
{
	size_t off = page * psz;

	return (off % (1UL << 20)) == 0 || page % 1021 == 7;
}

int main(int argc, char **argv)
{
	size_t psz, npages, p, i;
	unsigned long long *w;
	unsigned char *a;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	npages = AREA / psz;

	a = mmap(NULL, AREA, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		fail_errno("mmap");
	/* keep the kernel from backing it with huge pages */
	madvise(a, AREA, MADV_NOHUGEPAGE);

	for (p = 0; p < npages; p++) {
		if (!is_touched(p, psz))
			continue;
		w = (void *)(a + p * psz);
		w[0] = test_pattern(p, 0);
		w[psz / sizeof(*w) - 1] = test_pattern(p, 1);
	}

	test_ready();
	test_waitsig();

	for (p = 0; p < npages; p++) {
		w = (void *)(a + p * psz);
		for (i = 0; i < psz / sizeof(*w); i++) {
			unsigned long long want = 0;

			if (is_touched(p, psz) && i == 0)
				want = test_pattern(p, 0);
			else if (is_touched(p, psz) && i == psz / sizeof(*w) - 1)
				want = test_pattern(p, 1);
			if (w[i] != want)
				fail("page %zu word %zu: %#llx != %#llx", p, i, w[i], want);
		}
	}
	pass();
}
