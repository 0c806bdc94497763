// SPDX-License-Identifier: GPL-2.0-only
/*
 * A chain of seccomp filters shared the ways the kernel shares them:
 *   A  getppid -> EXDEV, installed before a thread is created (inherited);
 *   B  getppid, getpgrp -> ENOKEY, installed with TSYNC (the thread gets it);
 *   C  getppid, getsid -> ENOLINK, installed by a child forked after B;
 *   E  sysinfo -> ENOANO, a filter of the child's second thread alone.
 * Then both threads of the child drop CAP_SYS_ADMIN: restore must install
 * the filters, E by that thread itself, before the credentials are set.
 * Of equal actions the newest filter's errno wins: getppid tells whether
 * the chain came back in the right order.
 * After restore each task and thread answers as its chain says, and the
 * main thread can still add a filter D (sysinfo -> ENOANO) with TSYNC: the
 * kernel allows that only if the thread's filters are the very same
 * objects as the main thread's, so the restored threads share their chain.
 */
#include <linux/capability.h>
#include <pthread.h>
#include <sys/prctl.h>

#include "seccomp_lib.h"
#include "files_lib.h"

static volatile int go, child_go, child_ready;
static const char *thread_why, *child_thread_why;
static pthread_t child_th;

static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1U << CAP_SYS_ADMIN);
	d[0].permitted &= ~(1U << CAP_SYS_ADMIN);
	return syscall(SYS_capset, &h, d);
}

static const char *check_ab(void)
{
	const char *why = sc_expect("getppid", SYS_getppid, ENOKEY);

	return why ? why : sc_expect("getpgrp", SYS_getpgrp, ENOKEY);
}

static void *thread_main(void *arg)
{
	static char buf[160];

	while (!go)
		usleep(1000);
	thread_why = check_ab();
	if (!thread_why)
		thread_why = sc_expect("sysinfo", SYS_sysinfo, ENOANO);
	if (!thread_why && sc_status("Seccomp_filters") != 3) {
		snprintf(buf, sizeof(buf), "the thread has %ld filters instead of 3",
			 sc_status("Seccomp_filters"));
		thread_why = buf;
	}
	return NULL;
}

static void *child_thread(void *arg)
{
	static const int e[] = { SYS_sysinfo };

	if (sc_install(e, 1, SECCOMP_RET_ERRNO | ENOANO, 0) || drop_sys_admin())
		_exit(4);
	child_ready = 1;
	while (!child_go)
		usleep(1000);
	child_thread_why = sc_expect("getppid", SYS_getppid, ENOLINK);
	if (!child_thread_why)
		child_thread_why = sc_expect("sysinfo", SYS_sysinfo, ENOANO);
	if (!child_thread_why && sc_status("Seccomp_filters") != 4)
		child_thread_why = "the child's thread lost its own filter";
	return NULL;
}

static void child_setup(void)
{
	static const int nrs[] = { SYS_getppid, SYS_getsid };

	if (sc_install(nrs, 2, SECCOMP_RET_ERRNO | ENOLINK, 0))
		_exit(3);
	if (pthread_create(&child_th, NULL, child_thread, NULL))
		_exit(5);
	while (!child_ready)
		usleep(1000);
	if (drop_sys_admin())
		_exit(6);
}

static const char *child_check(void)
{
	static char buf[160];
	const char *why = sc_expect("getppid", SYS_getppid, ENOLINK);
	char caps[64];

	if (!why)
		why = sc_expect("getpgrp", SYS_getpgrp, ENOKEY);
	if (!why)
		why = sc_expect("getsid", SYS_getsid, ENOLINK);
	if (!why && sc_status("Seccomp_filters") != 3) {
		snprintf(buf, sizeof(buf), "%ld filters instead of 3", sc_status("Seccomp_filters"));
		why = buf;
	}
	if (!why && (!test_status_field("CapEff", caps, sizeof(caps)) ||
		     strtoull(caps, NULL, 16) & (1ULL << CAP_SYS_ADMIN)))
		why = "CAP_SYS_ADMIN is effective again";
	child_go = 1;
	pthread_join(child_th, NULL);
	return why ? why : child_thread_why;
}

int main(int argc, char **argv)
{
	static const int a[] = { SYS_getppid }, b[] = { SYS_getppid, SYS_getpgrp };
	static const int d[] = { SYS_sysinfo };
	const char *why;
	pthread_t th;
	pid_t child;
	long ret;

	test_init(argc, argv);
	if (sc_install(a, 1, SECCOMP_RET_ERRNO | EXDEV, 0))
		fail_errno("seccomp A");
	if (pthread_create(&th, NULL, thread_main, NULL))
		fail("pthread_create");
	if (sc_install(b, 2, SECCOMP_RET_ERRNO | ENOKEY, SECCOMP_FILTER_FLAG_TSYNC))
		fail_errno("seccomp B with TSYNC");
	child = fork_checker(child_setup, child_check);

	test_ready();
	test_waitsig();

	why = check_ab();
	if (!why)
		why = sc_expect("getsid", SYS_getsid, 0);
	if (why)
		fail("main thread: %s", why);
	if (sc_status("Seccomp_filters") != 2)
		fail("the main thread has %ld filters instead of 2", sc_status("Seccomp_filters"));
	ret = sc_install(d, 1, SECCOMP_RET_ERRNO | ENOANO, SECCOMP_FILTER_FLAG_TSYNC);
	if (ret < 0)
		fail_errno("seccomp D with TSYNC");
	if (ret > 0)
		fail("TSYNC refused by thread %ld: it does not share the main thread's filters",
		     ret);
	go = 1;
	pthread_join(th, NULL);
	if (thread_why)
		fail("thread: %s", thread_why);
	end_checker(child);
	pass();
}
