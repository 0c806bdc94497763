// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task waiting in FUTEX_WAIT (no timeout) on a private futex at the
 * checkpoint: after restore it must be waiting again (a spurious return is
 * tolerated and we wait again) until SIGTERM interrupts it. The futex word
 * must be unchanged and a FUTEX_WAKE must still find no other waiter.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

static int word = 0x1234;

int main(int argc, char **argv)
{
	int ret, spurious = 0;

	test_init(argc, argv);
	test_ready();

	while (!test_sigterm) {
		ret = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0x1234, NULL, NULL, 0);
		if (ret == 0) {
			spurious++;
			continue;
		}
		if (errno == EINTR)
			continue;
		fail_errno("futex wait returned %d", ret);
	}
	if (word != 0x1234)
		fail("the futex word is %#x", word);
	ret = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (ret != 0)
		fail("FUTEX_WAKE woke %d waiters", ret);
	test_msg("spurious wake-ups: %d", spurious);
	pass();
}
