// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in FUTEX_WAIT_BITSET with an absolute CLOCK_MONOTONIC deadline
 * 1000 s ahead: after restore it keeps waiting (EINTR or a spurious return
 * are tolerated, and we wait again with the same deadline); ETIMEDOUT
 * before the deadline is a failure.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

static int word = 7;

int main(int argc, char **argv)
{
	struct timespec deadline, ts;
	int ret;

	test_init(argc, argv);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 1000;
	test_ready();

	while (!test_sigterm) {
		ret = syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 7,
			      &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
		if (ret == 0 || errno == EINTR)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (errno == ETIMEDOUT && ts.tv_sec < deadline.tv_sec)
			fail("futex timed out %ld s before the deadline",
			     (long)(deadline.tv_sec - ts.tv_sec));
		fail_errno("futex wait");
	}
	pass();
}
