// SPDX-License-Identifier: GPL-2.0-only
/*
 * A child whose main thread has exited (pthread_exit) while its other
 * thread goes on: /proc shows the leader as a zombie, yet the process
 * lives. It must come back the same: a zombie leader, and the thread
 * running with its tid and name. After SIGTERM the root checks the child
 * still has both, sends it SIGTERM (which only the live thread can take),
 * and the thread checks its tid, name and parent, and exits the process
 * with 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static int done_pipe[2];
static pid_t root, worker_tid;

static void *worker(void *arg)
{
	char name[32] = "";
	pid_t tid = gettid();

	prctl(PR_SET_NAME, "tle-worker");
	if (write(done_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		exit(5);
	close(done_pipe[1]);
	test_waitsig();
	prctl(PR_GET_NAME, name);
	if (gettid() != tid || strcmp(name, "tle-worker") || getppid() != root) {
		test_msg("FAIL: tle-worker: tid %d name '%s' ppid %d, were %d 'tle-worker' %d",
			 gettid(), name, getppid(), tid, root);
		exit(1);
	}
	exit(0);
}

/* Threads of @pid; *other is zeroed unless it is still there with its name. */
static int count_threads(pid_t pid, pid_t *other)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, *other);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || strcmp(buf, "tle-worker\n"))
		*other = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nThreads:");
	return p ? atoi(p + 9) : -1;
}

int main(int argc, char **argv)
{
	pid_t child, tid;
	int status, n;
	pthread_t t;

	test_init(argc, argv);
	root = getpid();
	if (pipe2(done_pipe, O_CLOEXEC))
		fail_errno("pipe");
	child = fork();
	if (child < 0)
		fail_errno("fork");
	if (child == 0) {
		sigset_t all, old;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "tle-leader");
		close(done_pipe[0]);
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&t, NULL, worker, NULL))
			exit(4);
		/* the leader goes; SIGTERM can then only reach the worker */
		pthread_exit(NULL);
	}
	close(done_pipe[1]);
	if (read(done_pipe[0], &worker_tid, sizeof(worker_tid)) != sizeof(worker_tid))
		fail("the child died while setting up");
	close(done_pipe[0]);
	for (n = 0; n < 2000 && test_proc_state(child) != 'Z'; n++)
		usleep(1000);
	if (test_proc_state(child) != 'Z')
		fail("the child's leader did not exit (state %c)", test_proc_state(child));

	test_ready();
	test_waitsig();

	tid = worker_tid;
	n = count_threads(child, &tid);
	if (n != 2 || tid != worker_tid || test_proc_state(child) != 'Z')
		fail("the child has %d threads, leader state %c, worker %d %s", n,
		     test_proc_state(child), worker_tid, tid ? "named" : "gone or renamed");
	kill(child, SIGTERM);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (status)
		fail("the child: wait status %#x; see the log", status);
	pass();
}
