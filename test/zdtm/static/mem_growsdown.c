// SPDX-License-Identifier: GPL-2.0-only
/*
 * A MAP_GROWSDOWN area: it must keep its content and its VM_GROWSDOWN flag,
 * i.e. touching the page right below it must still grow it.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define RESERVE	(8UL << 20)
#define PAGES	4

static long psz;

/* start of the VMA containing addr and whether it has the "gd" flag */
static unsigned long vma_of(unsigned long addr, int *gd)
{
	unsigned long s, e, start = 0;
	char line[512];
	int in = 0;
	FILE *f;

	*gd = 0;
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		fail_errno("open smaps");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = addr >= s && addr < e;
			if (in)
				start = s;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8))
			*gd = strstr(line, " gd") != NULL;
	}
	fclose(f);
	return start;
}

int main(int argc, char **argv)
{
	unsigned char *res, *a;
	unsigned long start;
	int p, gd;
	long i;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	/* find a hole with room below to grow */
	res = mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		fail_errno("mmap reserve");
	munmap(res, RESERVE);
	a = mmap(res + RESERVE - PAGES * psz, PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE,
		 -1, 0);
	if (a == MAP_FAILED)
		fail_errno("mmap growsdown");
	for (p = 0; p < PAGES; p++)
		memset(a + p * psz, 0x40 + p, psz);
	start = vma_of((unsigned long)a, &gd);
	if (start != (unsigned long)a || !gd)
		fail("unexpected layout before checkpoint: start %lx gd %d", start, gd);

	test_ready();
	test_waitsig();

	start = vma_of((unsigned long)a, &gd);
	if (start != (unsigned long)a)
		fail("the area starts at %lx, not %p", start, a);
	if (!gd)
		fail("the area lost VM_GROWSDOWN");
	for (p = 0; p < PAGES; p++)
		for (i = 0; i < psz; i++)
			if (a[p * psz + i] != 0x40 + p)
				fail("page %d byte %ld differs", p, i);

	/* now grow it by one page */
	*(volatile unsigned char *)(a - psz) = 1;
	start = vma_of((unsigned long)a, &gd);
	if (start != (unsigned long)a - psz)
		fail("the area did not grow down: starts at %lx", start);
	pass();
}
