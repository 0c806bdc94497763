// SPDX-License-Identifier: GPL-2.0-only
/*
 * pidfds criu must refuse to dump, one per run (test_pidfd.py picks it
 * with an argument): of a process outside the tree (our parent, the
 * runner), and of a thread other than the leader (PIDFD_THREAD). Whatever the dump did, the pidfd still names its
 * process afterwards.
 */
#include <fcntl.h>
#include <pthread.h>

#include "pidfd_lib.h"

static pid_t thread_tid;

static void *thread_fn(void *arg)
{
	__atomic_store_n(&thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";
	pid_t want;
	pthread_t th;
	int fd;

	test_init(argc, argv);
	if (!strcmp(what, "outside")) {
		want = getppid();
		fd = pidfd_open(want, 0);
	} else if (!strcmp(what, "thread")) {
		if (pthread_create(&th, NULL, thread_fn, NULL))
			fail("pthread_create");
		while (!__atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		want = thread_tid;
		fd = pidfd_open(want, PIDFD_THREAD);
		if (fd < 0 && errno == EINVAL)
			skip("no PIDFD_THREAD (Linux 6.9+)");
	} else {
		fail("what to hold? %s", what);
	}
	if (fd < 0)
		fail_errno("pidfd_open(%d)", want);

	test_ready();
	test_waitsig();

	if (pidfd_pid(fd) != want)
		fail("the pidfd names %d, not %d", pidfd_pid(fd), want);
	pass();
}
