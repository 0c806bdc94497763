// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deleted files mapped into memory (ghost files): "a" (4 pages, page 2 a
 * hole) is held open and mapped twice, shared and private, with page 1 of
 * the private copy changed; "b" (2 pages and 10 bytes) is only mapped,
 * shared, its fd closed. After the restore both must still be deleted, the
 * fd and the shared mapping of "a" must be on one inode (a write through
 * one is seen through the other), the private copy must keep its own page
 * and see the file's other pages, and "b" must hold its contents.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define PG		4096
#define A_SIZE		(4 * PG)
#define B_SIZE		(2 * PG + 10)

static uint8_t byte_at(unsigned long seed, size_t i)
{
	return test_pattern(seed, i / 8) >> (8 * (i % 8));
}

static int same(const uint8_t *p, size_t from, size_t to, unsigned long seed)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != byte_at(seed, i))
			return 0;
	return 1;
}

static int zero(const uint8_t *p, size_t from, size_t to)
{
	for (; from < to; from++)
		if (p[from])
			return 0;
	return 1;
}

/* a file of @size bytes in the work directory, the pattern of @seed but for page @hole */
static int make(const char *name, size_t size, unsigned long seed, int hole)
{
	static uint8_t buf[A_SIZE];
	size_t i;
	int fd;

	fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, size))
		fail_errno("create %s", name);
	for (i = 0; i < size; i++)
		buf[i] = byte_at(seed, i);
	for (i = 0; i < size; i += PG)
		if ((int)(i / PG) != hole &&
		    pwrite(fd, buf + i, size - i < PG ? size - i : PG, i) < 0)
			fail_errno("write %s", name);
	return fd;
}

static uint8_t *map(int fd, size_t size, int flags)
{
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (p == MAP_FAILED)
		fail_errno("mmap");
	return p;
}

static void check_deleted(const void *p, size_t size, const char *what)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + ((size + PG - 1) & ~(size_t)(PG - 1)));
	if (stat(path, &st))
		fail_errno("stat %s", path);
	if (st.st_nlink)
		fail("%s is no longer deleted: %lu links", what, (unsigned long)st.st_nlink);
}

int main(int argc, char **argv)
{
	char a_name[64], b_name[64];
	uint8_t *sh, *pr, *b;
	struct stat st, ms;
	char path[96];
	int a, fd_b;

	test_init(argc, argv);
	snprintf(a_name, sizeof(a_name), "%s.a", test_name);
	snprintf(b_name, sizeof(b_name), "%s.b", test_name);
	a = make(a_name, A_SIZE, 21, 2);
	fd_b = make(b_name, B_SIZE, 22, -1);
	sh = map(a, A_SIZE, MAP_SHARED);
	pr = map(a, A_SIZE, MAP_PRIVATE);
	b = map(fd_b, B_SIZE, MAP_SHARED);
	close(fd_b);
	memset(pr + PG, 0x5a, PG);
	if (unlink(a_name) || unlink(b_name))
		fail_errno("unlink");

	test_ready();
	test_waitsig();

	check_deleted(sh, A_SIZE, "the shared mapping of a");
	check_deleted(pr, A_SIZE, "the private mapping of a");
	check_deleted(b, B_SIZE, "the mapping of b");
	if (!same(sh, 0, 2 * PG, 21) || !zero(sh, 2 * PG, 3 * PG) || !same(sh, 3 * PG, A_SIZE, 21))
		fail("the shared mapping of a is not what it was");
	if (!same(pr, 0, PG, 21) || pr[PG] != 0x5a || pr[2 * PG - 1] != 0x5a ||
	    !zero(pr, 2 * PG, 3 * PG))
		fail("the private mapping of a is not what it was");
	if (!same(b, 0, B_SIZE, 22) || !zero(b, B_SIZE, 3 * PG))
		fail("the mapping of b is not what it was");
	/* the fd and the shared mapping: one inode */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)sh,
		 (unsigned long)sh + A_SIZE);
	if (fstat(a, &st) || stat(path, &ms) || st.st_ino != ms.st_ino || st.st_dev != ms.st_dev)
		fail("the fd of a and its shared mapping are not on one inode");
	if (st.st_nlink || st.st_size != A_SIZE)
		fail("a has %lu links and %ld bytes", (unsigned long)st.st_nlink, (long)st.st_size);
	if (pwrite(a, "fd", 2, 3 * PG) != 2 || memcmp(sh + 3 * PG, "fd", 2))
		fail("a write through the fd is not seen in the shared mapping");
	memcpy(sh + 10, "map", 3);
	if (pread(a, path, 3, 10) != 3 || memcmp(path, "map", 3))
		fail("a write through the shared mapping is not read through the fd");
	/* untouched private pages follow the file */
	if (pr[10] != 'm')
		fail("the private mapping does not see the file's page 0");
	pass();
}
