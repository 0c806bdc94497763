// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unread expirations of timerfds survive, and nothing is added to them:
 *  - a disarmed timer given 12345 ticks with TFD_IOC_SET_TICKS;
 *  - a one-shot timer that expired before the dump: 1 tick, disarmed;
 *  - a periodic timer (1000 s) that expired once before the dump: 1 tick,
 *    and its next expiry still ~1000 s away;
 *  - the same with its count set to 7.
 * All are O_NONBLOCK: a second read must say EAGAIN.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS	_IOW('T', 0, uint64_t)
#endif

#define NS		1000000000LL

static struct tcase {
	const char *name;
	long long value, interval;
	uint64_t set;		/* TFD_IOC_SET_TICKS, once it fired */
	uint64_t expect;
	int fd;
} cases[] = {
	{ "disarmed, 12345 set", 0, 0, 12345, 12345 },
	{ "one-shot, expired", 1000000, 0, 0, 1 },
	{ "periodic, expired once", 1000000, 1000 * NS, 0, 1 },
	{ "periodic, 7 set", 1000000, 1000 * NS, 7, 7 },
};

static void arm(struct tcase *c)
{
	struct itimerspec its = {
		{ c->interval / NS, c->interval % NS }, { c->value / NS, c->value % NS },
	};

	c->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	if (c->fd < 0)
		fail_errno("timerfd_create");
	if (timerfd_settime(c->fd, 0, &its, NULL))
		fail_errno("timerfd_settime(%s)", c->name);
}

static void set_ticks(struct tcase *c)
{
	if (!c->set)
		return;
	if (ioctl(c->fd, TFD_IOC_SET_TICKS, &c->set)) {
		/* criu restores unread expirations with it too */
		if (errno == ENOTTY)
			skip("no TFD_IOC_SET_TICKS (a kernel without CONFIG_CHECKPOINT_RESTORE)");
		fail_errno("TFD_IOC_SET_TICKS(%s)", c->name);
	}
}

static void check(struct tcase *c)
{
	struct itimerspec its;
	uint64_t ticks;
	double left;

	if (read(c->fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		fail_errno("%s: read", c->name);
	if (ticks != c->expect)
		fail("%s: %lu unread expirations, expected %lu", c->name,
		     (unsigned long)ticks, (unsigned long)c->expect);
	if (read(c->fd, &ticks, sizeof(ticks)) >= 0 || errno != EAGAIN)
		fail("%s: a second read did not say EAGAIN", c->name);
	if (timerfd_gettime(c->fd, &its))
		fail_errno("%s: timerfd_gettime", c->name);
	left = its.it_value.tv_sec + its.it_value.tv_nsec / 1e9;
	if (!c->interval && left)
		fail("%s: armed again (%.3f s left)", c->name, left);
	if (c->interval && (left > c->interval / 1e9 || left < c->interval / 1e9 - 10))
		fail("%s: next expiry in %.3f s", c->name, left);
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 20000000 };
	unsigned int i;

	test_init(argc, argv);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		arm(&cases[i]);
	nanosleep(&nap, NULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		set_ticks(&cases[i]);

	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		check(&cases[i]);
	pass();
}
