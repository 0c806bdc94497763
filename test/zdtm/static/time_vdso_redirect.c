// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vDSO's functions keep working through the pointers a task took at
 * start, on a kernel whose vDSO is another one: clock_gettime,
 * gettimeofday, time, getcpu and clock_getres, looked up as glibc does,
 * called through those pointers after the restore, agree with their
 * system calls, and those that did not enter the kernel before the
 * checkpoint do not after it (a seccomp filter in a child makes the
 * system calls fail with EDOM: a call that fails so went through the
 * kernel). Two threads call clock_gettime in a loop all along, so that a
 * dump finds them inside the vDSO, and check that it never goes back.
 *
 * "moved" (an argument): the restore must have put the kernel's vDSO elsewhere and the
 * old one back as a redirect (criu's CRIU_VDSO_REDIRECT=1, or a kernel
 * whose vDSO differs): AT_SYSINFO_EHDR still points at an ELF image, in
 * an area that is no longer [vdso], and a [vdso] exists elsewhere.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"
#include "vdso_lib.h"

#define AUDIT_ARCH_X86_64	0xc000003eU
#define NR_LOOPS		2

struct vdso_fns {
	int (*cgt)(clockid_t, struct timespec *);
	int (*gtod)(struct timeval *, void *);
	time_t (*time)(time_t *);
	long (*getcpu)(unsigned int *, unsigned int *, void *);
	int (*getres)(clockid_t, struct timespec *);
};

enum { F_CGT, F_GTOD, F_TIME, F_GETCPU, F_GETRES, F_NR };
static const char *const fname[F_NR] = {
	"clock_gettime", "gettimeofday", "time", "getcpu", "clock_getres",
};

static struct vdso_fns fns;

static struct loop {
	pthread_t th;
	volatile unsigned long n;
	volatile int bad;
} loops[NR_LOOPS];

static volatile int stop;

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void *spin(void *arg)
{
	struct loop *l = arg;
	struct timespec ts;
	long long prev = 0;

	while (!stop) {
		if (fns.cgt(CLOCK_MONOTONIC, &ts) || ns(&ts) < prev)
			l->bad = 1;
		prev = ns(&ts);
		l->n++;
	}
	return NULL;
}

/* In a child: these system calls fail with EDOM, every other works. */
static int filter_calls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettimeofday, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_time, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getcpu, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_getres, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EDOM),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Which of the functions of @fn entered the kernel: a bit per function. */
static int kernel_entries(const struct vdso_fns *fn)
{
	struct timespec ts;
	struct timeval tv;
	unsigned int cpu;
	int status, m = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		if (filter_calls())
			_exit(255);
		m |= (fn->cgt(CLOCK_MONOTONIC, &ts) == -EDOM) << F_CGT;
		m |= (fn->gtod(&tv, NULL) == -EDOM) << F_GTOD;
		m |= (fn->time(NULL) == -EDOM) << F_TIME;
		m |= (fn->getcpu(&cpu, NULL, NULL) == -EDOM) << F_GETCPU;
		m |= (fn->getres(CLOCK_MONOTONIC, &ts) == -EDOM) << F_GETRES;
		_exit(m);
	}
	if (waitpid(pid, &status, 0) != pid)
		fail_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 255)
		fail("the probe child failed (status %#x)", status);
	return WEXITSTATUS(status);
}

static void check_clock(clockid_t clk, const char *name)
{
	struct timespec a, v, b, rv, rs;

	if (syscall(SYS_clock_gettime, clk, &a) || fns.cgt(clk, &v) ||
	    syscall(SYS_clock_gettime, clk, &b))
		fail("clock_gettime(%s) failed", name);
	if (ns(&v) < ns(&a) || ns(&v) > ns(&b))
		fail("%s: the vDSO says %lld, the system call %lld .. %lld", name, ns(&v),
		     ns(&a), ns(&b));
	if (fns.getres(clk, &rv) || syscall(SYS_clock_getres, clk, &rs) || ns(&rv) != ns(&rs))
		fail("clock_getres(%s): the vDSO says %lld, the system call %lld", name,
		     ns(&rv), ns(&rs));
}

