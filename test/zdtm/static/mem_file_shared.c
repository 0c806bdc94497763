// SPDX-License-Identifier: GPL-2.0-only
/*
 * A MAP_SHARED file mapping: stores through it before the checkpoint are in
 * the file; after restore the mapping and the file are still the same
 * memory in both directions.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define PAGES 8

int main(int argc, char **argv)
{
	char name[256], c;
	unsigned char *m;
	long psz, i;
	int fd, p;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	snprintf(name, sizeof(name), "%s.data", test_name);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fail_errno("open %s", name);
	if (ftruncate(fd, PAGES * psz))
		fail_errno("ftruncate");
	m = mmap(NULL, PAGES * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		fail_errno("mmap");
	close(fd);
	/* leave the last page untouched */
	for (p = 0; p < PAGES - 1; p++)
		memset(m + p * psz, 'k' + p, psz);

	test_ready();
	test_waitsig();

	for (p = 0; p < PAGES; p++) {
		int want = p < PAGES - 1 ? 'k' + p : 0;

		for (i = 0; i < psz; i++)
			if (m[p * psz + i] != want)
				fail("page %d byte %ld: %#x, want %#x", p, i, m[p * psz + i], want);
	}

	fd = open(name, O_RDWR);
	if (fd < 0)
		fail_errno("reopen %s", name);
	for (p = 0; p < PAGES; p++) {
		if (pread(fd, &c, 1, p * psz + 5) != 1)
			fail_errno("pread");
		if (c != (p < PAGES - 1 ? 'k' + p : 0))
			fail("file page %d holds %#x", p, c);
	}
	/* file -> mapping */
	if (pwrite(fd, "Z", 1, 3 * psz + 17) != 1)
		fail_errno("pwrite");
	if (m[3 * psz + 17] != 'Z')
		fail("a write to the file is not visible in the mapping");
	/* mapping -> file */
	m[6 * psz + 9] = 'Q';
	if (pread(fd, &c, 1, 6 * psz + 9) != 1 || c != 'Q')
		fail("a store to the mapping is not visible in the file");
	close(fd);
	pass();
}
