// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process with several threads, each with state of its own: a blocked
 * mask, real-time signals pending in its private queue (with values), a
 * sigaltstack, a name, a TLS variable and its fs base, a gs base, and its
 * CPU affinity when there is more than one CPU. One thread is blocked in a
 * FUTEX_WAIT, one in a long clock_nanosleep, one computes without a pause,
 * one spins on sched_yield, one sleeps in timed futex waits. The main
 * thread has a mask, a private pending signal and an altstack of its own,
 * and the process a shared pending signal.
 *
 * After SIGTERM the main thread raises a flag in memory the threads share
 * (and wakes the futex waiter and the sleeper); each thread checks its own
 * state, reports in its slot, and the main thread collects the reports.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM	(1U << 31)
#endif

#define BIT(sig)	(1ULL << ((sig) - 1))
#define SLEEP_S		3600
#define LCG_A		6364136223846793005ULL
#define LCG_C		1442695040888963407ULL

enum kind { W_FUTEX, W_SLEEP, W_BUSY, W_SPIN, W_TIMED, NR_WORKERS };

static const char *const names[NR_WORKERS] = {
	"w-futex", "w-sleep", "w-busy", "w-spin", "w-timed",
};

/* signals each worker blocks besides SIGTERM and the sleeper's SIGUSR2 */
static const unsigned long long extra_block[NR_WORKERS] = {
	BIT(SIGUSR1) | BIT(SIGHUP),
	BIT(SIGWINCH),
	BIT(SIGPIPE) | BIT(SIGALRM) | BIT(SIGCHLD),
	0,
	BIT(SIGUSR1) | BIT(SIGURG) | BIT(60),
};

struct worker {
	pthread_t th;
	int idx;
	pid_t tid;
	unsigned long long mask;	/* its blocked mask, as set */
	unsigned long long pend;	/* its private pending signals */
	int rtsig;			/* queued twice, with values */
	void *alt;
	size_t altsize;
	int altflags;
	unsigned long fsbase, gsbase;
	int cpu;			/* -1: not pinned */
	/* the busy thread's published progress */
	volatile unsigned long long n, x;
	volatile int state;		/* 0 setting up, 1 ready, 2 passed, 3 failed */
	char why[256];
};

static struct worker workers[NR_WORKERS];
static volatile int verify;		/* raised by the main thread after SIGTERM */
static int go_word;			/* the futex the futex thread waits on */
static int timed_word;
static volatile sig_atomic_t usr2_seen;
static __thread unsigned long long tls_val;
static int tkill_code;
static int cpus[CPU_SETSIZE], nr_cpus;

static long futex(int *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static unsigned long long get_mask(void)
{
	unsigned long long m;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, sizeof(m));
	return m;
}

static void set_mask(unsigned long long m)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, sizeof(m));
}

/* "Key:" of /proc/thread-self/status as a hex mask */
static int thread_status_mask(const char *key, unsigned long long *v)
{
	char buf[8192], *p;
	size_t klen = strlen(key);

	if (test_read_file("/proc/thread-self/status", buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			*v = strtoull(p + klen + 1, NULL, 16);
			return 0;
		}
	}
	return -1;
}

static void queue_self(int sig, int value)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = value;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, &si))
		fail_errno("rt_tgsigqueueinfo %d", sig);
}

static int wfail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
	__atomic_store_n(&w->state, 3, __ATOMIC_RELEASE);
	return -1;
}

static unsigned long long lcg_jump(unsigned long long x, unsigned long long n)
{
	unsigned long long am = 1, ap = 0, cm = LCG_A, cp = LCG_C;

	while (n) {
		if (n & 1) {
			am *= cm;
			ap = ap * cm + cp;
		}
		cp = (cm + 1) * cp;
		cm *= cm;
		n >>= 1;
	}
	return am * x + ap;
}

