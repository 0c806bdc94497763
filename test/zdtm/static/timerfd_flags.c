// SPDX-License-Identifier: GPL-2.0-only
/*
 * timerfds on the monotonic clocks and a relative CLOCK_REALTIME one,
 * armed relative and absolute, one-shot, periodic and disarmed, blocking
 * or not, with and without close-on-exec. After restore each has its
 * clock, settime flags, status flags and exact interval, and its remaining
 * time went down by no more than its clock showed go by between the two
 * readings, which bracket them (more: it would expire early), and not by
 * the downtime: namespace time stood still, and a relative CLOCK_REALTIME
 * timer was armed for a duration, which runs on the monotonic clock. No
 * slack for how long the dump took (a second in a loaded guest). A dup()ed
 * fd still shares the first timer's description.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL

static const struct tcase {
	const char *name;
	int clockid;
	int flags;		/* timerfd_create() */
	int settime;		/* timerfd_settime() */
	long long value, interval;	/* ns; from now for TFD_TIMER_ABSTIME */
} cases[] = {
	{ "monotonic", CLOCK_MONOTONIC, 0, 0, 1000 * NS + 123457, 0 },
	{ "monotonic abs periodic", CLOCK_MONOTONIC, TFD_NONBLOCK, TFD_TIMER_ABSTIME,
	  2000 * NS + 999999, 3 * NS + 987 },
	{ "boottime periodic", CLOCK_BOOTTIME, TFD_CLOEXEC, 0, 3000 * NS + 1, NS + 1 },
	{ "boottime abs", CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC, TFD_TIMER_ABSTIME,
	  4000 * NS + 424242, 0 },
	{ "realtime relative", CLOCK_REALTIME, 0, 0, 5000 * NS + 5, 777 * NS },
	{ "boottime alarm", CLOCK_BOOTTIME_ALARM, TFD_NONBLOCK, 0, 6000 * NS + 6, 0 },
	{ "disarmed", CLOCK_MONOTONIC, TFD_CLOEXEC, 0, 0, 0 },
};

static int fds[ARRAY_SIZE(cases)], dupfd;
/* the remaining times at "ready", and the clock just before and after */
static long long before[ARRAY_SIZE(cases)], t1[ARRAY_SIZE(cases)], t2[ARRAY_SIZE(cases)];

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NS + ts->tv_nsec;
}

static struct timespec ns_ts(long long ns)
{
	struct timespec ts = { ns / NS, ns % NS };

	return ts;
}

static void fdinfo(int fd, int *clockid, unsigned int *flags)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		fail_errno("read %s", path);
	p = strstr(buf, "clockid:");
	if (!p || sscanf(p, "clockid: %d", clockid) != 1)
		fail("no clockid in %s", path);
	p = strstr(buf, "settime flags:");
	if (!p || sscanf(p, "settime flags: %o", flags) != 1)
		fail("no settime flags in %s", path);
}

static void arm(unsigned int i)
{
	const struct tcase *c = &cases[i];
	struct itimerspec its = { ns_ts(c->interval), ns_ts(c->value) };
	struct timespec now;

	fds[i] = timerfd_create(c->clockid, c->flags);
	if (fds[i] < 0) {
		if (errno == EPERM && c->clockid == CLOCK_BOOTTIME_ALARM)
			skip("%s: no CAP_WAKE_ALARM to make an alarm timer", c->name);
		fail_errno("timerfd_create(%s)", c->name);
	}
	if (c->settime & TFD_TIMER_ABSTIME) {
		clock_gettime(c->clockid, &now);
		its.it_value = ns_ts(ts_ns(&now) + c->value);
	}
	if (timerfd_settime(fds[i], c->settime, &its, NULL))
		fail_errno("timerfd_settime(%s)", c->name);
}

/* The clock whose time a timer's remaining time follows as the task sees it. */
static int follows(const struct tcase *c)
{
	return c->clockid == CLOCK_BOOTTIME || c->clockid == CLOCK_BOOTTIME_ALARM ?
	       CLOCK_BOOTTIME : CLOCK_MONOTONIC;
}

static long long now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts_ns(&ts);
}

/* The remaining time, and the clock of follows() just before and after. */
static long long remaining(unsigned int i, long long *interval, long long *a, long long *b)
{
	struct itimerspec its;

	*a = now_ns(follows(&cases[i]));
	if (timerfd_gettime(fds[i], &its))
		fail_errno("timerfd_gettime(%s)", cases[i].name);
	*b = now_ns(follows(&cases[i]));
	*interval = ts_ns(&its.it_interval);
	return ts_ns(&its.it_value);
}

static void check(unsigned int i)
{
	const struct tcase *c = &cases[i];
	long long left, interval, lost, a1, a2;
	unsigned int flags;
	int clockid, fl, fdfl;

	fdinfo(fds[i], &clockid, &flags);
	if (clockid != c->clockid || flags != (unsigned int)c->settime)
		fail("%s: clock %d, settime flags %o; was %d, %o", c->name, clockid, flags,
		     c->clockid, c->settime);
	fl = fcntl(fds[i], F_GETFL);
	fdfl = fcntl(fds[i], F_GETFD);
	if (!!(fl & O_NONBLOCK) != !!(c->flags & TFD_NONBLOCK) ||
	    !!(fdfl & FD_CLOEXEC) != !!(c->flags & TFD_CLOEXEC) || (fl & O_ACCMODE) != O_RDWR)
		fail("%s: status flags %#x, fd flags %#x", c->name, fl, fdfl);
	left = remaining(i, &interval, &a1, &a2);
	if (interval != c->interval)
		fail("%s: interval %lld ns, was %lld", c->name, interval, c->interval);
	lost = before[i] - left;
	if (!c->value && left)
		fail("%s: armed (%lld ns left)", c->name, left);
	if (c->value && (lost < 0 || lost > a2 - t1[i]))
		fail("%s: %lld ns left, %lld before, while its clock showed %lld ns at most "
		     "go by", c->name, left, before[i], a2 - t1[i]);
}

int main(int argc, char **argv)
{
	long long interval;
	unsigned int i;

	test_init(argc, argv);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		arm(i);
	dupfd = dup2(fds[0], 100);
	if (dupfd < 0)
		fail_errno("dup2");

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		before[i] = remaining(i, &interval, &t1[i], &t2[i]);
	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		check(i);
	/* one description: a status flag set through one fd shows on the other */
	if (fcntl(dupfd, F_SETFL, O_NONBLOCK) || !(fcntl(fds[0], F_GETFL) & O_NONBLOCK))
		fail("fd %d no longer shares the timer of fd %d", dupfd, fds[0]);
	pass();
}
