// SPDX-License-Identifier: GPL-2.0-only
/*
 * securebits, including a locked one: the same after restore.
 */
#include <linux/securebits.h>
#include <sys/prctl.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	int want, bits;

	test_init(argc, argv);
	want = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	       SECBIT_KEEP_CAPS | SECBIT_NO_CAP_AMBIENT_RAISE;
	if (prctl(PR_SET_SECUREBITS, want))
		fail_errno("PR_SET_SECUREBITS");
	if (prctl(PR_GET_SECUREBITS) != want)
		fail("securebits read back as %#x", prctl(PR_GET_SECUREBITS));

	test_ready();
	test_waitsig();

	bits = prctl(PR_GET_SECUREBITS);
	if (bits != want)
		fail("securebits are %#x, were %#x", bits, want);
	if (prctl(PR_GET_KEEPCAPS) != 1)
		fail("PR_GET_KEEPCAPS disagrees");
	pass();
}
