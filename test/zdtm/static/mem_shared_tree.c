// SPDX-License-Identifier: GPL-2.0-only
/*
 * MAP_SHARED|MAP_ANONYMOUS memory shared by a tree: area A (16 pages, one
 * never touched) by the root, two children and a grandchild; area B by the
 * root and a child that unmapped its first two pages (its part starts at
 * page offset 2); area C made by a child after the fork and shared with
 * its own child only. Contents written by every task before the dump are
 * checked after it, and after the restore writes must still cross: the
 * root writes a token its children read, a child answers the root, a
 * child writes its grandchild reads. Every task's memory map must be what
 * it was (the areas still show "/dev/zero (deleted)", the same object
 * where it was the same).
 */
#include <stdint.h>
#include <sys/mman.h>

#include "mem_tree.h"

#define PG		4096
#define A_PAGES		16
#define B_PAGES		8
#define C_PAGES		4
#define UNTOUCHED	7	/* a page of A no one writes: a hole */
#define TOKEN_PAGE	15	/* the root writes here after the restore */
#define ACK_PAGE	14	/* kid1 answers here */
#define TOKEN		0x70c3e1d2a5b6c7d8ULL
#define ACK		0xac4ac4ac4ac4ac41ULL

static uint8_t *a, *b, *c;

static void fill(uint8_t *p, unsigned long seed)
{
	uint64_t *w = (uint64_t *)p;
	int i;

	for (i = 0; i < PG / 8; i++)
		w[i] = test_pattern(seed, i);
}

static int same(const uint8_t *p, unsigned long seed)
{
	const uint64_t *w = (const uint64_t *)p;
	int i;

	for (i = 0; i < PG / 8; i++)
		if (w[i] != test_pattern(seed, i))
			return 0;
	return 1;
}

static int zero(const uint8_t *p)
{
	int i;

	for (i = 0; i < PG; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Area A as everyone left it before the dump (the token and ack pages aside). */
static void check_a(void)
{
	int i;

	for (i = 0; i < A_PAGES; i++) {
		if (i == TOKEN_PAGE || i == ACK_PAGE)
			continue;
		if (i == UNTOUCHED ? !zero(a + i * PG) : !same(a + i * PG, i == 3 ? 300 : 100 + i))
			mt_die("area A page %d is not what it was", i);
	}
}

static void kid1_setup(void)
{
	fill(a + 3 * PG, 300);
	if (munmap(b, 2 * PG))
		mt_die("munmap: %m");
	fill(b + 5 * PG, 500);
}

static void kid1_check(void)
{
	int i;

	check_a();
	for (i = 2; i < B_PAGES; i++)
		if (!same(b + i * PG, i == 5 ? 500 : 200 + i))
			mt_die("area B page %d is not what it was", i);
	if (*(uint64_t *)(a + TOKEN_PAGE * PG) != TOKEN)
		mt_die("the root's write after the restore is not seen (%#lx)",
		       (unsigned long)*(uint64_t *)(a + TOKEN_PAGE * PG));
	*(uint64_t *)(a + ACK_PAGE * PG) = ACK;
}

static void kid2a_setup(void)
{
	fill(c + 1 * PG, 801);
}

static void kid2a_check(void)
{
	check_a();
	if (!same(c, 800) || !same(c + 1 * PG, 801) || !zero(c + 3 * PG))
		mt_die("area C is not what it was");
	if (*(uint64_t *)(c + 2 * PG) != TOKEN + 2)
		mt_die("its parent's write after the restore is not seen");
}

static void kid2_setup(void)
{
	c = mmap(NULL, C_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (c == MAP_FAILED)
		mt_die("mmap: %m");
	fill(c, 800);
	mt_fork("kid2a", kid2a_setup, kid2a_check);
}

static void kid2_check(void)
{
	check_a();
	if (!same(c, 800) || !same(c + 1 * PG, 801) || !zero(c + 3 * PG))
		mt_die("area C is not what it was");
	if (*(uint64_t *)(a + TOKEN_PAGE * PG) != TOKEN)
		mt_die("the root's write after the restore is not seen");
	/* for kid2a, which checks after this */
	*(uint64_t *)(c + 2 * PG) = TOKEN + 2;
}

int main(int argc, char **argv)
{
	int i;

	test_init(argc, argv);
	mt_init();
	a = mmap(NULL, A_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, B_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		fail_errno("mmap");
	for (i = 0; i < A_PAGES; i++)
		if (i != UNTOUCHED)
			fill(a + i * PG, 100 + i);
	for (i = 0; i < B_PAGES; i++)
		fill(b + i * PG, 200 + i);
	mt_fork("kid1", kid1_setup, kid1_check);
	mt_fork("kid2", kid2_setup, kid2_check);
	mt_wait_ready(3);
	test_ready();
	test_waitsig();

	check_a();
	for (i = 0; i < B_PAGES; i++)
		if (!same(b + i * PG, i == 5 ? 500 : 200 + i))
			fail("area B page %d is not what it was", i);
	*(uint64_t *)(a + TOKEN_PAGE * PG) = TOKEN;
	mt_kids_check();
	if (*(uint64_t *)(a + ACK_PAGE * PG) != ACK)
		fail("kid1's write after the restore is not seen (%#lx)",
		     (unsigned long)*(uint64_t *)(a + ACK_PAGE * PG));
	pass();
}