static void setup(struct worker *w)
{
	stack_t ss;

	w->tid = gettid();
	if (prctl(PR_SET_NAME, names[w->idx]))
		fail_errno("PR_SET_NAME");
	tls_val = test_pattern(11, w->idx);
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &w->fsbase))
		fail_errno("ARCH_GET_FS");
	w->gsbase = (unsigned long)w + 0x10 * w->idx;
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, w->gsbase))
		fail_errno("ARCH_SET_GS");

	w->altsize = (64 << 10) * (w->idx + 1);
	w->alt = mmap(NULL, w->altsize, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->alt == MAP_FAILED)
		fail_errno("mmap altstack");
	w->altflags = w->idx == W_BUSY ? SS_AUTODISARM : 0;
	ss.ss_sp = w->alt;
	ss.ss_size = w->altsize;
	ss.ss_flags = w->altflags;
	if (sigaltstack(&ss, NULL))
		fail_errno("sigaltstack");

	w->cpu = -1;
	if (nr_cpus > 1) {
		cpu_set_t set;

		w->cpu = cpus[(w->idx + 1) % nr_cpus];
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fail_errno("sched_setaffinity %d", w->cpu);
	}

	/* signals 34.. are free of glibc: one per worker, queued twice */
	w->mask = BIT(SIGTERM) | extra_block[w->idx];
	w->rtsig = SIGRTMIN + 2 + w->idx;
	w->mask |= BIT(w->rtsig) | BIT(SIGRTMIN + 20);
	if (w->idx != W_SLEEP)
		w->mask |= BIT(SIGUSR2);
	set_mask(w->mask);
	queue_self(w->rtsig, w->idx * 100 + 1);
	queue_self(w->rtsig, w->idx * 100 + 2);
	w->pend = BIT(w->rtsig);
	if (w->idx == W_FUTEX) {
		/* and a standard one, sent the plain way */
		syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
		w->pend |= BIT(SIGUSR1);
	}
}

static int check(struct worker *w)
{
	struct timespec zero = { 0, 0 };
	unsigned long long m, fs, gs;
	char name[32] = "";
	sigset_t set;
	siginfo_t si;
	stack_t ss;
	int i, sig;

	if (gettid() != w->tid)
		return wfail(w, "tid %d, was %d", gettid(), w->tid);
	m = get_mask();
	if (m != w->mask)
		return wfail(w, "blocked mask %#llx, was %#llx", m, w->mask);
	if (thread_status_mask("SigPnd", &m))
		return wfail(w, "no SigPnd in /proc/thread-self/status");
	if (m != w->pend)
		return wfail(w, "private pending %#llx, was %#llx", m, w->pend);
	prctl(PR_GET_NAME, name);
	if (strcmp(name, names[w->idx]))
		return wfail(w, "name '%s'", name);
	if (tls_val != test_pattern(11, w->idx))
		return wfail(w, "TLS variable %#llx", tls_val);
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) || fs != w->fsbase)
		return wfail(w, "fs base %#llx, was %#lx", fs, w->fsbase);
	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &gs) || gs != w->gsbase)
		return wfail(w, "gs base %#llx, was %#lx", gs, w->gsbase);
	if (sigaltstack(NULL, &ss))
		return wfail(w, "sigaltstack: %m");
	if (ss.ss_sp != w->alt || ss.ss_size != w->altsize || ss.ss_flags != w->altflags)
		return wfail(w, "altstack %p+%zu flags %#x, was %p+%zu flags %#x", ss.ss_sp,
			     ss.ss_size, ss.ss_flags, w->alt, w->altsize, w->altflags);
	if (w->cpu >= 0) {
		cpu_set_t cs;

		if (sched_getaffinity(0, sizeof(cs), &cs))
			return wfail(w, "sched_getaffinity: %m");
		if (CPU_COUNT(&cs) != 1 || !CPU_ISSET(w->cpu, &cs))
			return wfail(w, "affinity: %d CPUs, CPU %d %s", CPU_COUNT(&cs),
				     w->cpu, CPU_ISSET(w->cpu, &cs) ? "in" : "not in");
	}

	/* the queued values come out in order, then nothing more */
	sigemptyset(&set);
	sigaddset(&set, w->rtsig);
	for (i = 1; i <= 2; i++) {
		sig = sigtimedwait(&set, &si, &zero);
		if (sig != w->rtsig)
			return wfail(w, "signal %d: dequeued %d (%m)", w->rtsig, sig);
		if (si.si_code != SI_QUEUE || si.si_pid != getpid() ||
		    si.si_value.sival_int != w->idx * 100 + i)
			return wfail(w, "signal %d #%d: code %d pid %d value %d", sig, i,
				     si.si_code, si.si_pid, si.si_value.sival_int);
	}
	if (sigtimedwait(&set, &si, &zero) >= 0)
		return wfail(w, "signal %d queued a third time", w->rtsig);
	if (w->pend & BIT(SIGUSR1)) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sig = sigtimedwait(&set, &si, &zero);
		if (sig != SIGUSR1 || si.si_code != tkill_code || si.si_pid != getpid())
			return wfail(w, "SIGUSR1: dequeued %d code %d pid %d", sig,
				     si.si_code, si.si_pid);
	}
	if (thread_status_mask("SigPnd", &m) || m)
		return wfail(w, "private pending %#llx after dequeuing", m);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int wait_futex(struct worker *w)
{
	int spurious = 0;

	while (!__atomic_load_n(&go_word, __ATOMIC_ACQUIRE)) {
		if (futex(&go_word, FUTEX_WAIT_PRIVATE, 0, NULL) == 0) {
			spurious += !__atomic_load_n(&go_word, __ATOMIC_ACQUIRE);
			continue;
		}
		if (errno != EAGAIN && errno != EINTR)
			return wfail(w, "FUTEX_WAIT: %m");
	}
	if (spurious)
		test_msg("futex thread: %d spurious wake-ups", spurious);
	return 0;
}

