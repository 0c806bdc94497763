// SPDX-License-Identifier: GPL-2.0-only
/*
 * Absolute CLOCK_REALTIME timerfds keep their wall-clock deadline.
 *  - far deadlines (CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET, and a
 *    periodic CLOCK_REALTIME_ALARM one): after restore, the remaining time
 *    plus the wall clock is the deadline to a few microseconds, and the
 *    settime flags and interval are kept;
 *  - a deadline 1 s after "ready", which passes during the runner's gap:
 *    it has fired when the task looks after SIGTERM (or, with a short gap,
 *    fires on time);
 *  - a periodic one (300 ms) started at "ready": like after a suspend, the
 *    periods of the downtime are counted, since the wall clock went on.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL
#define MS		1000000LL
#define US		1000LL
#define EXACT_NS	(20 * US)
#define PASSING_NS	(1000 * MS)
#define PERIOD_NS	(300 * MS)

#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET	(1 << 1)
#endif

struct tfd {
	const char *name;
	int clockid, flags;
	long long deadline, interval;
	int fd;
};

static long long now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static void arm(struct tfd *t, long long in, long long interval)
{
	struct itimerspec its;

	t->fd = timerfd_create(t->clockid, TFD_NONBLOCK);
	if (t->fd < 0) {
		if (errno == EPERM && t->clockid == CLOCK_REALTIME_ALARM)
			skip("%s: no CAP_WAKE_ALARM to make an alarm timer", t->name);
		fail_errno("timerfd_create(%s)", t->name);
	}
	t->interval = interval;
	t->deadline = now_ns(CLOCK_REALTIME) + in;
	its.it_value.tv_sec = t->deadline / NS;
	its.it_value.tv_nsec = t->deadline % NS;
	its.it_interval.tv_sec = interval / NS;
	its.it_interval.tv_nsec = interval % NS;
	if (timerfd_settime(t->fd, t->flags, &its, NULL))
		fail_errno("timerfd_settime(%s)", t->name);
}

static unsigned int settime_flags(int fd)
{
	char path[64], buf[1024], *p;
	unsigned int flags;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		fail_errno("read %s", path);
	p = strstr(buf, "settime flags:");
	if (!p || sscanf(p, "settime flags: %o", &flags) != 1)
		fail("no settime flags in %s", path);
	return flags;
}

/* The deadline as the timer has it now, with the error of reading it. */
static void check_deadline(struct tfd *t)
{
	struct itimerspec its;
	long long t1, t2, at, off;

	t1 = now_ns(CLOCK_REALTIME);
	if (timerfd_gettime(t->fd, &its))
		fail_errno("timerfd_gettime(%s)", t->name);
	t2 = now_ns(CLOCK_REALTIME);
	at = t1 + its.it_value.tv_sec * NS + its.it_value.tv_nsec;
	off = at - t->deadline;
	test_msg("%s: deadline off by %lld ns (read in %lld ns)", t->name, off, t2 - t1);
	/* the timer was read at some moment between t1 and t2 */
	if (off < -EXACT_NS - (t2 - t1) || off > EXACT_NS)
		fail("%s: the deadline moved by %lld ns", t->name, off);
	if (its.it_interval.tv_sec * NS + its.it_interval.tv_nsec != t->interval)
		fail("%s: interval %ld.%09ld s, was %lld ns", t->name,
		     (long)its.it_interval.tv_sec, its.it_interval.tv_nsec, t->interval);
	if (settime_flags(t->fd) != (unsigned int)t->flags)
		fail("%s: settime flags %o, were %o", t->name, settime_flags(t->fd), t->flags);
}

static uint64_t wait_ticks(struct tfd *t, long long *when)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	uint64_t ticks;

	while (poll(&p, 1, 10000) < 0)
		if (errno != EINTR)
			fail_errno("poll(%s)", t->name);
	*when = now_ns(CLOCK_REALTIME);
	if (read(t->fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		fail_errno("read(%s)", t->name);
	return ticks;
}

int main(int argc, char **argv)
{
	struct tfd far = { "realtime, cancel on set", CLOCK_REALTIME,
			   TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET };
	struct tfd alarm = { "realtime alarm, periodic", CLOCK_REALTIME_ALARM,
			     TFD_TIMER_ABSTIME };
	struct tfd passing = { "realtime, passes in the gap", CLOCK_REALTIME, TFD_TIMER_ABSTIME };
	struct tfd period = { "realtime, 300 ms", CLOCK_REALTIME, TFD_TIMER_ABSTIME };
	long long sigterm, when, expect;
	uint64_t ticks;

	test_init(argc, argv);
	arm(&far, 1000 * NS + 123456789, 0);
	arm(&alarm, 500 * NS + 987654321, 10 * NS + 1);
	arm(&passing, PASSING_NS, 0);
	arm(&period, PERIOD_NS, PERIOD_NS);

	test_ready();
	test_waitsig();
	sigterm = now_ns(CLOCK_REALTIME);

	check_deadline(&far);
	check_deadline(&alarm);

	ticks = wait_ticks(&passing, &when);
	test_msg("%s: read %.3f s after its deadline, at SIGTERM %.3f s after",
		 passing.name, (when - passing.deadline) / 1e9,
		 (sigterm - passing.deadline) / 1e9);
	if (ticks != 1)
		fail("%s: %lu expirations", passing.name, (unsigned long)ticks);
	if (when < passing.deadline)
		fail("%s: fired %lld ns early", passing.name, passing.deadline - when);
	/* past at SIGTERM: was due at once; else on time */
	if (when > (sigterm > passing.deadline ? sigterm : passing.deadline) + 100 * MS)
		fail("%s: fired %.3f s late", passing.name, (when - passing.deadline) / 1e9);

	ticks = wait_ticks(&period, &when);
	expect = (when - period.deadline) / PERIOD_NS + 1;
	test_msg("%s: %lu expirations, %lld expected", period.name, (unsigned long)ticks,
		 expect);
	if ((long long)ticks + 2 < expect || (long long)ticks > expect + 1)
		fail("%s: %lu expirations, expected %lld", period.name, (unsigned long)ticks,
		     expect);
	pass();
}
