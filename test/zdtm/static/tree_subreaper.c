// SPDX-License-Identifier: GPL-2.0-only
/*
 * The root is a child subreaper (PR_SET_CHILD_SUBREAPER) and has adopted
 * orphans: sr-orphan, whose parent exited; sr-deep, whose parent exited
 * while its grandparent (sr-x2, not a subreaper) lives on; sr-zorphan, an
 * adopted orphan that died since (a zombie the root never forked). All
 * are in the root's session and group; the live ones have SIGKILL as
 * their parent death signal, set once adopted.
 *
 * After SIGTERM: the root is still a subreaper; the orphans' parent is the
 * root; the adopted zombie gives its wait status; and adoption still works:
 * sr-orphan forks sr-late and exits, and sr-late must become the root's
 * child.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

enum { K_ORPHAN, K_DEEP, K_ZORPHAN, K_X2, NR_KIDS };

static const char *const kid_names[NR_KIDS] = {
	"sr-orphan", "sr-deep", "sr-zorphan", "sr-x2",
};

static pid_t kids[NR_KIDS];
static int done_pipe[2];

static void set_name(const char *name)
{
	if (prctl(PR_SET_NAME, name))
		fail_errno("PR_SET_NAME");
}

static void say_done(void)
{
	if (write(done_pipe[1], "x", 1) != 1)
		_exit(5);
	close(done_pipe[0]);
	close(done_pipe[1]);
}

/* A task that waits for SIGTERM and checks that its parent is the root. */
static void __attribute__((noreturn)) adopted(const char *name, pid_t root, int late)
{
	pid_t pid;
	int sig = 0;

	set_name(name);
	/* once adopted, die with the root (a death signal fires at each parent's death) */
	while (getppid() != root)
		usleep(1000);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	say_done();
	test_waitsig();
	if (getppid() != root) {
		test_msg("FAIL: %s: ppid %d, not the root %d", name, getppid(), root);
		_exit(1);
	}
	if (prctl(PR_GET_PDEATHSIG, (unsigned long)&sig) || sig != SIGKILL) {
		test_msg("FAIL: %s: parent death signal %d", name, sig);
		_exit(1);
	}
	if (!late)
		_exit(0);
	/* one more orphan for the root, made after the restore */
	test_sigterm = 0;
	pid = fork();
	if (pid < 0)
		_exit(2);
	if (pid == 0) {
		set_name("sr-late");
		test_waitsig();
		if (getppid() != root) {
			test_msg("FAIL: sr-late: ppid %d, not the root %d", getppid(), root);
			_exit(1);
		}
		_exit(0);
	}
	_exit(0);
}

/* Forks a go-between that forks @name and exits: @name becomes an orphan. */
static void orphan(const char *name, pid_t root, int late, int code)
{
	pid_t mid, pid;
	int status;

	mid = fork();
	if (mid < 0)
		fail_errno("fork");
	if (mid == 0) {
		set_name("sr-mid");
		pid = fork();
		if (pid < 0)
			_exit(2);
		if (pid == 0) {
			if (code >= 0) {
				set_name(name);
				say_done();
				_exit(code);
			}
			adopted(name, root, late);
		}
		_exit(0);
	}
	if (waitpid(mid, &status, 0) != mid || status)
		fail("the go-between of %s: status %#x", name, status);
}

int main(int argc, char **argv)
{
	int i, status, zstatus, is;
	pid_t root = getpid(), pid, late = 0;
	siginfo_t si;
	char c;

	test_init(argc, argv);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fail_errno("PR_SET_CHILD_SUBREAPER");
	if (pipe2(done_pipe, O_CLOEXEC))
		fail_errno("pipe");

	orphan(kid_names[K_ORPHAN], root, 1, -1);
	orphan(kid_names[K_ZORPHAN], root, 0, 9);

	/* sr-x2 stays, its child sr-mid2 goes, sr-deep comes to us, not to sr-x2 */
	kids[K_X2] = fork();
	if (kids[K_X2] < 0)
		fail_errno("fork");
	if (kids[K_X2] == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		orphan(kid_names[K_DEEP], root, 0, -1);
		adopted(kid_names[K_X2], root, 0);
	}
	close(done_pipe[1]);
	for (i = 0; i < 4; i++)
		if (read(done_pipe[0], &c, 1) != 1)
			fail("a task died while setting up");
	close(done_pipe[0]);

	for (i = 0; i < NR_KIDS; i++) {
		kids[i] = test_find_child(kid_names[i]);
		if (!kids[i])
			fail("%s is not our child", kid_names[i]);
	}
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, kids[K_ZORPHAN], &si, WEXITED | WNOWAIT))
		fail_errno("waitid");
	zstatus = W_EXITCODE(si.si_status, 0);

	test_ready();
	test_waitsig();

	if (prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&is) || is != 1)
		fail("no longer a child subreaper (%d)", is);
	for (i = 0; i < NR_KIDS; i++)
		if (test_find_child(kid_names[i]) != kids[i])
			fail("%s (%d) is no longer our child", kid_names[i], kids[i]);
	if (waitpid(kids[K_ZORPHAN], &status, WNOHANG) != kids[K_ZORPHAN] ||
	    status != zstatus)
		fail("adopted zombie: wait status %#x, was %#x", status, zstatus);

	for (i = 0; i < NR_KIDS; i++) {
		if (i == K_ZORPHAN)
			continue;
		kill(kids[i], SIGTERM);
		if (waitpid(kids[i], &status, 0) != kids[i] || status)
			fail("%s: wait status %#x; see the log", kid_names[i], status);
	}
	/* sr-orphan left sr-late to us */
	for (i = 0; i < 2000 && !late; i++) {
		late = test_find_child("sr-late");
		if (!late)
			usleep(1000);
	}
	if (!late)
		fail("sr-late did not come to us");
	kill(late, SIGTERM);
	if (waitpid(late, &status, 0) != late || status)
		fail("sr-late: wait status %#x; see the log", status);
	pid = waitpid(-1, &status, WNOHANG);
	if (pid > 0)
		fail("an unexpected child %d (status %#x)", pid, status);
	pass();
}
