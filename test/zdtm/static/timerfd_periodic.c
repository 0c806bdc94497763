// SPDX-License-Identifier: GPL-2.0-only
/*
 * Expirations across the downtime, on the clocks that stand still in it.
 *  - periodic CLOCK_MONOTONIC (50 ms) and CLOCK_BOOTTIME (100 ms) timerfds,
 *    never read before SIGTERM: their expirations then match the namespace
 *    time that passed since they were armed; the downtime adds none.
 *  - a one-shot CLOCK_MONOTONIC timerfd due 1.5 s after "ready", i.e. in
 *    the middle of the runner's gap: it fires 1.5 s of namespace time after
 *    being armed (read blocks until then): not at once after restore, and
 *    not a moment earlier; late by no more than the task was kept from
 *    running (a dump slower than 1.5 s freezes it past the expiry),
 *    measured as the longest gap between its clock readings while it waits
 *    for SIGTERM.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL
#define MS		1000000LL
#define ONESHOT_NS	(1500 * MS)
#define FIRE_SLACK_NS	(100 * MS)

static const struct {
	const char *name;
	int clockid;
	long long interval;
} periodic[] = {
	{ "monotonic 50 ms", CLOCK_MONOTONIC, 50 * MS },
	{ "boottime 100 ms", CLOCK_BOOTTIME, 100 * MS },
};

static long long now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static int arm(int clockid, long long value, long long interval, long long *start)
{
	struct itimerspec its = {
		{ interval / NS, interval % NS }, { value / NS, value % NS },
	};
	int fd;

	fd = timerfd_create(clockid, 0);
	if (fd < 0)
		fail_errno("timerfd_create");
	*start = now_ns(clockid);
	if (timerfd_settime(fd, 0, &its, NULL))
		fail_errno("timerfd_settime");
	return fd;
}

static uint64_t read_ticks(int fd, const char *name)
{
	uint64_t ticks;

	while (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		if (errno != EINTR)
			fail_errno("read(%s)", name);
	return ticks;
}

int main(int argc, char **argv)
{
	long long start[ARRAY_SIZE(periodic)], oneshot_start, elapsed, fired, late;
	long long stall;
	int fd[ARRAY_SIZE(periodic)], oneshot;
	uint64_t ticks, expect;
	unsigned int i;

	test_init(argc, argv);
	for (i = 0; i < ARRAY_SIZE(periodic); i++)
		fd[i] = arm(periodic[i].clockid, periodic[i].interval, periodic[i].interval,
			    &start[i]);
	oneshot = arm(CLOCK_MONOTONIC, ONESHOT_NS, 0, &oneshot_start);

	test_ready();
	/* the longest stretch the task was kept from running: the freeze */
	stall = test_waitsig_stall();

	/* first the one-shot: then the periodic ones ran for a while */
	ticks = read_ticks(oneshot, "one-shot");
	fired = now_ns(CLOCK_MONOTONIC);
	late = fired - (oneshot_start + ONESHOT_NS);
	test_msg("one-shot: fired %.6f s after it was due; stalled %.6f s at most",
		 late / 1e9, stall / 1e9);
	if (ticks != 1)
		fail("one-shot: %lu expirations", (unsigned long)ticks);
	/* never early: namespace time reached the same moment */
	if (late < 0 || late > stall + FIRE_SLACK_NS)
		fail("one-shot: fired %.6f s %s it was due", (late < 0 ? -late : late) / 1e9,
		     late < 0 ? "before" : "after");

	for (i = 0; i < ARRAY_SIZE(periodic); i++) {
		ticks = read_ticks(fd[i], periodic[i].name);
		elapsed = now_ns(periodic[i].clockid) - start[i];
		expect = elapsed / periodic[i].interval;
		test_msg("%s: %lu expirations in %.3f s of namespace time",
			 periodic[i].name, (unsigned long)ticks, elapsed / 1e9);
		if (ticks + 3 < expect || ticks > expect + 1)
			fail("%s: %lu expirations, %.3f s after arming: expected %lu",
			     periodic[i].name, (unsigned long)ticks, elapsed / 1e9,
			     (unsigned long)expect);
	}

	pass();
}
