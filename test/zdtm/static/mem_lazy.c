// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory in use all the time, for restore --lazy-pages (test_lazy.py): the
 * pages arrive while the task runs. An anonymous area (LAZY_MB MiB, 64 by
 * default) holds a pattern; until SIGTERM the task checks it again and
 * again from its top down, where the daemon's background copy, which goes
 * up, comes last: the first round after a restore takes faults. In the
 * modes the rounds only do what the mode says (the whole area is checked
 * at SIGTERM).
 *   LAZY_MODE=fork: each round a child checks its top pages (a fork right
 *   after the restore gets pages its parent has not received yet) and exits.
 *   LAZY_MODE=events: each round also moves a top slice away with mremap,
 *   checks it there and moves it back; drops a slice (MADV_DONTNEED),
 *   which must read zeroes, and fills it again; unmaps a slice and maps
 *   it anew (zeroes, filled again).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

#define SLICES		8
#define CHILD_PAGES	64

static volatile sig_atomic_t stop;
static unsigned char *area, *scratch;
static size_t size, psz, slice;

static void on_term(int sig)
{
	stop = 1;
}

static void fill(unsigned char *p, size_t len, size_t first_page)
{
	unsigned long long *w;
	size_t pg, i;

	for (pg = 0; pg < len / psz; pg++) {
		w = (void *)(p + pg * psz);
		for (i = 0; i < psz / sizeof(*w); i++)
			w[i] = test_pattern(first_page + pg, i);
	}
}

/* 0 when @len bytes at @p hold the pattern of pages @first_page on (or zeroes) */
static int bad(const unsigned char *p, size_t len, size_t first_page, int zero)
{
	const unsigned long long *w;
	size_t pg, i;

	for (pg = len / psz; pg-- > 0;) {
		w = (const void *)(p + pg * psz);
		for (i = 0; i < psz / sizeof(*w); i++)
			if (w[i] != (zero ? 0 : test_pattern(first_page + pg, i))) {
				test_msg("page %zu word %zu: %#llx\n", first_page + pg, i, w[i]);
				return 1;
			}
	}
	return 0;
}

static void in_child(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		fail_errno("fork");
	/*
	 * the top pages, where the background copy comes last; few, so
	 * that the child is gone at once (a dump seldom finds it)
	 */
	if (pid == 0)
		_exit(bad(area + size - CHILD_PAGES * psz, CHILD_PAGES * psz,
			  size / psz - CHILD_PAGES, 0));
	if (waitpid(pid, &status, 0) != pid)
		fail_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("a child forked from the task read wrong memory (status %#x)", status);
}

static void events(void)
{
	/* the top slices: where the background copy comes last */
	unsigned char *s1 = area + 5 * slice, *s2 = area + 6 * slice, *s3 = area + 7 * slice;

	if (mremap(s1, slice, slice, MREMAP_MAYMOVE | MREMAP_FIXED, scratch) != scratch)
		fail_errno("mremap away");
	if (bad(scratch, slice, 5 * slice / psz, 0))
		fail("a slice moved by mremap lost its contents");
	if (mremap(scratch, slice, slice, MREMAP_MAYMOVE | MREMAP_FIXED, s1) != s1)
		fail_errno("mremap back");
	if (mmap(scratch, slice, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
	    scratch)
		fail_errno("mmap of the scratch place");
	if (madvise(s2, slice, MADV_DONTNEED))
		fail_errno("madvise(MADV_DONTNEED)");
	if (bad(s2, slice, 0, 1))
		fail("a slice dropped with MADV_DONTNEED does not read zeroes");
	fill(s2, slice, 6 * slice / psz);
	if (munmap(s3, slice) || mmap(s3, slice, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != s3)
		fail_errno("munmap and mmap again");
	if (bad(s3, slice, 0, 1))
		fail("a slice unmapped and mapped anew does not read zeroes");
	fill(s3, slice, 7 * slice / psz);
}

int main(int argc, char **argv)
{
	const char *mode = getenv("LAZY_MODE") ? getenv("LAZY_MODE") : "";
	const char *mb = getenv("LAZY_MB");
	struct sigaction sa;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	size = (size_t)(mb ? atoi(mb) : 64) << 20;
	slice = size / SLICES;
	area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	scratch = mmap(NULL, slice, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || scratch == MAP_FAILED)
		fail_errno("mmap");
	fill(area, size, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL))
		fail_errno("sigaction");

	test_ready();
	/* what the mode is about first: right after a restore, pages are missing */
	/* short rounds in the modes: after a restore, the next comes at once */
	while (!stop) {
		usleep(10000);
		if (!strcmp(mode, "fork"))
			in_child();
		else if (!strcmp(mode, "events"))
			events();
		else if (bad(area, size, 0, 0))
			fail("the area lost its contents");
	}
	if (bad(area, size, 0, 0))
		fail("the area lost its contents");
	pass();
}
