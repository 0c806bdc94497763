// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process of a given shape: N of one kind of object or more, named on
 * the command line as KIND=N (test_shapes.py runs it at sizes that cross
 * every limit criu has inside, and at the kernel's own edges):
 *
 *   threads=N     N threads besides the leader, idle in futex waits, each
 *                 with its own blocked mask; ITIMER_PROF armed
 *   memfds=N      N memfds, each with a page of its own pattern and name
 *   ptimers=N     N POSIX timers (SIGEV_NONE), each armed with its own
 *                 time and interval
 *   fds=N         N open file descriptions of one file, each at its own
 *                 offset
 *   areas=N       N more anonymous areas (alternate protections), each
 *                 page with its own pattern
 *   maxareas=K    as many areas as vm.max_map_count allows, less K
 *   timerfds=N    N timerfds, each armed with its own time and interval
 *   epoll=N       one epoll with N eventfds watched, each with its data
 *   rtsigs=N      N queued real-time signals, 8 kinds, each with its value
 *   inotify=N     one inotify with N watches on N files
 *   tfilters=N    a thread with N seccomp filters of its own (allow all)
 *   trtsigs=N     a thread with N RT signals queued to it alone
 *   wd=W          one inotify whose watch has wd W (W - 1 watches added
 *                 and removed before it)
 *   bigmemfd=B    a memfd of 2^B bytes, sparse, a pattern in its last page
 *   nofile=L      RLIMIT_NOFILE set to L (soft and hard) and every fd
 *                 slot below it used (by /dev/null) but one, which the
 *                 ready and out files need
 *
 * After SIGTERM each object is checked: still there, with its own state
 * (tids, masks, contents, names, timer ids and settings, offsets, watch
 * data, signal values in order, wds).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define PAGE		4096
#define LONG_S		100000	/* timers that never fire during a test */

struct kind {
	const char *name;
	void (*setup)(long n);
	void (*check)(long n);
	long n;
	int on;		/* named on the command line (maxareas=0 is a shape too) */
};

static uint64_t pattern(int kind, long i)
{
	return test_pattern(0x5a4e0000 + kind, i);
}

/* ------------------------------------------------------------ threads */

static struct thr {
	pthread_t t;
	pid_t tid;
	int ok;
} *thr;
static int thr_go, thr_ready;
static long nr_thr;

static uint64_t thr_mask(long i)
{
	/*
	 * A few ordinary signals in a pattern of the thread's own; SIGTERM
	 * and the queued RT signals are the leader's to take.
	 */
	return (pattern(1, i) & 0x0f0b0000ULL) | (1ULL << (SIGUSR1 - 1)) |
	       (1ULL << (SIGTERM - 1)) | (0xffULL << (SIGRTMIN - 1));
}

static void futex_wait(int *addr, int val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static void *thr_main(void *arg)
{
	struct thr *me = arg;
	long i = me - thr;
	uint64_t want = thr_mask(i), now = 0;

	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &want, NULL, 8))
		return NULL;
	me->tid = gettid();
	__atomic_add_fetch(&thr_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&thr_go, __ATOMIC_ACQUIRE))
		futex_wait(&thr_go, 0);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &now, 8);
	me->ok = (me->tid == gettid() ? 1 : 2) | (now == want ? 0 : 4);
	return NULL;
}

static void prof_handler(int sig)
{
}

