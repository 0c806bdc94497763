// SPDX-License-Identifier: GPL-2.0-only
/*
 * POSIX timers go on firing after restore, with their notification:
 *  - a one-shot CLOCK_MONOTONIC timer due 1.5 s after "ready" (inside the
 *    runner's gap) fires once, 1.5 s of namespace time after it was armed
 *    (not earlier), with its signal, value, timer id and SI_TIMER; late by
 *    no more than the task was kept from running (a slow dump freezes it
 *    past the expiry: the signal comes after the restore), measured as the
 *    longest gap between its clock readings while it waits for SIGTERM;
 *  - periodic CLOCK_MONOTONIC (50 ms, SIGEV_THREAD_ID) and CLOCK_BOOTTIME
 *    (100 ms) timers keep signalling: after the restore, deliveries plus
 *    overruns follow the time, period for period (WINDOW periods watched);
 *    since they were armed, never more than the namespace time allows (the
 *    downtime adds nothing).
 *
 * What the dump costs is not counted: the task is frozen with a timer's
 * signal queued, the kernel re-arms the timer only when that signal is
 * delivered and counts the periods missed then as its overruns, and no
 * interface lets a restore hand those on. So the periods of the freeze
 * (1 s in a loaded TCG guest: 11 of 30 periods) are lost, as many as the
 * dump took; a fixed slack for them made the test a timing test.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL
#define MS		1000000LL
#define ONESHOT_NS	(1500 * MS)
#define FIRE_SLACK_NS	(100 * MS)
#define WINDOW		10	/* periods watched after the restore */
#define PERIOD_SLACK	3	/* the one in flight, the one pending, rounding */

static struct ptimer {
	const char *name;
	int clockid, notify, signo;
	long long value, interval;
	timer_t t;
	long long start;
	/* from the handler */
	volatile int count, overruns, bad;
	/* at SIGTERM (after the restore): expirations seen, and when */
	int base;
	long long base_ns;
	volatile long long fired;
} timers[] = {
	{ "one-shot", CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, ONESHOT_NS, 0 },
	{ "monotonic 50 ms", CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGUSR1, 50 * MS, 50 * MS },
	{ "boottime 100 ms", CLOCK_BOOTTIME, SIGEV_SIGNAL, 0, 100 * MS, 100 * MS },
};

static long long now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	struct ptimer *p = si->si_value.sival_ptr;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(timers); i++)
		if (p == &timers[i])
			break;
	if (i == ARRAY_SIZE(timers)) {
		timers[0].bad = sig;
		return;
	}
	if (si->si_code != SI_TIMER || si->si_timerid != (long)p->t || sig != p->signo)
		p->bad = sig;
	p->fired = now_ns(p->clockid);
	p->count++;
	p->overruns += si->si_overrun;
}

static void arm(struct ptimer *p)
{
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct sigevent sev;
	struct itimerspec its = {
		{ p->interval / NS, p->interval % NS }, { p->value / NS, p->value % NS },
	};

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = p->notify;
	sev.sigev_signo = p->signo;
	sev.sigev_value.sival_ptr = p;
	if (p->notify & SIGEV_THREAD_ID)
		sev._sigev_un._tid = syscall(SYS_gettid);
	sigaction(p->signo, &sa, NULL);
	if (timer_create(p->clockid, &sev, &p->t))
		fail_errno("timer_create(%s)", p->name);
	p->start = now_ns(p->clockid);
	if (timer_settime(p->t, 0, &its, NULL))
		fail_errno("timer_settime(%s)", p->name);
}

/* WINDOW periods of every periodic timer have passed since SIGTERM */
static int watched(void)
{
	unsigned int i;

	for (i = 1; i < ARRAY_SIZE(timers); i++)
		if (now_ns(timers[i].clockid) - timers[i].base_ns < WINDOW * timers[i].interval)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 10 * MS };
	long long late, elapsed, deadline, stall;
	struct ptimer *p = &timers[0];
	sigset_t all, old;
	unsigned int i;
	int total;

	test_init(argc, argv);
	timers[0].signo = SIGRTMIN + 1;
	timers[2].signo = SIGRTMIN + 4;
	for (i = 0; i < ARRAY_SIZE(timers); i++)
		arm(&timers[i]);

	test_ready();
	/* the longest stretch the task was kept from running: the freeze */
	stall = test_waitsig_stall();

	sigfillset(&all);
	for (i = 1; i < ARRAY_SIZE(timers); i++) {
		sigprocmask(SIG_BLOCK, &all, &old);
		timers[i].base = timers[i].count + timers[i].overruns;
		timers[i].base_ns = now_ns(timers[i].clockid);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	deadline = now_ns(CLOCK_MONOTONIC) + 10 * NS;
	while ((!p->count || !watched()) && now_ns(CLOCK_MONOTONIC) < deadline)
		nanosleep(&nap, NULL);
	sigprocmask(SIG_BLOCK, &all, &old);

	late = p->fired - (p->start + ONESHOT_NS);
	test_msg("%s: %d deliveries, %.6f s after it was due; stalled %.6f s at most",
		 p->name, p->count, late / 1e9, stall / 1e9);
	if (p->count != 1 || p->bad)
		fail("%s: %d deliveries (bad signal %d)", p->name, p->count, p->bad);
	/* never early: namespace time reached the same moment */
	if (late < 0 || late > stall + FIRE_SLACK_NS)
		fail("%s: fired %.6f s off its time (stalled %.6f s at most)", p->name,
		     late / 1e9, stall / 1e9);

	for (i = 1; i < ARRAY_SIZE(timers); i++) {
		p = &timers[i];
		elapsed = now_ns(p->clockid) - p->start;
		total = p->count + p->overruns;
		test_msg("%s: %d deliveries + %d overruns in %.3f s", p->name, p->count,
			 p->overruns, elapsed / 1e9);
		if (p->bad)
			fail("%s: a wrong signal or siginfo (%d)", p->name, p->bad);
		if (total > elapsed / p->interval + 1)
			fail("%s: %d expirations in %.3f s", p->name, total, elapsed / 1e9);
		elapsed = now_ns(p->clockid) - p->base_ns;
		test_msg("%s: %d expirations in the %.3f s after the restore", p->name,
			 total - p->base, elapsed / 1e9);
		if (total - p->base + PERIOD_SLACK < elapsed / p->interval)
			fail("%s: %d expirations in the %.3f s after the restore", p->name,
			     total - p->base, elapsed / 1e9);
	}
	pass();
}
