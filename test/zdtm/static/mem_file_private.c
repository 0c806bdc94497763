// SPDX-License-Identifier: GPL-2.0-only
/*
 * A private file mapping (at a file offset) with some pages written
 * (copy-on-write). Written pages keep the private data; unwritten pages must
 * still be backed by the file: a write to the file after restore shows
 * through them, but not through the written ones.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define FILE_PAGES	10
#define MAP_OFF		2	/* in pages */
#define MAP_PAGES	6

static int cowed(int p)
{
	return p == 1 || p == 3 || p == 4;
}

int main(int argc, char **argv)
{
	char name[256], page[65536];
	unsigned char *m;
	long psz, i;
	int fd, p;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	if (psz > (long)sizeof(page))
		fail("page size too big");

	snprintf(name, sizeof(name), "%s.data", test_name);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fail_errno("open %s", name);
	for (p = 0; p < FILE_PAGES; p++) {
		memset(page, 'A' + p, psz);
		if (write(fd, page, psz) != psz)
			fail_errno("write");
	}
	m = mmap(NULL, MAP_PAGES * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 fd, MAP_OFF * psz);
	if (m == MAP_FAILED)
		fail_errno("mmap");
	/* the mapping keeps the file alive; the fd is not needed */
	close(fd);

	/* read every page so that clean ones are populated from the file */
	for (p = 0; p < MAP_PAGES; p++)
		if (m[p * psz] != 'A' + MAP_OFF + p)
			fail("page %d does not show the file", p);
	for (p = 0; p < MAP_PAGES; p++)
		if (cowed(p))
			memset(m + p * psz, 'a' + p, psz);

	test_ready();
	test_waitsig();

	for (p = 0; p < MAP_PAGES; p++) {
		int want = cowed(p) ? 'a' + p : 'A' + MAP_OFF + p;

		for (i = 0; i < psz; i++)
			if (m[p * psz + i] != want)
				fail("page %d byte %ld: %#x, want %#x", p, i, m[p * psz + i], want);
	}

	/* the file must be untouched by the private writes ... */
	fd = open(name, O_RDWR);
	if (fd < 0)
		fail_errno("reopen %s", name);
	for (p = 0; p < FILE_PAGES; p++) {
		if (pread(fd, page, psz, p * psz) != psz)
			fail_errno("pread");
		for (i = 0; i < psz; i++)
			if (page[i] != 'A' + p)
				fail("file page %d changed", p);
	}
	/* ... and clean pages must still be the file's */
	for (p = 0; p < MAP_PAGES; p++) {
		memset(page, '0' + p, psz);
		if (pwrite(fd, page, psz, (MAP_OFF + p) * psz) != psz)
			fail_errno("pwrite");
	}
	close(fd);
	for (p = 0; p < MAP_PAGES; p++) {
		int want = cowed(p) ? 'a' + p : '0' + p;

		if (m[p * psz] != want || m[p * psz + psz - 1] != want)
			fail("page %d after the file write: %#x, want %#x%s", p,
			     m[p * psz], want,
			     cowed(p) ? "" : " (a clean page is no longer file-backed)");
	}
	pass();
}
