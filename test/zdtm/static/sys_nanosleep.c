// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in a long nanosleep() at the checkpoint. The kernel may end the
 * sleep early with EINTR (its restart block does not survive), which is
 * fine: then the remaining time must be sane and we sleep again. The sleep
 * must not return 0 early, nor fail in any other way.
 */
#include <errno.h>
#include <time.h>

#include "zdtm.h"

#define SLEEP 1000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct timespec req = { SLEEP, 0 }, rem;
	double start;
	int eintr = 0;

	test_init(argc, argv);
	test_ready();
	start = now();

	while (!test_sigterm) {
		if (nanosleep(&req, &rem) == 0) {
			if (now() - start < SLEEP - 1)
				fail("nanosleep returned 0 after %.1f s of %d", now() - start, SLEEP);
			break;
		}
		if (errno != EINTR)
			fail_errno("nanosleep");
		if (rem.tv_sec > req.tv_sec || rem.tv_nsec >= 1000000000 ||
		    (rem.tv_sec == 0 && rem.tv_nsec == 0))
			fail("nanosleep left %ld.%09ld of %ld.%09ld", (long)rem.tv_sec,
			     (long)rem.tv_nsec, (long)req.tv_sec, (long)req.tv_nsec);
		if (!test_sigterm)
			eintr++;
		req = rem;
	}
	test_msg("EINTR without a signal: %d times", eintr);
	pass();
}
