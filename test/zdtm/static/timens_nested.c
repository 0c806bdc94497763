// SPDX-License-Identifier: GPL-2.0-only
/*
 * Nested time namespaces, each continuing from the dump:
 *
 *   r: in the namespace it was started in; unshares N1 (+10 days
 *   |  monotonic, +1000 days boottime) for its children
 *   +-- c: in N1; unshares N2 (N1 - 5 days, - 500 days) for its children
 *   |   +-- g: in N2
 *   +-- d: in N1
 *
 * Every task samples its clocks every 10 ms and after SIGTERM checks:
 *  - MONOTONIC and BOOTTIME never go back, and across the largest step of
 *    REALTIME (the dump, the runner's gap, the restore) they advanced by at
 *    least the gap less than REALTIME (the downtime is invisible; the time
 *    the dump kept the task frozen is not, and how long that was does not
 *    count), REALTIME did jump by the gap, BOOTTIME - MONOTONIC stayed put
 *    (read at one moment: readings a freeze came between are taken again);
 *  - its clocks are in its namespace's range (days of offset);
 *  - /proc/uptime agrees with BOOTTIME; MONOTONIC_COARSE and
 *    BOOTTIME_ALARM with their base clocks; MONOTONIC_RAW - MONOTONIC
 *    moved by no more than the clocks' rates can explain;
 *  - a child it forks now reads its clocks ahead of its own by what its
 *    namespace for children had on top of its own (r: +10 d, +1000 d;
 *    c: -5 d, -500 d; d and g: 0).
 *  - a timerfd it armed for an absolute moment of its CLOCK_MONOTONIC (and
 *    one of its BOOTTIME), an hour ahead, still expires at that moment of
 *    its own clocks (the dump must read the namespace it is in, not the
 *    one it made for its children);
 * The root also checks that each task is in the namespace it was
 * (comparing /proc/PID/ns/time and time_for_children between tasks) and
 * that N2's offsets are N1's less exactly 5 and 500 days.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x80
#endif

#define DAY		86400LL
#define NS		1000000000LL
#define EPS		0.01	/* REALTIME may be slewed a little */
#define STILL_NS	(NS / 100)	/* readings this close make one moment */
#define SETTLE		20

enum { R, C, G, D, NR };

static const char *names[NR] = { "r", "c", "g", "d" };
/* what each has for its children on top of its own namespace, in days */
static const long long kid_mono[NR] = { 10, -5, 0, 0 };
static const long long kid_boot[NR] = { 1000, -500, 0, 0 };
/* its own boottime, in days at least (and less than the next) */
static const long long min_boot[NR] = { 0, 1000, 500, 1000 };
static const long long max_boot[NR] = { 500, 2000, 1000, 2000 };

static int who = R;
static int setup[2];

struct msg {
	int who;
	pid_t pid;
};

#define die(...) test_task_fail(who == R, names[who], __VA_ARGS__)

static long long now(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		die("clock_gettime(%d): %m", clk);
	return ts.tv_sec * NS + ts.tv_nsec;
}

/* Adds days to the offsets of the namespace our children will be in. */
static void unshare_time(long long mono_days, long long boot_days)
{
	char buf[128];
	int fd, len;
	long long m_s, m_n, b_s, b_n;
	FILE *f;

	if (unshare(CLONE_NEWTIME))
		die("unshare(CLONE_NEWTIME): %m");
	/* a new namespace starts with the offsets of the one it came from */
	f = fopen("/proc/self/timens_offsets", "r");
	if (!f || fscanf(f, "%*s %lld %lld %*s %lld %lld", &m_s, &m_n, &b_s, &b_n) != 4)
		die("can't read /proc/self/timens_offsets");
	fclose(f);
	len = snprintf(buf, sizeof(buf), "monotonic %lld %lld\nboottime %lld %lld\n",
		       m_s + mono_days * DAY, m_n, b_s + boot_days * DAY, b_n);
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0 || write(fd, buf, len) != len)
		die("can't write /proc/self/timens_offsets: %m");
	close(fd);
}

/* ----------------------------------------------------------- timers */

#define TFD_AHEAD	3600LL

static struct {
	int fd;
	clockid_t clk;
	long long at;
} tfds[2] = { { -1, CLOCK_MONOTONIC, 0 }, { -1, CLOCK_BOOTTIME, 0 } };

