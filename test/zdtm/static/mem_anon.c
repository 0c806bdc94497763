// SPDX-License-Identifier: GPL-2.0-only
/*
 * Anonymous private areas of several sizes, each touched only partially:
 * touched pages must come back with their content, untouched ones as zero.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

struct area {
	size_t pages;
	unsigned int every;	/* touch every Nth page */
	unsigned char *addr;
};

static struct area areas[] = {
	{ 1, 1 },
	{ 3, 2 },
	{ 16, 3 },
	{ 256, 5 },		/* 1 MiB */
	{ 2560, 17 },		/* 10 MiB */
};

static long psz;

static int touched(const struct area *a, size_t page)
{
	return page % a->every == 0;
}

static void fill(struct area *a, unsigned int n)
{
	size_t p, i;

	for (p = 0; p < a->pages; p++) {
		unsigned long long *w = (void *)(a->addr + p * psz);

		if (!touched(a, p))
			continue;
		for (i = 0; i < psz / sizeof(*w); i++)
			w[i] = test_pattern(n * 1000003 + p, i);
	}
}

static void check(const struct area *a, unsigned int n)
{
	size_t p, i;

	for (p = 0; p < a->pages; p++) {
		unsigned long long *w = (void *)(a->addr + p * psz);

		for (i = 0; i < psz / sizeof(*w); i++) {
			unsigned long long want = touched(a, p) ?
				test_pattern(n * 1000003 + p, i) : 0;

			if (w[i] != want)
				fail("area %u (%zu pages) page %zu word %zu: %#llx != %#llx",
				     n, a->pages, p, i, w[i], want);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned int n;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	for (n = 0; n < ARRAY_SIZE(areas); n++) {
		areas[n].addr = mmap(NULL, areas[n].pages * psz,
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (areas[n].addr == MAP_FAILED)
			fail_errno("mmap");
		fill(&areas[n], n);
	}

	test_ready();
	test_waitsig();

	for (n = 0; n < ARRAY_SIZE(areas); n++)
		check(&areas[n], n);
	pass();
}
