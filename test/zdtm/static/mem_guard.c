// SPDX-License-Identifier: GPL-2.0-only
/*
 * A data area fenced by PROT_NONE guard pages (the way thread stacks are
 * laid out): the guards must still fault, the data must still be there.
 */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define GUARD	2
#define DATA	8

static sigjmp_buf jb;

static void segv(int sig)
{
	siglongjmp(jb, 1);
}

/* 1 if touching addr faults */
static int faults(volatile unsigned char *addr)
{
	struct sigaction sa = { .sa_handler = segv }, old;
	int ret;

	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(jb, 1) == 0) {
		(void)*addr;
		ret = 0;
	} else {
		ret = 1;
	}
	sigaction(SIGSEGV, &old, NULL);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned char *base, *data;
	unsigned long long *w;
	long psz;
	size_t i;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	base = mmap(NULL, (DATA + 2 * GUARD) * psz, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		fail_errno("mmap");
	data = base + GUARD * psz;
	if (mprotect(data, DATA * psz, PROT_READ | PROT_WRITE))
		fail_errno("mprotect");
	w = (void *)data;
	for (i = 0; i < DATA * psz / sizeof(*w); i++)
		w[i] = test_pattern(3, i);
	if (!faults(base) || !faults(data + DATA * psz) || faults(data))
		fail("guards do not work before the checkpoint");

	test_ready();
	test_waitsig();

	for (i = 0; i < DATA * psz / sizeof(*w); i++)
		if (w[i] != test_pattern(3, i))
			fail("data word %zu differs", i);
	if (!faults(base) || !faults(base + GUARD * psz - 1))
		fail("the lower guard does not fault");
	if (!faults(data + DATA * psz) || !faults(data + (DATA + GUARD) * psz - 1))
		fail("the upper guard does not fault");
	pass();
}