static void arm_timerfds(void)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int i;

	for (i = 0; i < 2; i++) {
		tfds[i].fd = timerfd_create(tfds[i].clk, TFD_CLOEXEC);
		tfds[i].at = now(tfds[i].clk) + TFD_AHEAD * NS;
		its.it_value.tv_sec = tfds[i].at / NS;
		its.it_value.tv_nsec = tfds[i].at % NS;
		if (tfds[i].fd < 0 ||
		    timerfd_settime(tfds[i].fd, TFD_TIMER_ABSTIME, &its, NULL))
			die("timerfd on clock %d: %m", tfds[i].clk);
	}
}

static void check_timerfds(void)
{
	struct itimerspec its;
	long long left, want;
	int i;

	for (i = 0; i < 2; i++) {
		if (timerfd_gettime(tfds[i].fd, &its))
			die("timerfd_gettime: %m");
		want = tfds[i].at - now(tfds[i].clk);
		left = its.it_value.tv_sec * NS + its.it_value.tv_nsec;
		if (llabs(left - want) > NS / 10)
			die("a timerfd on clock %d has %.3f s left, its deadline %.3f s",
			    tfds[i].clk, left / 1e9, want / 1e9);
	}
}

/* ----------------------------------------------------------- sampling */

struct sample {
	long long mono, boot, real;
};

static struct {
	struct sample last;
	double hid_mono, hid_boot, max_real;	/* at the largest REALTIME step */
	long long boot_minus_mono;
	long long raw_minus_mono;	/* at the start */
	long long started;		/* REALTIME then */
} st;

/*
 * The three clocks at one moment: read again when MONOTONIC moved by more
 * than STILL_NS meanwhile (a dump froze the task between two readings, and
 * BOOTTIME - MONOTONIC would seem to move by as long as the freeze).
 */
static void sample(struct sample *s)
{
	long long after;
	int i;

	for (i = 0; i < 100; i++) {
		s->mono = now(CLOCK_MONOTONIC);
		s->boot = now(CLOCK_BOOTTIME);
		s->real = now(CLOCK_REALTIME);
		after = now(CLOCK_MONOTONIC);
		if (after - s->mono < STILL_NS)
			return;
	}
	die("no three readings of the clocks within %lld ns in 100 tries", STILL_NS);
}

static void step(void)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	struct sample s;

	clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
	sample(&s);
	if (s.mono < st.last.mono || s.boot < st.last.boot)
		die("a clock went backwards: mono %lld -> %lld, boot %lld -> %lld",
		    st.last.mono, s.mono, st.last.boot, s.boot);
	if ((s.real - st.last.real) / 1e9 > st.max_real) {
		st.max_real = (s.real - st.last.real) / 1e9;
		/* what REALTIME saw go by and the others did not */
		st.hid_mono = st.max_real - (s.mono - st.last.mono) / 1e9;
		st.hid_boot = st.max_real - (s.boot - st.last.boot) / 1e9;
	}
	if (llabs(s.boot - s.mono - st.boot_minus_mono) > NS / 5)
		die("BOOTTIME - MONOTONIC moved by %.3f s",
		    (s.boot - s.mono - st.boot_minus_mono) / 1e9);
	st.last = s;
}

static void start_sampling(void)
{
	arm_timerfds();
	sample(&st.last);
	st.boot_minus_mono = st.last.boot - st.last.mono;
	st.raw_minus_mono = now(CLOCK_MONOTONIC_RAW) - now(CLOCK_MONOTONIC);
	st.started = st.last.real;
}

/* Until SIGTERM, then a little more: both sides of the restore are covered. */
static void sample_until_sigterm(void)
{
	int i;

	for (i = 0; i < SETTLE; i++)
		step();
	if (who == R)
		test_ready();
	while (!test_sigterm)
		step();
	for (i = 0; i < SETTLE; i++)
		step();
}

/* ----------------------------------------------------------- checks */

static void check_continuity(void)
{
	double gap = test_gap();

	if (gap > 0) {
		if (st.hid_mono < gap - EPS)
			die("CLOCK_MONOTONIC saw %.3f s of the %.1f s gap go by",
			    gap - st.hid_mono, gap);
		if (st.hid_boot < gap - EPS)
			die("CLOCK_BOOTTIME saw %.3f s of the %.1f s gap go by",
			    gap - st.hid_boot, gap);
		if (st.max_real < gap)
			die("CLOCK_REALTIME never jumped by the gap (%.3f s < %.1f s): "
			    "was the task restored at all?", st.max_real, gap);
	}
}

static void check_range(void)
{
	long long boot = now(CLOCK_BOOTTIME) / NS, mono = now(CLOCK_MONOTONIC) / NS;

	if (boot < min_boot[who] * DAY || boot >= max_boot[who] * DAY)
		die("CLOCK_BOOTTIME is %lld s, not within %lld to %lld days", boot,
		    min_boot[who], max_boot[who]);
	if (who != R && mono < 5 * DAY)
		die("CLOCK_MONOTONIC is %lld s: less than its namespace's 5 days", mono);
}

