// SPDX-License-Identifier: GPL-2.0-only
/*
 * ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF armed with long values and
 * intervals: after restore each is still armed, with the same interval and
 * a remaining time no larger than before (and not much smaller).
 */
#include <signal.h>
#include <sys/time.h>

#include "zdtm.h"

static const struct {
	int which;
	const char *name;
	long value, interval;
} timers[] = {
	{ ITIMER_REAL, "ITIMER_REAL", 1000, 500 },
	{ ITIMER_VIRTUAL, "ITIMER_VIRTUAL", 2000, 700 },
	{ ITIMER_PROF, "ITIMER_PROF", 3000, 900 },
};

static double tv2d(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct itimerval before[3], it;
	unsigned int i;
	double b, a;

	test_init(argc, argv);
	/* never fire: ignore the signals in case */
	signal(SIGALRM, SIG_IGN);
	signal(SIGVTALRM, SIG_IGN);
	signal(SIGPROF, SIG_IGN);
	for (i = 0; i < ARRAY_SIZE(timers); i++) {
		it.it_value.tv_sec = timers[i].value;
		it.it_value.tv_usec = 123456;
		it.it_interval.tv_sec = timers[i].interval;
		it.it_interval.tv_usec = 654321;
		if (setitimer(timers[i].which, &it, NULL))
			fail_errno("setitimer(%s)", timers[i].name);
	}
	/* burn a little CPU so the CPU-time timers move */
	for (i = 0; i < 20000000; i++)
		asm volatile("" ::: "memory");
	for (i = 0; i < ARRAY_SIZE(timers); i++)
		getitimer(timers[i].which, &before[i]);

	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(timers); i++) {
		if (getitimer(timers[i].which, &it))
			fail_errno("getitimer");
		if (it.it_interval.tv_sec != timers[i].interval ||
		    it.it_interval.tv_usec != 654321)
			fail("%s: interval %ld.%06ld, was %ld.654321", timers[i].name,
			     (long)it.it_interval.tv_sec, (long)it.it_interval.tv_usec,
			     timers[i].interval);
		b = tv2d(&before[i].it_value);
		a = tv2d(&it.it_value);
		if (a == 0)
			fail("%s is disarmed", timers[i].name);
		if (a > b)
			fail("%s: %.6f s remain, only %.6f did before", timers[i].name, a, b);
		if (a < b - 60)
			fail("%s: %.6f s remain, %.6f did before", timers[i].name, a, b);
	}
	pass();
}