static void threads_setup(long n)
{
	struct itimerval it = { { 7, 0 }, { LONG_S, 0 } };
	pthread_attr_t a;
	long i;

	thr = calloc(n, sizeof(*thr));
	nr_thr = n;
	if (!thr || pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 64 << 10))
		fail_errno("threads");
	signal(SIGPROF, prof_handler);
	if (setitimer(ITIMER_PROF, &it, NULL))
		fail_errno("setitimer(ITIMER_PROF)");
	for (i = 0; i < n; i++)
		if ((errno = pthread_create(&thr[i].t, &a, thr_main, &thr[i])))
			fail_errno("pthread_create of thread %ld", i);
	while (__atomic_load_n(&thr_ready, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
}

static void threads_check(long n)
{
	struct itimerval it;
	long i;

	if (getitimer(ITIMER_PROF, &it))
		fail_errno("getitimer");
	if (it.it_interval.tv_sec != 7 || it.it_interval.tv_usec ||
	    !it.it_value.tv_sec || it.it_value.tv_sec > LONG_S)
		fail("ITIMER_PROF is %ld.%06ld/%ld.%06ld, not armed as it was",
		     it.it_value.tv_sec, it.it_value.tv_usec, it.it_interval.tv_sec,
		     it.it_interval.tv_usec);
	__atomic_store_n(&thr_go, 1, __ATOMIC_RELEASE);
	futex_wake(&thr_go);
	for (i = 0; i < n; i++) {
		if ((errno = pthread_join(thr[i].t, NULL)))
			fail_errno("pthread_join of thread %ld", i);
		if (thr[i].ok != 1)
			fail("thread %ld (tid %d): %s", i, thr[i].tid,
			     thr[i].ok & 2 ? "another tid" : thr[i].ok & 4 ? "another mask" :
			     "did not run");
	}
}

/* ------------------------------------------------------------ memfds */

static int *memfd;

static void memfds_setup(long n)
{
	char name[32];
	uint64_t v;
	long i;

	memfd = calloc(n, sizeof(int));
	if (!memfd)
		fail_errno("calloc");
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "shape.%ld", i);
		v = pattern(2, i);
		memfd[i] = memfd_create(name, 0);
		if (memfd[i] < 0 || ftruncate(memfd[i], PAGE) ||
		    pwrite(memfd[i], &v, sizeof(v), (i * 8) % PAGE) != sizeof(v))
			fail_errno("memfd %ld", i);
	}
}

static void memfds_check(long n)
{
	char path[64], link[128], want[64];
	struct stat st;
	uint64_t v;
	ssize_t len;
	long i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd[i]);
		snprintf(want, sizeof(want), "/memfd:shape.%ld (deleted)", i);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = '\0';
		if (strcmp(link, want))
			fail("memfd %ld (fd %d) is %s", i, memfd[i], link);
		if (fstat(memfd[i], &st) || st.st_size != PAGE ||
		    pread(memfd[i], &v, sizeof(v), (i * 8) % PAGE) != sizeof(v) ||
		    v != pattern(2, i))
			fail("memfd %ld: another size or content", i);
	}
}

/* ------------------------------------------------------------ POSIX timers */

static timer_t *ptimer;

static struct itimerspec timer_spec(int kind, long i)
{
	struct itimerspec its = {
		.it_interval = { 1 + i % 50, (i * 7919) % 1000000000 },
		.it_value = { LONG_S + i, 0 },
	};

	if (kind)
		its.it_interval.tv_sec += 100;
	return its;
}

static void ptimers_setup(long n)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its;
	long i;

	ptimer = calloc(n, sizeof(*ptimer));
	if (!ptimer)
		fail_errno("calloc");
	for (i = 0; i < n; i++) {
		its = timer_spec(0, i);
		if (timer_create(CLOCK_MONOTONIC, &sev, &ptimer[i]) ||
		    timer_settime(ptimer[i], 0, &its, NULL))
			fail_errno("POSIX timer %ld", i);
	}
}

/* Armed as set: the same interval, a value that only went down. */
static int same_timer(const struct itimerspec *now, const struct itimerspec *set)
{
	return now->it_interval.tv_sec == set->it_interval.tv_sec &&
	       now->it_interval.tv_nsec == set->it_interval.tv_nsec &&
	       (now->it_value.tv_sec || now->it_value.tv_nsec) &&
	       now->it_value.tv_sec <= set->it_value.tv_sec;
}

static void ptimers_check(long n)
{
	struct itimerspec now, set;
	long i;

	for (i = 0; i < n; i++) {
		set = timer_spec(0, i);
		if (timer_gettime(ptimer[i], &now))
			fail_errno("timer_gettime of timer %ld (id %ld)", i, (long)ptimer[i]);
		if (!same_timer(&now, &set))
			fail("POSIX timer %ld (id %ld): not armed as it was", i, (long)ptimer[i]);
	}
}

/* ------------------------------------------------------------ fds */

static int *fds;

static void fds_setup(long n)
{
	char name[64];
	long i;

	fds = calloc(n, sizeof(int));
	snprintf(name, sizeof(name), "%s.file", test_name);
	if (!fds)
		fail_errno("calloc");
	for (i = 0; i < n; i++) {
		fds[i] = open(name, O_RDWR | O_CREAT, 0600);
		if (fds[i] < 0 || lseek(fds[i], i * 3 + 1, SEEK_SET) != i * 3 + 1)
			fail_errno("fd %ld", i);
	}
}