static void check_variants(void)
{
	long long b, a, raw, elapsed;
	struct timespec ts;
	char buf[64];
	double up;

	/* /proc/uptime: BOOTTIME of the reader's namespace, in 10 ms steps */
	b = now(CLOCK_BOOTTIME);
	if (test_read_file("/proc/uptime", buf, sizeof(buf)) < 0)
		die("read /proc/uptime: %m");
	a = now(CLOCK_BOOTTIME);
	up = strtod(buf, NULL);
	if (up < b / 1e9 - 0.02 || up > a / 1e9 + 0.02)
		die("/proc/uptime says %.2f s, CLOCK_BOOTTIME %.3f s", up, a / 1e9);
	/* the coarse clock lags by at most a tick or so */
	b = now(CLOCK_MONOTONIC);
	raw = now(CLOCK_MONOTONIC_COARSE);
	a = now(CLOCK_MONOTONIC);
	if (raw < b - NS / 20 || raw > a + NS / 1000)
		die("CLOCK_MONOTONIC_COARSE %lld is not near CLOCK_MONOTONIC %lld", raw, a);
	/* without an RTC the alarm clocks can't be read (EINVAL) */
	b = now(CLOCK_BOOTTIME);
	raw = clock_gettime(CLOCK_BOOTTIME_ALARM, &ts) ? b : ts.tv_sec * NS + ts.tv_nsec;
	a = now(CLOCK_BOOTTIME);
	if (raw < b || raw > a)
		die("CLOCK_BOOTTIME_ALARM %lld is not between two BOOTTIME reads %lld, %lld",
		    raw, b, a);
	/* RAW runs without NTP's corrections: allow 0.1 % of the time since */
	elapsed = now(CLOCK_REALTIME) - st.started;
	raw = now(CLOCK_MONOTONIC_RAW) - now(CLOCK_MONOTONIC);
	if (llabs(raw - st.raw_minus_mono) > NS / 20 + elapsed / 1000)
		die("CLOCK_MONOTONIC_RAW - MONOTONIC moved by %.3f s",
		    (raw - st.raw_minus_mono) / 1e9);
}

/* A child forked now reads the namespace for children: compare with ours. */
static void check_kids_ns(void)
{
	long long mb, bb, ma, ba, kid[2], want_m, want_b;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		die("pipe: %m");
	mb = now(CLOCK_MONOTONIC);
	bb = now(CLOCK_BOOTTIME);
	pid = fork();
	if (pid < 0)
		die("fork: %m");
	if (pid == 0) {
		kid[0] = now(CLOCK_MONOTONIC);
		kid[1] = now(CLOCK_BOOTTIME);
		_exit(write(p[1], kid, sizeof(kid)) != sizeof(kid));
	}
	if (read(p[0], kid, sizeof(kid)) != sizeof(kid))
		die("the clock reading child died");
	ma = now(CLOCK_MONOTONIC);
	ba = now(CLOCK_BOOTTIME);
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	want_m = kid_mono[who] * DAY * NS;
	want_b = kid_boot[who] * DAY * NS;
	if (kid[0] < mb + want_m || kid[0] > ma + want_m ||
	    kid[1] < bb + want_b || kid[1] > ba + want_b)
		die("a child reads monotonic %+.3f s, boottime %+.3f s from us, not "
		    "%+lld and %+lld days", (kid[0] - mb) / 1e9, (kid[1] - bb) / 1e9,
		    kid_mono[who], kid_boot[who]);
}

static void check_self(void)
{
	check_timerfds();
	check_continuity();
	check_range();
	check_variants();
	check_kids_ns();
}

/* ----------------------------------------------------------- the tree */

static pid_t pids[NR];

static void reap(int k)
{
	int status;

	if (kill(pids[k], SIGTERM))
		die("%s (%d) is gone: %m", names[k], pids[k]);
	while (waitpid(pids[k], &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid %s: %m", names[k]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s failed (status %#x); see the log", names[k], status);
}

static void report(void)
{
	struct msg m = { who, getpid() };

	if (write(setup[1], &m, sizeof(m)) != sizeof(m))
		_exit(5);
	close(setup[0]);
	close(setup[1]);
}

static pid_t spawn(int k, void (*fn)(void))
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		die("fork: %m");
	if (pid == 0) {
		/* nothing outlives a failed test; restore keeps the setting */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(3);
		who = k;
		start_sampling();
		fn();
		_exit(0);
	}
	return pid;
}

