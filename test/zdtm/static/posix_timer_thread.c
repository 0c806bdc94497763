// SPDX-License-Identifier: GPL-2.0-only
/*
 * A POSIX timer aimed at a thread other than the main one
 * (SIGEV_THREAD_ID), armed periodic across the dump. After restore
 * /proc/self/timers names the same thread, and the timer's signal, with
 * its value, still reaches that thread alone: the main thread blocks the
 * signal, the thread takes it in a handler that records who ran it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define TIMER_SIG	(SIGRTMIN + 3)
#define TIMER_VALUE	0x5eed

static volatile pid_t thread_tid, hit_tid;
static volatile int hits, bad_value;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	hit_tid = syscall(SYS_gettid);
	if (si->si_value.sival_int != TIMER_VALUE)
		bad_value = si->si_value.sival_int;
	__atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
}

static void *thread_fn(void *arg)
{
	sigset_t only;

	sigfillset(&only);
	sigdelset(&only, TIMER_SIG);
	pthread_sigmask(SIG_SETMASK, &only, NULL);
	__atomic_store_n(&thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* The tid /proc/self/timers names for timer @id ("notify: signal/tid.N"). */
static pid_t timers_target(timer_t id)
{
	char buf[4096], key[32], *p;
	int tid = -1;

	if (test_read_file("/proc/self/timers", buf, sizeof(buf)) <= 0)
		fail_errno("read /proc/self/timers");
	snprintf(key, sizeof(key), "ID: %ld\n", (long)(intptr_t)id);
	p = strstr(buf, key);
	if (p)
		p = strstr(p, "notify:");
	if (!p || sscanf(p, "notify: signal/tid.%d", &tid) != 1)
		fail("no thread notification for timer %ld in /proc/self/timers", (long)(intptr_t)id);
	return tid;
}

int main(int argc, char **argv)
{
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } };
	struct sigaction sa = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO };
	struct sigevent sev;
	sigset_t block;
	pthread_t th;
	timer_t id;
	int i, seen;

	test_init(argc, argv);
	sigemptyset(&block);
	sigaddset(&block, TIMER_SIG);
	if (sigaction(TIMER_SIG, &sa, NULL) || sigprocmask(SIG_BLOCK, &block, NULL))
		fail_errno("sigaction");
	if (pthread_create(&th, NULL, thread_fn, NULL))
		fail("pthread_create");
	while (!__atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = TIMER_SIG;
	sev.sigev_value.sival_int = TIMER_VALUE;
	sev._sigev_un._tid = thread_tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &id))
		fail_errno("timer_create");
	if (timer_settime(id, 0, &its, NULL))
		fail_errno("timer_settime");
	while (!__atomic_load_n(&hits, __ATOMIC_RELAXED))
		usleep(1000);

	test_ready();
	test_waitsig();

	if (timers_target(id) != thread_tid)
		fail("timer %ld aims at %d, not thread %d", (long)(intptr_t)id,
		     timers_target(id), thread_tid);
	seen = __atomic_load_n(&hits, __ATOMIC_RELAXED);
	hit_tid = 0;
	for (i = 0; i < 5000 && __atomic_load_n(&hits, __ATOMIC_RELAXED) < seen + 3; i++)
		usleep(1000);
	if (__atomic_load_n(&hits, __ATOMIC_RELAXED) < seen + 3)
		fail("the timer stopped: %d signals in 5 s", hits - seen);
	if (hit_tid != thread_tid)
		fail("the timer's signal ran in %d, not thread %d", hit_tid, thread_tid);
	if (bad_value)
		fail("the timer's signal carried value %#x", bad_value);
	pass();
}