static void fds_check(long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (lseek(fds[i], 0, SEEK_CUR) != i * 3 + 1)
			fail("fd %d: another offset", fds[i]);
}

/* ------------------------------------------------------------ areas */

static uint64_t *area;
static long nr_area_pages;

/* Areas as vm.max_map_count counts them: [vsyscall] is none. */
static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int nr = 0;

	if (!f)
		fail_errno("open maps");
	while (fgets(line, sizeof(line), f))
		nr += !strstr(line, "[vsyscall]");
	fclose(f);
	return nr;
}

/* Every other page read-only: @n areas that cannot merge. */
static void make_areas(long n)
{
	long i;

	area = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		fail_errno("mmap of %ld pages", n);
	nr_area_pages = n;
	for (i = 0; i < n; i++)
		area[i * PAGE / 8] = pattern(3, i);
	for (i = 1; i < n; i += 2)
		if (mprotect((char *)area + i * PAGE, PAGE, PROT_READ))
			fail_errno("mprotect of area %ld", i);
}

static void areas_setup(long n)
{
	make_areas(n);
}

static long read_sysctl(const char *path)
{
	char buf[32];

	if (test_read_file(path, buf, sizeof(buf)) <= 0)
		fail_errno("read %s", path);
	return atol(buf);
}

/* Up to vm.max_map_count less @n, counting what the process has already. */
static void maxareas_setup(long n)
{
	long max = read_sysctl("/proc/sys/vm/max_map_count");
	long have = count_maps();
	long want = max - n, i;
	int now;

	make_areas(want - have);
	/*
	 * The new areas may have merged with a neighbour: single pages, of
	 * protections unlike each other's and those around them.
	 */
	for (i = 0; (now = count_maps()) < want; i++)
		if (mmap(NULL, PAGE, i & 1 ? PROT_EXEC : PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
			fail_errno("mmap of area %d", now);
	if (now != want)
		fail("%d areas, not %ld", now, want);
	test_msg("%d areas of vm.max_map_count %ld", now, max);
}

static void areas_check(long n)
{
	long i;

	for (i = 0; i < nr_area_pages; i++)
		if (area[i * PAGE / 8] != pattern(3, i))
			fail("area %ld: another content", i);
	for (i = 0; i < nr_area_pages; i += 2)
		area[i * PAGE / 8]++;	/* still writable where it was */
}

/* ------------------------------------------------------------ timerfds */

static int *tfd;

static void timerfds_setup(long n)
{
	struct itimerspec its;
	long i;

	tfd = calloc(n, sizeof(int));
	if (!tfd)
		fail_errno("calloc");
	for (i = 0; i < n; i++) {
		its = timer_spec(1, i);
		tfd[i] = timerfd_create(i & 1 ? CLOCK_BOOTTIME : CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (tfd[i] < 0 || timerfd_settime(tfd[i], 0, &its, NULL))
			fail_errno("timerfd %ld", i);
	}
}

static void timerfds_check(long n)
{
	struct itimerspec now, set;
	long i;

	for (i = 0; i < n; i++) {
		set = timer_spec(1, i);
		if (timerfd_gettime(tfd[i], &now))
			fail_errno("timerfd_gettime of timerfd %ld", i);
		if (!same_timer(&now, &set))
			fail("timerfd %ld (fd %d): not armed as it was", i, tfd[i]);
	}
}

/* ------------------------------------------------------------ epoll */

static int ep, *efd;

static void epoll_setup(long n)
{
	struct epoll_event ev = { .events = EPOLLIN };
	long i;

	efd = calloc(n, sizeof(int));
	ep = epoll_create1(0);
	if (!efd || ep < 0)
		fail_errno("epoll");
	for (i = 0; i < n; i++) {
		efd[i] = eventfd(0, EFD_NONBLOCK);
		ev.data.u64 = pattern(4, i);
		if (efd[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd[i], &ev))
			fail_errno("epoll watch %ld", i);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every eventfd made ready: the epoll reports each once, with its data. */
static void epoll_check(long n)
{
	struct epoll_event *ev = calloc(n + 1, sizeof(*ev));
	uint64_t *got = calloc(n, sizeof(uint64_t)), *want = calloc(n, sizeof(uint64_t));
	uint64_t one = 1;
	long i;
	int nr;

	if (!ev || !got || !want)
		fail_errno("calloc");
	if (epoll_wait(ep, ev, n + 1, 0) != 0)
		fail("the epoll reports events nothing caused");
	for (i = 0; i < n; i++)
		if (write(efd[i], &one, sizeof(one)) != sizeof(one))
			fail_errno("eventfd %ld", i);
	nr = epoll_wait(ep, ev, n + 1, 0);
	if (nr != n)
		fail("the epoll reports %d ready of %ld", nr, n);
	for (i = 0; i < n; i++) {
		got[i] = ev[i].data.u64;
		want[i] = pattern(4, i);
	}
	qsort(got, n, sizeof(uint64_t), cmp_u64);
	qsort(want, n, sizeof(uint64_t), cmp_u64);
	if (memcmp(got, want, n * sizeof(uint64_t)))
		fail("the epoll's watches have other data");
}

/* ------------------------------------------------------------ RT signals */

#define RT_KINDS	8

static void rtsigs_setup(long n)
{
	union sigval v;
	sigset_t set;
	long i;

	sigemptyset(&set);
	for (i = 0; i < RT_KINDS; i++)
		sigaddset(&set, SIGRTMIN + i);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		fail_errno("sigprocmask");
	for (i = 0; i < n; i++) {
		v.sival_ptr = (void *)(uintptr_t)pattern(5, i);
		if (sigqueue(getpid(), SIGRTMIN + i % RT_KINDS, v))
			fail_errno("sigqueue %ld", i);
	}
}

/* Each kind's signals, in the order they were sent, with their values. */
static void rtsigs_check(long n)
{
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	sigset_t one;
	long i, k;

	for (k = 0; k < RT_KINDS; k++) {
		sigemptyset(&one);
		sigaddset(&one, SIGRTMIN + k);
		for (i = k; i < n; i += RT_KINDS) {
			if (sigtimedwait(&one, &si, &zero) != SIGRTMIN + k)
				fail_errno("signal %ld (%d) is not pending", i,
					   (int)(SIGRTMIN + k));
			if ((uintptr_t)si.si_value.sival_ptr != pattern(5, i))
				fail("signal %ld (%d) has another value", i, (int)(SIGRTMIN + k));
		}
		if (sigtimedwait(&one, &si, &zero) >= 0)
			fail("more signals %d are pending than were sent", (int)(SIGRTMIN + k));
	}
}

/* ------------------------------------------------------------ inotify */

static int in, *wd;

static void watched(char *buf, size_t len, long i)
{
	snprintf(buf, len, "%s.dir/w%ld", test_name, i);
}

static void inotify_setup(long n)
{
	char path[96];
	long i;
	int fd;

	snprintf(path, sizeof(path), "%s.dir", test_name);
	mkdir(path, 0700);
	wd = calloc(n, sizeof(int));
	in = inotify_init1(IN_NONBLOCK);
	if (!wd || in < 0)
		fail_errno("inotify");
	for (i = 0; i < n; i++) {
		watched(path, sizeof(path), i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0 || close(fd))
			fail_errno("create %s", path);
		wd[i] = inotify_add_watch(in, path, i & 1 ? IN_MODIFY : IN_ATTRIB);
		if (wd[i] < 0)
			fail_errno("inotify_add_watch %s", path);
	}
}

/* Each file's watch has its wd still: adding to it gives that wd back. */
static void inotify_check(long n)
{
	char path[96], buf[4096];
	long i;

	if (read(in, buf, sizeof(buf)) >= 0)
		fail("the inotify has events nothing caused");
	for (i = 0; i < n; i++) {
		watched(path, sizeof(path), i);
		if (inotify_add_watch(in, path, IN_OPEN | IN_MASK_ADD) != wd[i])
			fail("the watch of %s has another wd", path);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s.dir", test_name);
	rmdir(path);
}

/* ------------------------------------------------------------ lone threads */

/*
 * A thread of its own for a kind: it sets its state up, says so, waits
 * for the check, checks and says what it found.
 */
struct lone {
	pthread_t t;
	long n;
	int stage;		/* 1 set up, 2 check now */
	const char *err;	/* what the check found wrong */
	pid_t tid;
	void (*setup)(struct lone *l);
	void (*check)(struct lone *l);
};

static void *lone_main(void *arg)
{
	/* SIGTERM and the process's queued RT signals are the leader's */
	uint64_t mask = (1ULL << (SIGTERM - 1)) | (0xffULL << (SIGRTMIN - 1));
	struct lone *l = arg;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, NULL, 8);
	l->tid = gettid();
	l->setup(l);
	__atomic_store_n(&l->stage, 1, __ATOMIC_RELEASE);
	futex_wake(&l->stage);
	while (__atomic_load_n(&l->stage, __ATOMIC_ACQUIRE) != 2)
		futex_wait(&l->stage, 1);
	l->check(l);
	return NULL;
}

static void lone_start(struct lone *l, long n)
{
	l->n = n;
	if ((errno = pthread_create(&l->t, NULL, lone_main, l)))
		fail_errno("pthread_create");
	while (!__atomic_load_n(&l->stage, __ATOMIC_ACQUIRE))
		futex_wait(&l->stage, 0);
	if (l->err)
		fail("thread %d: %s", l->tid, l->err);
}

static void lone_check(struct lone *l)
{
	__atomic_store_n(&l->stage, 2, __ATOMIC_RELEASE);
	futex_wake(&l->stage);
	if ((errno = pthread_join(l->t, NULL)))
		fail_errno("pthread_join");
	if (l->err)
		fail("thread %d: %s", l->tid, l->err);
}

/* N filters installed by one thread for itself alone. */
static void tfilters_setup(struct lone *l)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	long i;

	for (i = 0; i < l->n && !l->err; i++)
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			l->err = "can't install a seccomp filter";
}

static void tfilters_check(struct lone *l)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", l->tid);
	if (test_read_file(path, buf, sizeof(buf)) <= 0 ||
	    !(p = strstr(buf, "Seccomp_filters:")) || atol(p + 16) != l->n)
		l->err = "another number of seccomp filters";
}

static struct lone tfilters = { .setup = tfilters_setup, .check = tfilters_check };

static void tfilters_start(long n)
{
	lone_start(&tfilters, n);
}

static void tfilters_end(long n)
{
	lone_check(&tfilters);
}

/* N RT signals queued to one thread, which blocks them. */
static void trtsigs_setup(struct lone *l)
{
	siginfo_t si;
	sigset_t set;
	long i;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < l->n && !l->err; i++) {
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGRTMIN + 1;
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		si.si_value.sival_ptr = (void *)(uintptr_t)pattern(7, i);
		if (syscall(SYS_rt_tgsigqueueinfo, getpid(), l->tid, SIGRTMIN + 1, &si))
			l->err = "can't queue a signal";
	}
}

static void trtsigs_check(struct lone *l)
{
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	sigset_t set;
	long i;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	for (i = 0; i < l->n && !l->err; i++)
		if (sigtimedwait(&set, &si, &zero) != SIGRTMIN + 1 ||
		    (uintptr_t)si.si_value.sival_ptr != pattern(7, i))
			l->err = "a queued signal is missing or out of order";
	if (!l->err && sigtimedwait(&set, &si, &zero) >= 0)
		l->err = "more signals than were queued";
}

static struct lone trtsigs = { .setup = trtsigs_setup, .check = trtsigs_check };

static void trtsigs_start(long n)
{
	lone_start(&trtsigs, n);
}

static void trtsigs_end(long n)
{
	lone_check(&trtsigs);
}

/* ------------------------------------------------------------ wd */

static int wd_in, wd_one;

static void wd_setup(long n)
{
	char path[96];
	long i;
	int fd, w;

	snprintf(path, sizeof(path), "%s.wd", test_name);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	wd_in = inotify_init1(IN_NONBLOCK);
	if (fd < 0 || close(fd) || wd_in < 0)
		fail_errno("inotify");
	for (i = 1; i < n; i++) {
		w = inotify_add_watch(wd_in, path, IN_ATTRIB);
		if (w != i || inotify_rm_watch(wd_in, w))
			fail_errno("watch %ld (wd %d)", i, w);
	}
	wd_one = inotify_add_watch(wd_in, path, IN_ATTRIB);
	if (wd_one != n)
		fail_errno("the watch has wd %d, not %ld", wd_one, n);
	while (read(wd_in, path, sizeof(path)) > 0)
		;	/* the removals' IN_IGNORED */
}

static void wd_check(long n)
{
	char path[96];

	snprintf(path, sizeof(path), "%s.wd", test_name);
	if (inotify_add_watch(wd_in, path, IN_ATTRIB | IN_MASK_ADD) != wd_one)
		fail("the watch has another wd than %d", wd_one);
	unlink(path);
}

/* ------------------------------------------------------------ bigmemfd */

static int big;

static void bigmemfd_setup(long n)
{
	uint64_t v = pattern(6, n);

	big = memfd_create("shape.big", 0);
	if (big < 0 || ftruncate(big, 1LL << n) ||
	    pwrite(big, &v, sizeof(v), (1LL << n) - PAGE) != sizeof(v))
		fail_errno("a memfd of 2^%ld bytes", n);
}

static void bigmemfd_check(long n)
{
	struct stat st;
	uint64_t v;

	if (fstat(big, &st) || st.st_size != 1LL << n ||
	    pread(big, &v, sizeof(v), (1LL << n) - PAGE) != sizeof(v) || v != pattern(6, n))
		fail("the memfd of 2^%ld bytes has another size or content", n);
}

/* ------------------------------------------------------------ nofile */

static int nofile_top;

static void nofile_setup(long n)
{
	struct rlimit rl = { n, n };
	int fd;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail_errno("setrlimit(RLIMIT_NOFILE, %ld)", n);
	while ((fd = open("/dev/null", O_RDONLY)) >= 0)
		nofile_top = fd;
	if (errno != EMFILE || nofile_top != n - 1 || close(nofile_top))
		fail_errno("the fd table is not full (top fd %d)", nofile_top);
}

/* The one free slot is the top one, and there is no other. */
static void nofile_check(long n)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur != (rlim_t)n ||
	    rl.rlim_max != (rlim_t)n)
		fail("RLIMIT_NOFILE is another");
	fd = open("/dev/null", O_RDONLY);
	if (fd != nofile_top || open("/dev/null", O_RDONLY) >= 0 || errno != EMFILE ||
	    close(fd))
		fail("the fd table is not as full as it was (fd %d)", fd);
}

