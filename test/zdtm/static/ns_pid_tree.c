// SPDX-License-Identifier: GPL-2.0-only
/*
 * A whole pid namespace (run with --pidns: the test is its init, pid 1):
 *
 *   init (1, session leader; 2 threads; a POSIX timer aimed at itself with
 *   |     SIGEV_THREAD_ID; a timer on its own CPU clock named by pid; a
 *   |     signal with a value queued to its second thread)
 *   +-- a (1 thread)  +-- b
 *   +-- o: an orphan, a's grandchild once, reparented to the init: a
 *          daemon, whose parent made a session of its own, forked it
 *          and exited (its session and group have no leader any more)
 *
 * After restore every task must have the pids it had inside (getpid,
 * getppid, gettid, getsid, getpgid), the namespace must still be one of
 * its own (NSpid has two levels), the queued signal must wait on the same
 * thread with its value, and the timers must still aim where they did.
 * Each task checks itself after SIGTERM (the init sends it down), exits 0
 * or says why and exits 1; the init reaps them all and writes the verdict.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define NS		1000000000LL
#define TIMER_SECS	1000
#define VALUE		0x5eed

struct self {
	const char *name;
	pid_t pid, ppid, sid, pgid;
	pid_t tid[2];		/* its threads, as they saw themselves */
	int nthreads;
};

static struct self me;
static volatile int stop_threads;
static int setup[2];

#define die(...) test_task_fail(getpid() == 1, me.name, __VA_ARGS__)

static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

/* NSpid's levels in /proc/self/status (the runner's /proc): 2 in our namespace. */
static int ns_levels(void)
{
	char buf[128];
	const char *v = test_status_field("NSpid", buf, sizeof(buf));
	int n = 0;

	for (; v && *v; v++)
		if ((*v >= '0' && *v <= '9') && (v[1] < '0' || v[1] > '9'))
			n++;
	return n;
}

static void *thread_fn(void *arg)
{
	long i = (long)arg;

	__atomic_store_n(&me.tid[i], gettid_(), __ATOMIC_RELEASE);
	while (!stop_threads)
		usleep(10000);
	if (gettid_() != me.tid[i])
		die("thread %ld is %d, was %d", i, gettid_(), me.tid[i]);
	/* the second thread of the init has a signal waiting for it */
	if (me.pid == 1 && i == 1) {
		sigset_t s;
		siginfo_t si;
		struct timespec zero = { 0, 0 };

		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		if (sigtimedwait(&s, &si, &zero) != SIGUSR1)
			die("the signal queued to thread %d is gone", me.tid[i]);
		if (si.si_value.sival_int != VALUE || si.si_pid != 1 || si.si_code != SI_QUEUE)
			die("the queued signal has value %#x, pid %d, code %d",
			    si.si_value.sival_int, si.si_pid, si.si_code);
	}
	return (void *)1;
}

static pthread_t th[2];

static void start_threads(int n)
{
	sigset_t all, old;
	long i;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thread_fn, (void *)i))
			die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	me.nthreads = n;
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&me.tid[i], __ATOMIC_ACQUIRE))
			usleep(1000);
}

static void stop_and_join(void)
{
	void *r;
	int i;

	stop_threads = 1;
	for (i = 0; i < me.nthreads; i++)
		if (pthread_join(th[i], &r) || r != (void *)1)
			die("thread %d failed", i);
}

static void remember(const char *name)
{
	me.name = name;
	me.pid = getpid();
	me.ppid = getppid();
	me.sid = getsid(0);
	me.pgid = getpgid(0);
}

static void check_self(void)
{
	if (getpid() != me.pid || getppid() != me.ppid || getsid(0) != me.sid ||
	    getpgid(0) != me.pgid)
		die("pid %d ppid %d sid %d pgid %d, were %d %d %d %d", getpid(), getppid(),
		    getsid(0), getpgid(0), me.pid, me.ppid, me.sid, me.pgid);
	if (ns_levels() != 2)
		die("NSpid has %d levels, not 2: not in a pid namespace of its own",
		    ns_levels());
}

static void reap(pid_t pid, const char *name)
{
	int status;

	if (kill(pid, SIGTERM))
		die("%s (%d) is gone: %m", name, pid);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid %s (%d): %m", name, pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s (%d) failed (status %#x); see the log", name, pid, status);
}

