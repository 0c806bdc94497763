// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) at the
 * checkpoint. It may come back with EINTR; then the deadline must still be
 * in the future (monotonic time continues) and we sleep again. Returning 0
 * before the deadline is a failure.
 */
#include <errno.h>
#include <time.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	struct timespec deadline, ts;
	int ret, eintr = 0;

	test_init(argc, argv);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 1000;
	test_ready();

	while (!test_sigterm) {
		ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ret == 0) {
			if (ts.tv_sec < deadline.tv_sec)
				fail("clock_nanosleep returned 0 %ld s before the deadline",
				     (long)(deadline.tv_sec - ts.tv_sec));
			break;
		}
		if (ret != EINTR)
			fail("clock_nanosleep: error %d", ret);
		if (!test_sigterm)
			eintr++;
	}
	test_msg("EINTR without a signal: %d times", eintr);
	pass();
}