/* ------------------------------------------------------------ main */

static struct kind kinds[] = {
	{ "nofile", nofile_setup, nofile_check },
	{ "threads", threads_setup, threads_check },
	{ "memfds", memfds_setup, memfds_check },
	{ "ptimers", ptimers_setup, ptimers_check },
	{ "fds", fds_setup, fds_check },
	{ "areas", areas_setup, areas_check },
	{ "maxareas", maxareas_setup, areas_check },
	{ "timerfds", timerfds_setup, timerfds_check },
	{ "epoll", epoll_setup, epoll_check },
	{ "rtsigs", rtsigs_setup, rtsigs_check },
	{ "inotify", inotify_setup, inotify_check },
	{ "wd", wd_setup, wd_check },
	{ "tfilters", tfilters_start, tfilters_end },
	{ "trtsigs", trtsigs_start, trtsigs_end },
	{ "bigmemfd", bigmemfd_setup, bigmemfd_check },
};

static void parse(int argc, char **argv)
{
	size_t k, len;
	int i;

	for (i = optind; i < argc; i++) {
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			len = strlen(kinds[k].name);
			if (!strncmp(argv[i], kinds[k].name, len) && argv[i][len] == '=')
				break;
		}
		if (k == ARRAY_SIZE(kinds) || atol(argv[i] + len + 1) < 0)
			fail("unknown shape %s", argv[i]);
		kinds[k].n = atol(argv[i] + len + 1);
		kinds[k].on = 1;
	}
}

int main(int argc, char **argv)
{
	size_t k;

	test_init(argc, argv);
	parse(argc, argv);
	/* nofile last: every other kind's fds come first */
	for (k = 1; k < ARRAY_SIZE(kinds); k++)
		if (kinds[k].on)
			kinds[k].setup(kinds[k].n);
	if (kinds[0].on)
		kinds[0].setup(kinds[0].n);

	test_ready();
	test_waitsig();

	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		if (kinds[k].on)
			kinds[k].check(kinds[k].n);
	pass();
}
