// SPDX-License-Identifier: GPL-2.0-only
/*
 * membarrier registrations are kept: the process registered for private
 * expedited, private expedited sync-core (where the architecture has it)
 * and global expedited barriers; after restore the kernel lists the same
 * registrations (MEMBARRIER_CMD_GET_REGISTRATIONS, Linux 6.3) and the
 * private expedited barrier works without registering again.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#define CMD_GET_REGISTRATIONS	(1 << 9)	/* Linux 6.3 */

static int membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

int main(int argc, char **argv)
{
	int want, got, avail;

	test_init(argc, argv);
	avail = membarrier(MEMBARRIER_CMD_QUERY);
	if (avail < 0)
		skip("no membarrier: %m");
	if (membarrier(CMD_GET_REGISTRATIONS) < 0)
		skip("no MEMBARRIER_CMD_GET_REGISTRATIONS (Linux 6.3+): %m");
	want = MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
	if (avail & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)
		want |= MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE;
	for (int bit = 1; bit <= want; bit <<= 1)
		if ((want & bit) && membarrier(bit))
			fail_errno("membarrier register %#x", bit);
	got = membarrier(CMD_GET_REGISTRATIONS);
	if (got != want)
		fail("registrations %#x right after registering %#x", got, want);

	test_ready();
	test_waitsig();

	got = membarrier(CMD_GET_REGISTRATIONS);
	if (got != want)
		fail("registrations are %#x, were %#x", got, want);
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		fail_errno("private expedited barrier after restore");
	pass();
}
