/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the zdtm test programs.
 *
 * A test program sets its state up, calls test_ready(), waits for SIGTERM
 * (test_waitsig() or its own loop on test_sigterm), checks that the state is
 * exactly what it was and reports with pass() or fail(). A program whose
 * feature the machine lacks says so with skip() before test_ready().
 */
#ifndef ZDTM_H
#define ZDTM_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Set by the SIGTERM handler installed in test_init(). */
extern volatile sig_atomic_t test_sigterm;

/* basename of argv[0] */
extern const char *test_name;

void test_init(int argc, char **argv);
void test_ready(void);
void test_waitsig(void);
/*
 * test_waitsig() for tests that must see how long they were kept from
 * running: waits for SIGTERM in 1 ms sleeps and returns the longest time
 * (ns of CLOCK_MONOTONIC) between two of its clock readings, i.e. at least
 * the part of a dump's freeze that the restored clocks show.
 */
long long test_waitsig_stall(void);

/*
 * Seconds the runner sleeps between dump and restore (0 when it does not,
 * e.g. in the self-check flavour). From --gap or env ZDTM_GAP.
 */
double test_gap(void);

/*
 * With --pidns (a "pidns" .desc), test_init() made the test the init of a
 * new pid namespace: getpid() is 1. test_host_pid() is the pid the runner
 * (and /proc, which is the runner's) knows it by.
 */
int test_pidns(void);
pid_t test_host_pid(void);

/*
 * For tests that chroot: the outfile and readyfile paths are rewritten
 * relative to the new root, which must contain them.
 */
void test_chroot(const char *dir);

void test_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pass(void) __attribute__((noreturn));
void fail(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/*
 * The feature under test is missing here (no AVX-512, an older kernel, a
 * single CPU): writes "SKIP: reason" and exits with TEST_EXIT_SKIP; the
 * runner reports the test skipped with the reason. Only before
 * test_ready(): once criu may have been at the task, skip() is a failure.
 */
#define TEST_EXIT_SKIP	77
void skip(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* fail() with strerror(errno) appended */
#define fail_errno(fmt, ...) \
	fail(fmt ": %m (%s:%d)", ##__VA_ARGS__, __FILE__, __LINE__)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Small helpers used by several tests */

/* Read a whole (small, /proc) file into buf; returns the length or -1. */
ssize_t test_read_file(const char *path, char *buf, size_t size);

/* The state letter of /proc/PID/stat (R, S, T, Z...), '?' if unreadable. */
char test_proc_state(pid_t pid);

/* Value of "Key:" in /proc/self/status as a string (trimmed), or NULL. */
const char *test_status_field(const char *key, char *buf, size_t size);

/* Our child named comm (the first, by /proc/self/task/PID/children), or 0. */
pid_t test_find_child(const char *comm);

/*
 * The si_code this kernel gives a signal sent with tgkill() to ourselves
 * (SI_TKILL, or SI_USER on some).
 */
int test_tkill_code(void);

/*
 * A grandchild, reparented to the runner (a subreaper) and so outside the
 * tree, holds fd @keep until we are gone; @drop (-1: none) is closed in
 * it, @keep in us. Returns our end of the pipe it waits on: it lets go
 * when that closes (at our exit).
 */
int test_hold_outside(int keep, int drop);

/*
 * A NETLINK_ROUTE socket that has asked for loopback's link (RTM_GETLINK,
 * ifindex 1); the answer is left for the caller to read. fail()s.
 */
int test_ask_lo(void);

/* 1 when reading *addr faults (SIGSEGV, caught), 0 when it does not. */
int test_faults(volatile unsigned char *addr);

/*
 * A failure in a test of several tasks: the root (root != 0) fails the
 * test; any other task logs "FAIL: WHO (PID): why" and exits 1, and its
 * parent fails when it checks its status.
 */
void test_task_fail(int root, const char *who, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* A deterministic 64-bit pattern for (seed, index). */
static inline unsigned long long test_pattern(unsigned long long seed,
					      unsigned long long idx)
{
	unsigned long long x = seed * 0x9e3779b97f4a7c15ULL + idx;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

#endif
