// SPDX-License-Identifier: GPL-2.0-only
/*
 * A file mapped MAP_SHARED by a parent and its child (the mapping is
 * inherited), mapped again by the child at another offset, and privately
 * by the child with a page changed (its copy, not the file's). The file
 * holds the shared contents, so each task maps it again on restore; the
 * tasks must still see each other's writes through the file afterwards,
 * and the private copy must stay the child's.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

#include "mem_tree.h"

#define PG		4096
#define PAGES		6
#define TOKEN		0x0123456789abcdefULL
#define ACK		0xfedcba9876543210ULL

static uint8_t *m, *again, *priv;
static char name[256];

static void check_file(int who)
{
	int p;

	for (p = 0; p < PAGES; p++) {
		int want = p == 4 ? 'K' : p == 5 ? 0 : 'a' + p;
		int i;

		for (i = p ? 0 : 8; i < PG; i++)
			if (m[p * PG + i] != want)
				mt_die("%s: page %d byte %d is %#x, not %#x",
				       who ? "child" : "root", p, i, m[p * PG + i], want);
	}
}

static void kid_setup(void)
{
	int fd = open(name, O_RDWR);

	if (fd < 0)
		mt_die("open: %m");
	again = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 3 * PG);
	priv = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 2 * PG);
	close(fd);
	if (again == MAP_FAILED || priv == MAP_FAILED)
		mt_die("mmap: %m");
	memset(again + PG, 'K', PG);		/* page 4 of the file */
	memset(priv, 'p', PG);			/* a copy of page 2, the task's own */
}

static void kid_check(void)
{
	int i;

	check_file(1);
	for (i = 0; i < PG; i++)
		if (priv[i] != 'p' || priv[PG + i] != 'd' || again[i] != 'd')
			mt_die("the private or second mapping is not what it was");
	if (*(uint64_t *)m != TOKEN)
		mt_die("the root's write after the restore is not seen");
	*(uint64_t *)(again + PG) = ACK;	/* page 4, through the other mapping */
}

int main(int argc, char **argv)
{
	int fd, p;

	test_init(argc, argv);
	mt_init();
	snprintf(name, sizeof(name), "%s.data", test_name);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, PAGES * PG))
		fail_errno("creating %s", name);
	m = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		fail_errno("mmap");
	for (p = 0; p < PAGES - 1; p++)
		memset(m + p * PG, 'a' + p, PG);
	mt_fork("kid", kid_setup, kid_check);
	mt_wait_ready(1);
	test_ready();
	test_waitsig();

	check_file(0);
	*(uint64_t *)m = TOKEN;
	mt_kids_check();
	if (*(uint64_t *)(m + 4 * PG) != ACK)
		fail("the child's write after the restore is not seen");
	pass();
}