static void check_all(void)
{
	struct timeval a, v, b;
	unsigned int cpu = ~0U;
	cpu_set_t allowed;
	time_t t1, tv, t2;

	check_clock(CLOCK_MONOTONIC, "MONOTONIC");
	check_clock(CLOCK_BOOTTIME, "BOOTTIME");
	check_clock(CLOCK_REALTIME, "REALTIME");
	if (syscall(SYS_gettimeofday, &a, NULL) || fns.gtod(&v, NULL) ||
	    syscall(SYS_gettimeofday, &b, NULL))
		fail("gettimeofday failed");
	if (timercmp(&v, &a, <) || timercmp(&v, &b, >))
		fail("gettimeofday: the vDSO says %ld.%06ld, the system call %ld.%06ld ..",
		     (long)v.tv_sec, (long)v.tv_usec, (long)a.tv_sec, (long)a.tv_usec);
	t1 = syscall(SYS_time, NULL);
	tv = fns.time(NULL);
	t2 = syscall(SYS_time, NULL);
	if (tv < t1 || tv > t2)
		fail("time: the vDSO says %ld, the system call %ld .. %ld", (long)tv,
		     (long)t1, (long)t2);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		fail_errno("sched_getaffinity");
	if (fns.getcpu(&cpu, NULL, NULL) || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
		fail("getcpu: the vDSO says CPU %u, not one this task may run on", cpu);
}

/* The [vdso] line of maps: its start, 0 when there is none. */
static unsigned long vdso_start(unsigned long at, char *perms_at)
{
	unsigned long s, e, found = 0;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		fail_errno("open maps");
	perms_at[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3)
			continue;
		if (strstr(line, "[vdso]"))
			found = s;
		if (s <= at && at < e)
			snprintf(perms_at, 64, "%s%s", perms, strstr(line, "[vdso]") ? " [vdso]" : "");
	}
	fclose(f);
	return found;
}

static void check_moved(unsigned long base)
{
	char at[64];
	unsigned long now = vdso_start(base, at);

	if (!now || now == base)
		fail("the vDSO was not moved: [vdso] at %#lx, AT_SYSINFO_EHDR %#lx", now, base);
	if (strcmp(at, "r-xp"))
		fail("the old vDSO's place %#lx is '%s', not an anonymous r-xp area", base, at);
	if (memcmp((void *)base, ELFMAG, SELFMAG))
		fail("the old vDSO's place holds no ELF image");
	test_msg("the vDSO moved from %#lx to %#lx\n", base, now);
}

static void look_up(struct vdso_fns *fn, unsigned long base)
{
	fn->cgt = vdso_sym(base, "__vdso_clock_gettime");
	fn->gtod = vdso_sym(base, "__vdso_gettimeofday");
	fn->time = vdso_sym(base, "__vdso_time");
	fn->getcpu = vdso_sym(base, "__vdso_getcpu");
	fn->getres = vdso_sym(base, "__vdso_clock_getres");
}

/*
 * What the kernel's own vDSO, where it is now, takes into the kernel:
 * another kernel's may (a clocksource its vDSO can't read, as under QEMU's
 * TCG), and a redirect to it can't do better. 0 while it has not moved.
 */
static int own_entries(unsigned long base)
{
	struct vdso_fns own;
	char at[64];
	unsigned long now = vdso_start(base, at);

	if (!now || now == base)
		return 0;
	look_up(&own, now);
	return kernel_entries(&own);
}

int main(int argc, char **argv)
{
	unsigned long base, before[NR_LOOPS];
	int moved = argc > 1 && !strcmp(argv[argc - 1], "moved");
	int i, fast, now, native;

	test_init(argc, argv);
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		skip("no vDSO");
	look_up(&fns, base);
	check_all();
	fast = kernel_entries(&fns);
	for (i = 0; i < NR_LOOPS; i++)
		if (pthread_create(&loops[i].th, NULL, spin, &loops[i]))
			fail("pthread_create");

	test_ready();
	/*
	 * Polled, not test_waitsig(): a restore re-runs an interrupted
	 * rt_sigsuspend from its syscall instruction with the mask it had
	 * inside, so a SIGTERM that comes before it gets there runs the
	 * handler and the call then sleeps for good; the spinning threads
	 * make that window wide on a busy machine.
	 */
	while (!test_sigterm)
		usleep(1000);

	for (i = 0; i < NR_LOOPS; i++)
		before[i] = loops[i].n;
	if (getauxval(AT_SYSINFO_EHDR) != base)
		fail("AT_SYSINFO_EHDR is %#lx, was %#lx", getauxval(AT_SYSINFO_EHDR), base);
	if (moved)
		check_moved(base);
	check_all();
	now = kernel_entries(&fns);
	native = own_entries(base);
	for (i = 0; i < F_NR; i++)
		if ((now & ~fast & ~native) & (1 << i))
			fail("%s enters the kernel now, and did not before", fname[i]);
	usleep(20000);
	stop = 1;
	for (i = 0; i < NR_LOOPS; i++) {
		pthread_join(loops[i].th, NULL);
		if (loops[i].bad)
			fail("thread %d: clock_gettime failed or went back", i);
		if (loops[i].n == before[i])
			fail("thread %d: no call since the restore", i);
	}
	pass();
}