/* "set up": its pid, negative for the orphan */
static void report(pid_t pid)
{
	if (write(setup[1], &pid, sizeof(pid)) != sizeof(pid))
		_exit(5);
}

/* After the setup: wait for SIGTERM, check, pass it on, reap. */
static void __attribute__((noreturn)) live(pid_t kid, const char *kid_name)
{
	close(setup[0]);
	close(setup[1]);
	test_waitsig();
	check_self();
	stop_and_join();
	if (kid)
		reap(kid, kid_name);
	_exit(0);
}

static void run_o(pid_t parent)
{
	/* orphaned when its parent exits: the init adopts it */
	while (getppid() == parent)
		usleep(1000);
	remember("o");
	if (me.ppid != 1)
		die("adopted by %d, not the init", me.ppid);
	report(-getpid());
	live(0, NULL);
}

static void run_a(void)
{
	pid_t b, o2;
	int status;

	remember("a");
	b = fork();
	if (b < 0)
		die("fork: %m");
	if (b == 0) {
		remember("b");
		report(getpid());
		live(0, NULL);
	}
	o2 = fork();
	if (o2 == 0) {
		pid_t parent = getpid();

		if (setsid() < 0)
			_exit(2);

		if (fork() == 0)
			run_o(parent);
		_exit(0);
	}
	if (o2 < 0 || waitpid(o2, &status, 0) != o2 || status)
		die("the orphan's parent: %m (status %#x)", status);
	start_threads(1);
	report(getpid());
	live(b, "b");
}

static timer_t mk_timer(clockid_t clk, int notify, int signo)
{
	struct itimerspec its = { { 0, 0 }, { TIMER_SECS, 0 } };
	struct sigevent sev;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = notify;
	sev.sigev_signo = signo;
	sev._sigev_un._tid = 1;		/* the init's main thread, as it sees itself */
	if (timer_create(clk, &sev, &t) || timer_settime(t, 0, &its, NULL))
		die("timer_create on clock %d: %m", clk);
	return t;
}

static void check_timer(timer_t t, const char *what)
{
	struct itimerspec its;

	if (timer_gettime(t, &its))
		die("%s timer: %m", what);
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		die("%s timer is disarmed", what);
	if (its.it_value.tv_sec > TIMER_SECS)
		die("%s timer has %ld s left, more than it was armed for", what,
		    (long)its.it_value.tv_sec);
}

int main(int argc, char **argv)
{
	pid_t a, kid, o = 0;
	timer_t mono, cpu;
	clockid_t own;
	union sigval v = { .sival_int = VALUE };
	siginfo_t si;
	sigset_t pend;
	int i;

	test_init(argc, argv);
	if (getpid() != 1)
		fail("not the init of a pid namespace: run with --pidns (pid %d)", getpid());
	remember("init");
	if (pipe(setup))
		fail_errno("pipe");
	a = fork();
	if (a < 0)
		fail_errno("fork");
	if (a == 0)
		run_a();
	/* b, o and a itself say they are set up */
	for (i = 0; i < 3; i++)
		if (read(setup[0], &kid, sizeof(kid)) != sizeof(kid))
			fail("a task died while setting up");
		else if (kid < 0)
			o = -kid;
	close(setup[0]);
	close(setup[1]);
	start_threads(2);
	mono = mk_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL | SIGEV_THREAD_ID, SIGUSR2);
	if (clock_getcpuclockid(1, &own))
		fail_errno("clock_getcpuclockid(1)");
	cpu = mk_timer(own, SIGEV_SIGNAL, SIGUSR2);
	/* to the second thread, which blocks it: it waits there */
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = 1;
	si.si_uid = getuid();
	si.si_value = v;
	if (syscall(SYS_rt_tgsigqueueinfo, 1, me.tid[1], SIGUSR1, &si))
		fail_errno("rt_tgsigqueueinfo to thread %d", me.tid[1]);

	test_ready();
	test_waitsig();

	check_self();
	check_timer(mono, "the SIGEV_THREAD_ID");
	check_timer(cpu, "the CPU-clock");
	sigpending(&pend);
	if (sigismember(&pend, SIGUSR1))
		fail("SIGUSR1 is pending for the whole process, not for thread %d", me.tid[1]);
	stop_and_join();
	reap(a, "a");
	/* the orphan is ours */
	if (waitpid(-1, NULL, WNOHANG) != 0)
		fail("a child exited before it was told to");
	reap(o, "o");
	pass();
}
