// SPDX-License-Identifier: GPL-2.0-only
/*
 * POSIX timers keep their ids, clocks and notifications: sparse ids (some
 * timers deleted; with the argument "big", as posix_timer_ids_big runs it,
 * one made with id 1000000 through prctl PR_TIMER_CREATE_RESTORE_IDS,
 * which needs Linux 6.16), the default
 * notification, signals with a value, SIGEV_NONE, SIGEV_THREAD_ID, and
 * the monotonic, wall, TAI and CPU-time clocks (of the process, of the
 * thread, and of the process named by its pid). /proc/self/timers must
 * read the same after restore; each timer keeps its interval exactly and
 * its remaining time up to what the task ran: no timer lost more than its
 * clock (the monotonic one, for wall-clock and CPU-time timers) showed go
 * by between the two readings, which bracket them (more: it would expire
 * early), nor gained any. No slack for how long the dump took (a second in
 * a loaded guest): what the task's clock shows is what counts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

/* Linux 6.16 */
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF	0
#define PR_TIMER_CREATE_RESTORE_IDS_ON	1

#define NS		1000000000LL
#define NR_CREATED	14
#define BIG_ID		1000000

enum { NOTIFY_DEFAULT = -1 };

static struct tcase {
	int id;			/* wanted */
	int clockid;		/* -100: the pid's CPU clock */
	int notify, signo;
	unsigned long long value;
	long long left, interval;
	timer_t t;
	long long before, t1, t2;	/* and the clock just before and after */
} cases[] = {
	{ 0, CLOCK_REALTIME, NOTIFY_DEFAULT, 0, 0, 1000 * NS + 1, 0 },
	{ 3, CLOCK_MONOTONIC, SIGEV_SIGNAL, 36, 0xdeadbeefcafeULL, 1000 * NS + 3, 500 * NS + 7 },
	{ 7, CLOCK_BOOTTIME, SIGEV_THREAD_ID, SIGUSR2, 7, 2000 * NS + 5, 0 },
	{ 9, CLOCK_PROCESS_CPUTIME_ID, SIGEV_NONE, 0, 9, 3000 * NS, NS },
	{ 11, -100, SIGEV_SIGNAL, 40, 11, 0, 0 },
	{ 12, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIGPROF, 0, 4000 * NS, 2 * NS },
	{ 13, CLOCK_TAI, SIGEV_SIGNAL | SIGEV_THREAD_ID, 50, ~0ULL, 5000 * NS, 0 },
	{ BIG_ID, CLOCK_MONOTONIC, SIGEV_NONE, 0, 0, 6000 * NS, 3 * NS },
};

static int clock_of(const struct tcase *c)
{
	clockid_t clk;

	if (c->clockid != -100)
		return c->clockid;
	if (clock_getcpuclockid(getpid(), &clk))
		fail("clock_getcpuclockid");
	return clk;
}

static timer_t create(struct tcase *c)
{
	struct sigevent sev;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = c->notify;
	sev.sigev_signo = c->signo;
	sev.sigev_value.sival_ptr = (void *)(unsigned long)c->value;
	if (c->notify & SIGEV_THREAD_ID)
		sev._sigev_un._tid = syscall(SYS_gettid);
	if (timer_create(clock_of(c), c->notify == NOTIFY_DEFAULT ? NULL : &sev, &t))
		fail_errno("timer_create(id %d)", c->id);
	return t;
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NS + ts->tv_nsec;
}

/* The clock whose time a timer's remaining time follows as the task sees it. */
static int follows(const struct tcase *c)
{
	return c->clockid == CLOCK_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
}

static long long now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts_ns(&ts);
}

/* The remaining time, and the clock of follows() just before and after. */
static long long remaining(struct tcase *c, long long *interval, long long *t1,
			   long long *t2)
{
	struct itimerspec its;

	*t1 = now_ns(follows(c));
	if (timer_gettime(c->t, &its))
		fail_errno("timer_gettime(%d)", c->id);
	*t2 = now_ns(follows(c));
	*interval = ts_ns(&its.it_interval);
	return ts_ns(&its.it_value);
}