static int wait_sleep(struct worker *w)
{
	struct timespec req = { SLEEP_S, 0 }, rem;
	double start = now();
	int eintr = 0;

	while (!usr2_seen) {
		/* it returns the error, errno is left alone */
		int ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);

		if (!ret)
			return wfail(w, "slept %.1f s of %d without SIGUSR2", now() - start,
				     SLEEP_S);
		if (ret != EINTR)
			return wfail(w, "clock_nanosleep: %s", strerror(ret));
		if (rem.tv_sec > req.tv_sec || rem.tv_nsec >= 1000000000 ||
		    rem.tv_sec < req.tv_sec - 600)
			return wfail(w, "clock_nanosleep left %ld.%09ld of %ld.%09ld",
				     (long)rem.tv_sec, rem.tv_nsec, (long)req.tv_sec,
				     req.tv_nsec);
		eintr += !usr2_seen;
		req = rem;
	}
	if (eintr)
		test_msg("sleeper: %d EINTR without a signal", eintr);
	return 0;
}

/* Registers carry the loop: a bad one shows in x, n or d at the end. */
static int busy(struct worker *w)
{
	unsigned long long x = test_pattern(3, 3), x0 = x, n = 0;
	struct timespec pause = { 0, 1000 * 1000 };
	double d = 0, t = now();

	for (;;) {
		x = x * LCG_A + LCG_C;
		n++;
		d += 1.0;
		if (!(n & 0xffff)) {
			w->n = n;
			w->x = x;
			if (verify)
				break;
			/* leave the shared CPUs some air: 5 ms on, 1 ms off */
			if (now() - t > 0.005) {
				nanosleep(&pause, NULL);
				t = now();
			}
		}
	}
	if (d != (double)n)
		return wfail(w, "the FP counter is %.0f after %llu rounds", d, n);
	if (x != lcg_jump(x0, n))
		return wfail(w, "the LCG is %#llx after %llu rounds, not %#llx", x, n,
			     lcg_jump(x0, n));
	return 0;
}

static int spin(struct worker *w)
{
	while (!verify)
		sched_yield();
	return 0;
}

static int timed(struct worker *w)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	while (!verify) {
		if (futex(&timed_word, FUTEX_WAIT_PRIVATE, 0, &ts) == 0)
			continue;
		if (errno != ETIMEDOUT && errno != EINTR && errno != EAGAIN)
			return wfail(w, "timed FUTEX_WAIT: %m");
	}
	return 0;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int ret = 0;

	setup(w);
	__atomic_store_n(&w->state, 1, __ATOMIC_RELEASE);
	switch (w->idx) {
	case W_FUTEX:
		ret = wait_futex(w);
		break;
	case W_SLEEP:
		ret = wait_sleep(w);
		break;
	case W_BUSY:
		ret = busy(w);
		break;
	case W_SPIN:
		ret = spin(w);
		break;
	case W_TIMED:
		ret = timed(w);
		break;
	}
	while (!verify)
		sched_yield();
	if (!ret && !check(w))
		__atomic_store_n(&w->state, 2, __ATOMIC_RELEASE);
	return NULL;
}

