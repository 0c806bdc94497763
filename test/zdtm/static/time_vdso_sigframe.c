// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signal handler that interrupted the vDSO and is still running at the
 * dump: a worker thread calls clock_gettime through the vDSO pointer in a
 * loop; SIGUSR1 is sent to it until the handler finds the interrupted ip
 * inside the vDSO (not on its entry), and then the handler waits there.
 * Its signal frame returns into the vDSO: criu finds that frame at the
 * dump, and a restore that must replace the vDSO refuses it by name
 * (test_vdso.py); on the same vDSO it restores, and after SIGTERM the
 * handler returns, the interrupted call finishes and gives a time within
 * the test's bounds, and the loop goes on.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "vdso_lib.h"
#include "zdtm.h"

typedef int (*gettime_fn)(clockid_t, struct timespec *);

static gettime_fn vdso_gettime;
static unsigned long vdso_start, vdso_end;
static volatile int caught, release, stop, bad;
static volatile unsigned long caught_ip;
static volatile long calls;
static pid_t worker_tid;

static void vdso_range(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		fail_errno("open maps");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &vdso_start, &vdso_end) == 2)
			break;
	fclose(f);
	if (!vdso_start)
		skip("no [vdso] in this process");
}

static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	unsigned long ip = uc->uc_mcontext.gregs[REG_RIP];

	if (caught || ip < vdso_start || ip >= vdso_end || ip == (unsigned long)vdso_gettime)
		return;
	caught_ip = ip;
	caught = 1;
	while (!release)
		usleep(1000);
}

static void *worker(void *arg)
{
	struct timespec a, b, t;
	sigset_t term;

	/* SIGTERM goes to the main thread, which waits for it */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	worker_tid = syscall(SYS_gettid);
	while (!stop) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (vdso_gettime(CLOCK_MONOTONIC, &t))
			bad = 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
		/* the call that was interrupted finishes after the restore, within its bounds */
		if (t.tv_sec < a.tv_sec || (t.tv_sec == a.tv_sec && t.tv_nsec < a.tv_nsec) ||
		    t.tv_sec > b.tv_sec || (t.tv_sec == b.tv_sec && t.tv_nsec > b.tv_nsec))
			bad = 2;
		calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
	pthread_t th;
	long before;
	int i;

	test_init(argc, argv);
	vdso_range();
	vdso_gettime = vdso_sym(getauxval(AT_SYSINFO_EHDR), "__vdso_clock_gettime");
	if (sigaction(SIGUSR1, &sa, NULL) || pthread_create(&th, NULL, worker, NULL))
		fail_errno("setup");
	while (!worker_tid)
		usleep(1000);
	for (i = 0; !caught && i < 5000000; i++)
		syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR1);
	if (!caught)
		skip("no signal landed inside the vDSO in %d tries", i);
	test_msg("the handler interrupted the vDSO at %#lx (after %d signals)", caught_ip, i);

	test_ready();
	test_waitsig();

	before = calls;
	release = 1;
	while (calls < before + 1000 && !bad)
		usleep(1000);
	stop = 1;
	pthread_join(th, NULL);
	if (bad)
		fail("the vDSO call the handler interrupted went wrong (%d)", bad);
	pass();
}
