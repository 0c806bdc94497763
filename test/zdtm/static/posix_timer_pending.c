// SPDX-License-Identifier: GPL-2.0-only
/*
 * A timer whose signal is queued (blocked) at the dump delivers it exactly
 * once after restore, with its siginfo, and does not expire again early:
 *  - a one-shot timer (SIGRTMIN+3) that expired: one signal, disarmed;
 *  - periodic timers (1000 s) that expired once, to the process (an RT
 *    signal) and to the thread (SIGUSR2): one signal each, and their next
 *    expiry still ~1000 s away.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL

static struct ptimer {
	const char *name;
	int notify, signo;
	long long interval;
	timer_t t;
} timers[] = {
	{ "one-shot", SIGEV_SIGNAL, 0, 0 },
	{ "periodic", SIGEV_SIGNAL, 0, 1000 * NS },
	{ "periodic, to the thread", SIGEV_THREAD_ID, SIGUSR2, 1000 * NS },
};

static void arm(struct ptimer *p)
{
	struct sigevent sev;
	struct itimerspec its = { { p->interval / NS, p->interval % NS }, { 0, 1000000 } };

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = p->notify;
	sev.sigev_signo = p->signo;
	sev.sigev_value.sival_ptr = p;
	if (p->notify & SIGEV_THREAD_ID)
		sev._sigev_un._tid = syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &p->t))
		fail_errno("timer_create(%s)", p->name);
	if (timer_settime(p->t, 0, &its, NULL))
		fail_errno("timer_settime(%s)", p->name);
}

static void check(struct ptimer *p)
{
	struct timespec zero = { 0, 0 };
	struct itimerspec its;
	sigset_t set;
	siginfo_t si;
	double left;

	sigemptyset(&set);
	sigaddset(&set, p->signo);
	if (sigtimedwait(&set, &si, &zero) != p->signo)
		fail_errno("%s: no signal %d pending", p->name, p->signo);
	if (si.si_code != SI_TIMER || si.si_timerid != (long)p->t ||
	    si.si_value.sival_ptr != p)
		fail("%s: siginfo code %d, timer %d, value %p", p->name, si.si_code,
		     si.si_timerid, si.si_value.sival_ptr);
	if (sigtimedwait(&set, &si, &zero) >= 0)
		fail("%s: signal %d delivered twice", p->name, p->signo);
	if (timer_gettime(p->t, &its))
		fail_errno("%s: timer_gettime", p->name);
	left = its.it_value.tv_sec + its.it_value.tv_nsec / 1e9;
	if (!p->interval && left)
		fail("%s: armed again, %.3f s left", p->name, left);
	if (p->interval && (left > p->interval / 1e9 || left < p->interval / 1e9 - 10))
		fail("%s: next expiry in %.3f s", p->name, left);
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 20000000 };
	sigset_t blocked;
	unsigned int i;

	test_init(argc, argv);
	timers[0].signo = SIGRTMIN + 3;
	timers[1].signo = SIGRTMIN + 5;
	sigemptyset(&blocked);
	for (i = 0; i < ARRAY_SIZE(timers); i++)
		sigaddset(&blocked, timers[i].signo);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	for (i = 0; i < ARRAY_SIZE(timers); i++)
		arm(&timers[i]);
	nanosleep(&nap, NULL);

	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(timers); i++)
		check(&timers[i]);
	pass();
}
