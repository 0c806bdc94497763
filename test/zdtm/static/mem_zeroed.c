// SPDX-License-Identifier: GPL-2.0-only
/*
 * Zero pages of different origins: a page written and then cleared by hand
 * (present, all zero), pages only read (mapped to the shared zero page) and
 * pages never touched, between pages with data. All must read zero after
 * restore and stay private: writing one later must not show up elsewhere.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define PAGES 12

enum kind { DATA, CLEARED, READ_ONLY, UNTOUCHED };

static const enum kind kinds[PAGES] = {
	DATA, CLEARED, DATA, READ_ONLY, READ_ONLY, DATA,
	UNTOUCHED, DATA, CLEARED, CLEARED, READ_ONLY, DATA,
};

int main(int argc, char **argv)
{
	volatile unsigned char *a;
	unsigned long sum = 0;
	long psz, i;
	int p;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	a = mmap(NULL, PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		fail_errno("mmap");
	madvise((void *)a, PAGES * psz, MADV_NOHUGEPAGE);
	for (p = 0; p < PAGES; p++) {
		volatile unsigned char *pg = a + p * psz;

		switch (kinds[p]) {
		case DATA:
			memset((void *)pg, 0xc0 + p, psz);
			break;
		case CLEARED:
			memset((void *)pg, 0xee, psz);
			memset((void *)pg, 0, psz);
			break;
		case READ_ONLY:
			for (i = 0; i < psz; i += 512)
				sum += pg[i];
			break;
		case UNTOUCHED:
			break;
		}
	}
	if (sum)
		fail("fresh memory is not zero");

	test_ready();
	test_waitsig();

	for (p = 0; p < PAGES; p++) {
		int want = kinds[p] == DATA ? 0xc0 + p : 0;

		for (i = 0; i < psz; i++)
			if (a[p * psz + i] != want)
				fail("page %d (kind %d) byte %ld: %#x", p, kinds[p], i, a[p * psz + i]);
	}
	/* the zero pages must be private and writable */
	for (p = 0; p < PAGES; p++)
		if (kinds[p] != DATA)
			a[p * psz + p] = 0x11 * p + 1;
	for (p = 0; p < PAGES; p++) {
		for (i = 0; i < psz; i++) {
			int want = kinds[p] == DATA ? 0xc0 + p :
				   i == p ? 0x11 * p + 1 : 0;

			if (a[p * psz + i] != want)
				fail("page %d byte %ld after the write: %#x", p, i, a[p * psz + i]);
		}
	}
	pass();
}
