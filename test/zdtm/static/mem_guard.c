// SPDX-License-Identifier: GPL-2.0-only
/*
 * A data area fenced by PROT_NONE guard pages (the way thread stacks are
 * laid out): the guards must still fault, the data must still be there.
 */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

#define GUARD	2
#define DATA	8

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
	if (!test_faults(base) || !test_faults(data + DATA * psz) || test_faults(data))
		fail("guards do not work before the checkpoint");

	test_ready();
	test_waitsig();

	for (i = 0; i < DATA * psz / sizeof(*w); i++)
		if (w[i] != test_pattern(3, i))
			fail("data word %zu differs", i);
	if (!test_faults(base) || !test_faults(base + GUARD * psz - 1))
		fail("the lower guard does not fault");
	if (!test_faults(data + DATA * psz) || !test_faults(data + (DATA + GUARD) * psz - 1))
		fail("the upper guard does not fault");
	pass();
}