static void run_leaf(void)
{
	report();
	sample_until_sigterm();
	check_self();
}

static void run_c(void)
{
	unshare_time(kid_mono[C], kid_boot[C]);
	pids[G] = spawn(G, run_leaf);
	report();
	sample_until_sigterm();
	check_self();
	reap(G);
}

static void ns_link(pid_t pid, const char *which, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, which);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		die("readlink %s: %m", path);
	buf[n] = 0;
}

static void read_offsets(pid_t pid, long long *mono, long long *boot)
{
	char path[64];
	long long ms, mn, bs, bn;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%*s %lld %lld %*s %lld %lld", &ms, &mn, &bs, &bn) != 4)
		die("can't read %s", path);
	fclose(f);
	*mono = ms * NS + mn;
	*boot = bs * NS + bn;
}

/* The last NSpid of task @host in /proc: its pid as it sees it. */
static pid_t ns_pid_of(pid_t host)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", host);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "NSpid:")))
		return 0;
	p[strcspn(p, "\n")] = 0;
	return atoi(strrchr(p, '\t') + 1);
}

/*
 * With --pidns, /proc (the runner's) knows the tree by other pids, which
 * a restore changes: find them down the children lists from ourselves.
 */
static void find_hosts(pid_t host, pid_t *hpids)
{
	char path[64], buf[512], *p, *end;
	pid_t kid;
	int k;

	for (k = 0; k < NR; k++)
		if (pids[k] == ns_pid_of(host))
			hpids[k] = host;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", host, host);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		die("read %s: %m", path);
	for (p = buf; (kid = strtol(p, &end, 10)) > 0; p = end)
		find_hosts(kid, hpids);
}

/* Who is in which namespace, and N2 is N1 less exactly 5 and 500 days. */
static void check_layout(void)
{
	char own[NR][64], kids[NR][64];
	long long m1, b1, m2, b2, m3, b3;
	pid_t hpids[NR] = { 0 };
	int k;

	find_hosts(test_host_pid(), hpids);
	for (k = 0; k < NR; k++)
		if (!hpids[k])
			die("%s (%d) is not in the tree", names[k], pids[k]);

	for (k = 0; k < NR; k++) {
		ns_link(hpids[k], "time", own[k], sizeof(own[k]));
		ns_link(hpids[k], "time_for_children", kids[k], sizeof(kids[k]));
	}
	if (!strcmp(own[R], kids[R]) || strcmp(own[C], kids[R]) || strcmp(own[D], kids[R]) ||
	    !strcmp(own[C], kids[C]) || strcmp(own[G], kids[C]) || strcmp(own[G], kids[G]) ||
	    strcmp(own[D], kids[D]))
		die("tasks are not in the namespaces they were: r %s/%s, c %s/%s, g %s/%s, "
		    "d %s/%s", own[R], kids[R], own[C], kids[C], own[G], kids[G], own[D],
		    kids[D]);
	read_offsets(hpids[R], &m1, &b1);
	read_offsets(hpids[C], &m2, &b2);
	read_offsets(hpids[D], &m3, &b3);
	if (m2 - m1 != kid_mono[C] * DAY * NS || b2 - b1 != kid_boot[C] * DAY * NS)
		die("N2 is N1 %+lld ns monotonic, %+lld ns boottime, not %lld and %lld days",
		    m2 - m1, b2 - b1, kid_mono[C], kid_boot[C]);
	if (m3 != m1 || b3 != b1)
		die("d and r have different offsets for N1");
}

int main(int argc, char **argv)
{
	struct msg m;
	int k;

	test_init(argc, argv);
	start_sampling();
	if (pipe(setup))
		fail_errno("pipe");
	pids[R] = getpid();
	unshare_time(kid_mono[R], kid_boot[R]);
	pids[C] = spawn(C, run_c);
	pids[D] = spawn(D, run_leaf);
	for (k = 0; k < 3; k++) {
		if (read(setup[0], &m, sizeof(m)) != sizeof(m) || m.who < 0 || m.who >= NR)
			fail("a task died while setting up");
		pids[m.who] = m.pid;
	}
	close(setup[0]);
	close(setup[1]);

	sample_until_sigterm();
	check_layout();
	check_self();
	reap(C);
	reap(D);
	test_msg("largest REALTIME step %.3f s, hidden from mono %.3f boot %.3f; gap %.1f",
		 st.max_real, st.hid_mono, st.hid_boot, test_gap());
	pass();
}