/* /proc/self/timers with its entries sorted by id */
static int by_id(const void *a, const void *b)
{
	return atoi(*(char *const *)a + 4) - atoi(*(char *const *)b + 4);
}

static void read_timers(char *out, size_t size)
{
	static char buf[16384];
	char *ent[64], *p;
	int n = 0, i;
	size_t len = 0;

	if (test_read_file("/proc/self/timers", buf, sizeof(buf)) < 0)
		fail_errno("read /proc/self/timers");
	for (p = strstr(buf, "ID: "); p && n < 64; p = strstr(p + 1, "\nID: ")) {
		if (*p == '\n')
			*p++ = '\0';
		ent[n++] = p;
	}
	qsort(ent, n, sizeof(*ent), by_id);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(out + len, size - len, "%s\n", ent[i]);
}

int main(int argc, char **argv)
{
	static char before[16384], after[16384];
	timer_t made[NR_CREATED];
	long long interval, lost;
	struct itimerspec its;
	unsigned int i, j;
	int big;

	test_init(argc, argv);
	/* the ids come in order: take 0..13, keep the wanted ones */
	for (i = 0; i < NR_CREATED; i++) {
		for (j = 0; j < ARRAY_SIZE(cases) && cases[j].id != (int)i; j++)
			;
		made[i] = j < ARRAY_SIZE(cases) ? create(&cases[j]) : create(&cases[3]);
		if ((long)made[i] != (long)i)
			fail("timer_create gave id %ld, not %u", (long)made[i], i);
		if (j < ARRAY_SIZE(cases))
			cases[j].t = made[i];
	}
	for (i = 0; i < NR_CREATED; i++) {
		for (j = 0; j < ARRAY_SIZE(cases) && cases[j].id != (int)i; j++)
			;
		if (j == ARRAY_SIZE(cases) && timer_delete(made[i]))
			fail_errno("timer_delete(%u)", i);
	}
	big = optind < argc && !strcmp(argv[optind], "big");
	if (big && prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0, 0)) {
		if (errno == EINVAL)
			skip("no PR_TIMER_CREATE_RESTORE_IDS (Linux 6.16+): no timer with id %d",
			     BIG_ID);
		fail_errno("PR_TIMER_CREATE_RESTORE_IDS");
	}
	if (big) {
		struct tcase *c = &cases[ARRAY_SIZE(cases) - 1];
		struct sigevent sev = { .sigev_notify = SIGEV_NONE };

		int id = BIG_ID;

		/* glibc's timer_create() passes its own id variable: go direct */
		if (syscall(SYS_timer_create, c->clockid, &sev, &id) || id != BIG_ID)
			fail_errno("timer_create(id %d)", BIG_ID);
		c->t = (timer_t)(long)id;
		prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0, 0);
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].id == BIG_ID && !big)
			continue;
		its.it_value.tv_sec = cases[i].left / NS;
		its.it_value.tv_nsec = cases[i].left % NS;
		its.it_interval.tv_sec = cases[i].interval / NS;
		its.it_interval.tv_nsec = cases[i].interval % NS;
		if (timer_settime(cases[i].t, 0, &its, NULL))
			fail_errno("timer_settime(%d)", cases[i].id);
		cases[i].before = remaining(&cases[i], &interval, &cases[i].t1, &cases[i].t2);
	}
	read_timers(before, sizeof(before));

	test_ready();
	test_waitsig();

	read_timers(after, sizeof(after));
	if (strcmp(before, after))
		fail("/proc/self/timers changed:\n--- before\n%s--- after\n%s", before, after);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tcase *c = &cases[i];
		long long left, a1, a2;

		if (c->id == BIG_ID && !big)
			continue;
		left = remaining(c, &interval, &a1, &a2);
		lost = c->before - left;
		if (interval != c->interval)
			fail("timer %d: interval %lld ns, was %lld", c->id, interval, c->interval);
		if (!c->left != !left)
			fail("timer %d: %lld ns left, %lld before", c->id, left, c->before);
		if (!c->left)
			continue;
		if (lost < 0 || lost > a2 - c->t1)
			fail("timer %d: %lld ns left, %lld before, while its clock showed "
			     "%lld ns at most go by", c->id, left, c->before, a2 - c->t1);
	}
	pass();
}
