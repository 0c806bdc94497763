// SPDX-License-Identifier: GPL-2.0-only
/*
 * How fast clock_gettime(CLOCK_MONOTONIC) is, and whether it enters the
 * kernel, in a restored task versus a fresh one (scripts/bench-vdso.sh).
 *
 *   vdso_bench wait OUT   become ready (print our pid); at each SIGUSR1
 *                         measure and write the figures to OUT.1, OUT.2...;
 *                         exit at SIGTERM. The script checkpoints and
 *                         restores us before the first SIGUSR1
 *   vdso_bench fresh OUT  measure at once in a child in a new time
 *                         namespace (unshare(CLONE_NEWTIME) + fork): the
 *                         same situation as a restored task, born there
 *
 * Figures, "key=value" lines: vdso_rate and syscall_rate (calls per second,
 * the median of 10 slices of 100 ms: clock_gettime() through libc and the
 * raw syscall), and vdso_syscalls: how many of 100000 clock_gettime() calls
 * entered the kernel. That count is exact, not inferred from speed: a
 * seccomp filter makes the clock_gettime system call fail with EDOM, and
 * every call that fails went through the kernel. The filter is installed
 * last, in a child, so it disturbs nothing else.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif
#define AUDIT_ARCH_X86_64	0xc000003eU

#define SLICES		10
#define SLICE_NS	100000000LL
#define BATCH		1000
#define PROBE_CALLS	100000

typedef int (*gettime_fn)(clockid_t, struct timespec *);

static volatile sig_atomic_t go, stop;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int raw_gettime(clockid_t clk, struct timespec *ts)
{
	return syscall(SYS_clock_gettime, clk, ts);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Calls per second of @fn: the median of SLICES slices. */
static double rate(gettime_fn fn)
{
	double r[SLICES];
	struct timespec ts;
	long long t0, t, n;
	int i, j;

	for (i = 0; i < SLICES; i++) {
		t0 = now_ns();
		n = 0;
		do {
			for (j = 0; j < BATCH; j++)
				fn(CLOCK_MONOTONIC, &ts);
			n += BATCH;
			t = now_ns();
		} while (t - t0 < SLICE_NS);
		r[i] = n * 1e9 / (t - t0);
	}
	qsort(r, SLICES, sizeof(r[0]), cmp_double);
	return (r[SLICES / 2 - 1] + r[SLICES / 2]) / 2;
}

/* In a child: clock_gettime system calls fail with EDOM, others work. */
static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EDOM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* How many of PROBE_CALLS clock_gettime() calls went to the kernel; -1: unknown. */
static long kernel_calls(void)
{
	struct timespec ts;
	int status, pfd[2];
	long n = -1;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		long bad = 0, i;

		close(pfd[0]);
		if (install_filter())
			_exit(1);
		/* sanity: the filter does catch the system call */
		if (raw_gettime(CLOCK_MONOTONIC, &ts) != -1 || errno != EDOM)
			_exit(2);
		for (i = 0; i < PROBE_CALLS; i++)
			if (clock_gettime(CLOCK_MONOTONIC, &ts))
				bad++;
		_exit(write(pfd[1], &bad, sizeof(bad)) == sizeof(bad) ? 0 : 3);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &n, sizeof(n)) != sizeof(n))
		n = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return n;
}

/* Writes OUT complete or not at all: the script polls for it. */
static int measure(const char *out)
{
	double v = rate(clock_gettime), s = rate(raw_gettime);
	long k = kernel_calls();
	char ns[64] = "", tmp[4096];
	FILE *f;

	if (readlink("/proc/self/ns/time", ns, sizeof(ns) - 1) < 0)
		strcpy(ns, "?");
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f)
		return 1;
	fprintf(f, "pid=%d\ntime_ns=%s\ncpu=%d\nvdso_rate=%.0f\nsyscall_rate=%.0f\n"
		"vdso_syscalls=%ld\nprobe_calls=%d\n", getpid(), ns, sched_getcpu(), v, s,
		k, PROBE_CALLS);
	if (fclose(f) || rename(tmp, out))
		return 1;
	return 0;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else
		stop = 1;
}

static int wait_mode(const char *out)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char name[4096];
	sigset_t block, old;
	int round = 0;

	/* whatever the caller left open (pipes, ...) is not ours to checkpoint */
	syscall(SYS_close_range, 3, ~0U, 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* warm the vDSO and the code before the checkpoint, as a real task would */
	rate(clock_gettime);
	printf("%d\n", getpid());
	fflush(stdout);
	for (;;) {
		while (!go && !stop)
			sigsuspend(&old);
		if (stop)
			return 0;
		go = 0;
		snprintf(name, sizeof(name), "%s.%d", out, ++round);
		if (measure(name))
			return 1;
	}
}

static int fresh_mode(const char *out)
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWTIME)) {
		perror("unshare(CLONE_NEWTIME)");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(measure(out));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return wait_mode(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fresh"))
		return fresh_mode(argv[2]);
	fprintf(stderr, "usage: %s wait|fresh OUTFILE\n", argv[0]);
	return 2;
}
