// SPDX-License-Identifier: GPL-2.0-only
/*
 * A short periodic ITIMER_REAL (20 ms) keeps firing after restore: the
 * SIGALRM handler's counter goes on growing, and the interval is kept.
 */
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "zdtm.h"

static volatile unsigned long ticks;

static void on_alarm(int sig)
{
	ticks++;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct timespec t = { 0, 500 * 1000 * 1000 };
	unsigned long before, after;

	test_init(argc, argv);
	sigaction(SIGALRM, &sa, NULL);
	if (setitimer(ITIMER_REAL, &it, NULL))
		fail_errno("setitimer");
	while (ticks < 3)
		pause();

	test_ready();
	test_waitsig();

	before = ticks;
	while (nanosleep(&t, &t) && errno == EINTR)
		;
	after = ticks;
	if (after < before + 5)
		fail("the timer fired %lu times in 0.5 s after restore", after - before);
	if (getitimer(ITIMER_REAL, &it) || it.it_interval.tv_sec != 0 ||
	    it.it_interval.tv_usec != 20000)
		fail("interval is %ld.%06ld", (long)it.it_interval.tv_sec,
		     (long)it.it_interval.tv_usec);
	test_msg("%lu ticks in all, %lu after SIGTERM", after, after - before);
	pass();
}
