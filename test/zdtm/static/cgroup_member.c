// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task in cgroups of its own, as its arguments make them (in order):
 *   join:DIR    the task moves into cgroup directory DIR (cgroup.procs)
 *   ns          it unshares a cgroup namespace, rooted where it is
 *   thread:DIR  a thread of its own, moved alone into DIR (v1: tasks,
 *               v2: cgroup.threads, a threaded cgroup)
 *   child:DIR   a child, forked now, that moves into DIR
 *   hold:FILE   it keeps FILE open (a test removes it to make a restore fail)
 *   userns:ID   it unshares a user namespace whose ids 0-65535 are ID... outside
 * After SIGTERM every one of them must see the very /proc/self/cgroup it
 * saw at test_ready() (relative to its cgroup namespace, if any): the
 * leader, the thread (/proc/thread-self/cgroup) and the child, which
 * reports through its exit status. Not for the static suite: test_cgroup.py
 * makes the cgroups, runs it and checks from outside too (the limits, the
 * cgroups as the host sees them).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "userns_lib.h"
#include "zdtm.h"

#define VIEW	4096

static char lead_view[VIEW], thread_view[VIEW], thread_now[VIEW];
static volatile int thread_ready, thread_stop;
static const char *thread_dir;

static void join(const char *dir, const char *file, long id)
{
	char path[4096], buf[32];
	int fd, len;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	len = snprintf(buf, sizeof(buf), "%ld", id);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, buf, len) != len)
		fail_errno("can't write %s to %s", buf, path);
	close(fd);
}

static void view(const char *path, char *buf)
{
	if (test_read_file(path, buf, VIEW) < 0)
		fail_errno("can't read %s", path);
}

static void *thread_main(void *arg)
{
	const char *tasks;
	char probe[4096];

	/* a v2 cgroup has cgroup.threads, a v1 one tasks */
	snprintf(probe, sizeof(probe), "%s/cgroup.threads", thread_dir);
	tasks = access(probe, F_OK) ? "tasks" : "cgroup.threads";
	join(thread_dir, tasks, syscall(SYS_gettid));
	view("/proc/thread-self/cgroup", thread_view);
	thread_ready = 1;
	while (!thread_stop)
		usleep(10000);
	view("/proc/thread-self/cgroup", thread_now);
	return NULL;
}

static void start_thread(const char *dir, pthread_t *th)
{
	thread_dir = dir;
	if (pthread_create(th, NULL, thread_main, NULL))
		fail("pthread_create");
	while (!thread_ready)
		usleep(1000);
}

static volatile sig_atomic_t child_term;

static void child_sigterm(int sig)
{
	child_term = 1;
}

/* The child: same view after as before, or exit 1. */
static pid_t start_child(const char *dir)
{
	char before[VIEW], after[VIEW];
	sigset_t term, old;
	int p[2];
	pid_t pid;

	if (pipe(p))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid) {
		close(p[1]);
		if (read(p[0], before, 1) != 1)
			fail("the child in %s did not start", dir);
		close(p[0]);
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* SIGTERM blocked but in sigsuspend: it can't come between check and sleep */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	signal(SIGTERM, child_sigterm);
	join(dir, "cgroup.procs", 0);
	view("/proc/self/cgroup", before);
	if (write(p[1], "", 1) != 1)
		_exit(2);
	while (!child_term)
		sigsuspend(&old);
	view("/proc/self/cgroup", after);
	if (strcmp(before, after)) {
		test_msg("child: cgroups were\n%s\nand are\n%s", before, after);
		_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	pthread_t th;
	pid_t kid = 0;
	char now[VIEW];
	int i, status, has_thread = 0;

	test_init(argc, argv);
	for (i = optind; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "join:", 5)) {
			join(a + 5, "cgroup.procs", 0);
		} else if (!strcmp(a, "ns")) {
			if (unshare(CLONE_NEWCGROUP))
				fail_errno("unshare(CLONE_NEWCGROUP)");
		} else if (!strncmp(a, "thread:", 7)) {
			start_thread(a + 7, &th);
			has_thread = 1;
		} else if (!strncmp(a, "child:", 6)) {
			kid = start_child(a + 6);
		} else if (!strncmp(a, "userns:", 7)) {
			char map[64];

			snprintf(map, sizeof(map), "0 %s 65536\n", a + 7);
			make_userns(map, map, "allow");
			/* as a container's init: root inside, ID outside */
			if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
				fail_errno("setres*id(0) in the user namespace");
		} else if (!strncmp(a, "hold:", 5)) {
			if (open(a + 5, O_RDONLY) < 0)
				fail_errno("open %s", a + 5);
		} else {
			fail("unknown action %s", a);
		}
	}
	view("/proc/self/cgroup", lead_view);
	test_ready();
	test_waitsig();
	view("/proc/self/cgroup", now);
	if (strcmp(now, lead_view))
		fail("cgroups were\n%s\nand are\n%s", lead_view, now);
	if (has_thread) {
		thread_stop = 1;
		pthread_join(th, NULL);
		if (strcmp(thread_now, thread_view))
			fail("the thread's cgroups were\n%s\nand are\n%s", thread_view,
			     thread_now);
	}
	if (kid) {
		if (kill(kid, SIGTERM) || waitpid(kid, &status, 0) != kid)
			fail_errno("the child is gone");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("the child's cgroups changed (status %#x)", status);
	}
	pass();
}
