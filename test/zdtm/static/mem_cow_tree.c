// SPDX-License-Identifier: GPL-2.0-only
/*
 * Private memory inherited across fork, diverged in some pages and not in
 * others: the root fills 2048 pages, forks kid1 (which rewrites every
 * third page) and kid2 (every fifth, then forks kid2a, which rewrites
 * every seventh), and then rewrites every eleventh itself. Pages nobody
 * wrote since a fork are still one physical page in several tasks (dump
 * stores them once, see test_mem_tree.py); every task must find its own
 * contents after the restore, whichever task's copy they came from.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "mem_tree.h"

#define PG		4096
#define PAGES		2048

static uint64_t *r;

/* which task last wrote page @p, as @who (0 root, 1 kid1, 2 kid2, 3 kid2a) sees it */
static unsigned long seed_of(int who, int p)
{
	if (who == 3 && p % 7 == 2)
		return 3000 + p;
	if ((who == 2 || who == 3) && p % 5 == 1)
		return 2000 + p;
	if (who == 1 && p % 3 == 0)
		return 1000 + p;
	if (who == 0 && p % 11 == 4)
		return 4000 + p;
	return p;
}

static void fill(int p, unsigned long seed)
{
	int i;

	for (i = 0; i < PG / 8; i++)
		r[p * PG / 8 + i] = test_pattern(seed, i);
}

static void check(int who)
{
	int p, i;

	for (p = 0; p < PAGES; p++)
		for (i = 0; i < PG / 8; i++)
			if (r[p * PG / 8 + i] != test_pattern(seed_of(who, p), i))
				mt_die("page %d word %d is not what it was", p, i);
}

static void rewrite(int who, int mod, int rem)
{
	int p;

	for (p = rem; p < PAGES; p += mod)
		fill(p, seed_of(who, p));
}

static void kid1_setup(void)
{
	rewrite(1, 3, 0);
}

static void kid1_check(void)
{
	check(1);
}

static void kid2a_setup(void)
{
	rewrite(3, 7, 2);
}

static void kid2a_check(void)
{
	check(3);
}

static void kid2_setup(void)
{
	rewrite(2, 5, 1);
	mt_fork("kid2a", kid2a_setup, kid2a_check);
}

static void kid2_check(void)
{
	check(2);
}

int main(int argc, char **argv)
{
	int p;

	test_init(argc, argv);
	mt_init();
	r = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		fail_errno("mmap");
	/* no huge pages: the test is about 4 KiB pages shared or not */
	madvise(r, PAGES * PG, MADV_NOHUGEPAGE);
	for (p = 0; p < PAGES; p++)
		fill(p, p);
	mt_fork("kid1", kid1_setup, kid1_check);
	mt_fork("kid2", kid2_setup, kid2_check);
	mt_wait_ready(3);
	rewrite(0, 11, 4);
	test_ready();
	test_waitsig();

	check(0);
	mt_kids_check();
	pass();
}
