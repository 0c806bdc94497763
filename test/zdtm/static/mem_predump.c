// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory rewritten between pre-dump rounds. Each SIGUSR1 runs the next
 * phase of writes (known patterns on a pseudo-random fifth of the pages),
 * drops (MADV_DONTNEED) some pages, and in phase 2 maps a new area over
 * one area (its old pages must not come back), in phase 3 moves one area
 * with mremap; phase 2 also forks a child, which keeps the memory of that
 * moment (a task new since the previous round, saved whole, then tracked
 * in its turn); then it writes "phase.done" with the phase's number. At
 * SIGTERM it reads from "phases" (written by the runner) how many phases
 * ran and recomputes, from that number alone, what every page must hold:
 * the restored memory must match page by page. Holes stay zero. The
 * child, told by SIGTERM too, checks its own memory as of phase 2 and
 * reports by its exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

#define PS	4096UL
#define NA	4096	/* 16 MiB */
#define NB	256
#define NC	256
#define FORK_PHASE	2
#define WRITE	1
#define DROP	2

enum { AREA_A, AREA_B, AREA_C };

static uint8_t *area[3];
static const long npages[3] = { NA, NB, NC };
static uint8_t *c_spot;		/* where phase 3 moves area C */
static volatile sig_atomic_t usr1;
static pid_t child;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t word(int k, int a, long i, int j)
{
	return mix(((uint64_t)k << 40) ^ ((uint64_t)a << 32) ^ ((uint64_t)i << 12) ^ j);
}

/* What phase @k does to page @i of area @a. */
static int op(int k, int a, long i)
{
	uint64_t x;

	if (k == 0)
		return i % 4 != 3 ? WRITE : 0;
	x = mix(k * 7 + a + ((uint64_t)i << 20)) % 16;
	if (x < 3)
		return WRITE;
	return x == 3 && a == AREA_A ? DROP : 0;
}

/* The phase that last wrote page @i of @a after @n phases; -1: zero. */
static int last_writer(int a, long i, int n)
{
	int k, last = -1;

	for (k = 0; k <= n; k++) {
		if (a == AREA_B && k == 2)
			last = -1;	/* a new area over the old one */
		switch (op(k, a, i)) {
		case WRITE: last = k; break;
		case DROP: last = -1; break;
		}
	}
	return last;
}

static void fill(int k, int a, long i)
{
	uint64_t *w = (uint64_t *)(area[a] + i * PS);
	int j;

	for (j = 0; j < (int)(PS / 8); j++)
		w[j] = word(k, a, i, j);
}

static void phase(int k)
{
	long i;
	int a;

	if (k == 2 && mmap(area[AREA_B], NB * PS, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		fail_errno("phase 2: mmap over area B");
	if (k == 3) {
		if (mremap(area[AREA_C], NC * PS, NC * PS, MREMAP_MAYMOVE | MREMAP_FIXED,
			   c_spot) == MAP_FAILED)
			fail_errno("phase 3: mremap of area C");
		area[AREA_C] = c_spot;
	}
	for (a = 0; a < 3; a++)
		for (i = 0; i < npages[a]; i++)
			switch (op(k, a, i)) {
			case WRITE:
				fill(k, a, i);
				break;
			case DROP:
				if (madvise(area[a] + i * PS, PS, MADV_DONTNEED))
					fail_errno("madvise(MADV_DONTNEED)");
				break;
			}
}

static void on_usr1(int sig)
{
	usr1 = 1;
}

static void tell(const char *name, int n)
{
	char buf[32];
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int len = snprintf(buf, sizeof(buf), "%d\n", n);

	if (fd < 0 || write(fd, buf, len) != len)
		fail_errno("can't write %s", name);
	close(fd);
}

static int expected_phases(void)
{
	char buf[32];

	if (test_read_file("phases", buf, sizeof(buf)) <= 0)
		fail("the runner did not say how many phases ran (file phases)");
	return atoi(buf);
}

/* The pages that differ from what @n phases wrote (the first few told). */
static long check(int n)
{
	uint64_t *w;
	long i, bad = 0;
	int a, j, k;

	for (a = 0; a < 3; a++)
		for (i = 0; i < npages[a]; i++) {
			k = last_writer(a, i, n);
			w = (uint64_t *)(area[a] + i * PS);
			for (j = 0; j < (int)(PS / 8); j++)
				if (w[j] != (k < 0 ? 0 : word(k, a, i, j)))
					break;
			if (j < (int)(PS / 8) && bad++ < 5)
				test_msg("area %c page %ld: word %d is %#lx, want %s of phase %d",
					 'A' + a, i, j, (unsigned long)w[j],
					 k < 0 ? "zero" : "the pattern", k);
		}
	return bad;
}

/* The child of phase 2: waits for SIGTERM, checks its memory, exits 0 or 1. */
static void child_main(void)
{
	while (!test_sigterm)
		usleep(1000);
	_exit(check(FORK_PHASE) ? 1 : 0);
}

static void end_child(void)
{
	int st;

	if (!child)
		return;
	kill(child, SIGTERM);
	if (waitpid(child, &st, 0) != child)
		fail_errno("waitpid of the child");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("the child forked in phase %d found its memory changed (status %#x)",
		     FORK_PHASE, st);
}

int main(int argc, char **argv)
{
	int a, n = 0;

	test_init(argc, argv);
	for (a = 0; a < 3; a++) {
		area[a] = mmap(NULL, npages[a] * PS, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area[a] == MAP_FAILED)
			fail_errno("mmap of area %c", 'A' + a);
	}
	/* a place for C to move to, kept free by a mapping of its own */
	c_spot = mmap(NULL, NC * PS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c_spot == MAP_FAILED)
		fail_errno("mmap of C's new place");
	phase(0);
	signal(SIGUSR1, on_usr1);
	test_ready();
	while (!test_sigterm) {
		if (usr1) {
			usr1 = 0;
			phase(++n);
			if (n == FORK_PHASE) {
				child = fork();
				if (child < 0)
					fail_errno("fork");
				if (!child)
					child_main();
			}
			tell("phase.done", n);
		}
		usleep(1000);
	}
	n = expected_phases();
	end_child();
	if (check(n))
		fail("pages differ from what %d phases wrote", n);
	pass();
}
