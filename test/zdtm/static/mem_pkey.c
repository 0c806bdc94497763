// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory with a protection key (pkey_alloc(), pkey_mprotect()): criu does
 * not save keys, so a dump must refuse it by name rather than bring the
 * memory back unprotected (test_pkey.py checks the refusal and that the
 * task runs on). At the end it checks that the key still guards the
 * memory: with the key's access disabled a read must fault. SKIP where
 * the CPU or kernel has no protection keys.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	volatile unsigned char *p;
	int key;

	test_init(argc, argv);
	key = pkey_alloc(0, 0);
	if (key < 0) {
		if (errno == ENOSPC || errno == EINVAL || errno == ENOSYS)
			skip("no protection keys here: pkey_alloc: %m");
		fail_errno("pkey_alloc");
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || pkey_mprotect((void *)p, 4096, PROT_READ | PROT_WRITE, key))
		fail_errno("pkey_mprotect");
	p[0] = 1;
	test_msg("key %d on %p", key, (void *)p);

	test_ready();
	test_waitsig();

	/* the key still guards it: with its access disabled a read faults */
	if (pkey_set(key, PKEY_DISABLE_ACCESS))
		fail_errno("pkey_set");
	if (!test_faults(p))
		fail("a read of memory whose key disables access did not fault");
	pass();
}