static void usr2(int sig)
{
	usr2_seen = 1;
}

int main(int argc, char **argv)
{
	unsigned long long main_mask, m, before_n = 0;
	struct timespec zero = { 0, 0 };
	struct sigaction sa;
	cpu_set_t cs;
	sigset_t set;
	siginfo_t si;
	stack_t ss, ss2;
	void *alt;
	int i, sig;

	test_init(argc, argv);
	tkill_code = test_tkill_code();

	if (!sched_getaffinity(0, sizeof(cs), &cs))
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &cs))
				cpus[nr_cpus++] = i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr2;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		fail_errno("sigaction SIGUSR2");

	/* the workers start with everything but glibc's own signals blocked */
	set_mask(~(BIT(32) | BIT(33)));
	for (i = 0; i < NR_WORKERS; i++) {
		workers[i].idx = i;
		if (pthread_create(&workers[i].th, NULL, worker_fn, &workers[i]))
			fail("pthread_create %d", i);
	}
	for (i = 0; i < NR_WORKERS; i++)
		while (!__atomic_load_n(&workers[i].state, __ATOMIC_ACQUIRE))
			usleep(1000);

	/* the main thread's own: a mask, a private pending signal, an altstack */
	main_mask = BIT(SIGRTMIN + 1) | BIT(SIGRTMIN + 20) | BIT(SIGUSR2) | BIT(SIGQUIT);
	set_mask(main_mask);
	queue_self(SIGRTMIN + 1, 4242);
	alt = mmap(NULL, 96 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		fail_errno("mmap");
	ss.ss_sp = alt;
	ss.ss_size = 96 << 10;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL))
		fail_errno("sigaltstack");
	/* and a process-wide pending signal every thread blocks */
	if (kill(getpid(), SIGRTMIN + 20))
		fail_errno("kill");

	test_ready();
	test_waitsig();

	before_n = workers[W_BUSY].n;
	usleep(20 * 1000);
	if (workers[W_BUSY].n == before_n)
		fail("the busy thread makes no progress (%llu rounds)", before_n);

	verify = 1;
	__atomic_store_n(&go_word, 1, __ATOMIC_RELEASE);
	futex(&go_word, FUTEX_WAKE_PRIVATE, 1, NULL);
	pthread_kill(workers[W_SLEEP].th, SIGUSR2);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i].th, NULL);
	for (i = 0; i < NR_WORKERS; i++)
		if (workers[i].state != 2)
			fail("thread %s (%d): %s", names[i], workers[i].tid,
			     workers[i].state == 3 ? workers[i].why : "did not report");

	m = get_mask();
	if (m != main_mask)
		fail("main thread: blocked mask %#llx, was %#llx", m, main_mask);
	if (sigaltstack(NULL, &ss2) || ss2.ss_sp != alt || ss2.ss_size != (96 << 10) ||
	    ss2.ss_flags)
		fail("main thread: altstack %p+%zu flags %#x", ss2.ss_sp, ss2.ss_size,
		     ss2.ss_flags);
	if (thread_status_mask("SigPnd", &m) || m != BIT(SIGRTMIN + 1))
		fail("main thread: private pending %#llx", m);
	if (thread_status_mask("ShdPnd", &m) || m != BIT(SIGRTMIN + 20))
		fail("shared pending %#llx", m);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sig = sigtimedwait(&set, &si, &zero);
	if (sig != SIGRTMIN + 1 || si.si_value.sival_int != 4242 || si.si_code != SI_QUEUE)
		fail("main thread: dequeued %d value %d code %d", sig, si.si_value.sival_int,
		     si.si_code);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 20);
	sig = sigtimedwait(&set, &si, &zero);
	if (sig != SIGRTMIN + 20 || si.si_code != SI_USER || si.si_pid != getpid())
		fail("shared: dequeued %d code %d pid %d", sig, si.si_code, si.si_pid);
	test_msg("busy thread: %llu rounds", workers[W_BUSY].n);
	pass();
}
