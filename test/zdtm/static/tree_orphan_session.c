// SPDX-License-Identifier: GPL-2.0-only
/*
 * Orphans that outlived the leaders of their session and group: the root
 * is a child subreaper; os-sess was forked by a task that had made a
 * session of its own and then exited, so it lives in a session (and a
 * group) whose leader is gone; os-grp was forked by a task that had made a
 * process group in the root's session and exited. Both were adopted by the
 * root. After restore each must be back in its leaderless session and
 * group, with the root as its parent: a restore has to recreate a leader
 * for them (with the dead leader's pid) and let it go, without a trace:
 * the root blocks SIGCHLD and none may be pending after restore.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static int done_pipe[2];

struct orphan {
	const char *name;
	int new_session;	/* the go-between made a session, else a group */
	pid_t pid, sid, pgid;
};

static struct orphan orphans[] = {
	{ .name = "os-sess", .new_session = 1 },
	{ .name = "os-grp", .new_session = 0 },
};

static void __attribute__((noreturn)) orphan_main(struct orphan *o, pid_t root)
{
	pid_t sid, pgid;
	int sig = 0;

	prctl(PR_SET_NAME, o->name);
	while (getppid() != root)
		usleep(1000);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sid = getsid(0);
	pgid = getpgid(0);
	if (write(done_pipe[1], "x", 1) != 1)
		_exit(5);
	close(done_pipe[0]);
	close(done_pipe[1]);
	test_waitsig();
	if (getppid() != root || getsid(0) != sid || getpgid(0) != pgid) {
		test_msg("FAIL: %s: ppid %d sid %d pgid %d, were %d %d %d", o->name,
			 getppid(), getsid(0), getpgid(0), root, sid, pgid);
		_exit(1);
	}
	if (prctl(PR_GET_PDEATHSIG, (unsigned long)&sig) || sig != SIGKILL) {
		test_msg("FAIL: %s: parent death signal %d", o->name, sig);
		_exit(1);
	}
	_exit(0);
}

static void make_orphan(struct orphan *o, pid_t root)
{
	int status;
	pid_t mid;

	mid = fork();
	if (mid < 0)
		fail_errno("fork");
	if (mid == 0) {
		prctl(PR_SET_NAME, "os-leader");
		if (o->new_session ? setsid() < 0 : setpgid(0, 0) < 0)
			_exit(2);
		if (fork() == 0)
			orphan_main(o, root);
		_exit(0);
	}
	if (waitpid(mid, &status, 0) != mid || status)
		fail("the leader of %s: status %#x", o->name, status);
	o->sid = o->new_session ? mid : getsid(0);
	o->pgid = mid;
}

static void on_chld(int sig)
{
}

int main(int argc, char **argv)
{
	sigset_t chld, pend;
	unsigned int i;
	int status;
	char c;

	test_init(argc, argv);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fail_errno("PR_SET_CHILD_SUBREAPER");
	if (pipe2(done_pipe, O_CLOEXEC))
		fail_errno("pipe");
	for (i = 0; i < ARRAY_SIZE(orphans); i++)
		make_orphan(&orphans[i], getpid());
	close(done_pipe[1]);
	for (i = 0; i < ARRAY_SIZE(orphans); i++)
		if (read(done_pipe[0], &c, 1) != 1)
			fail("an orphan died while setting up");
	close(done_pipe[0]);
	for (i = 0; i < ARRAY_SIZE(orphans); i++) {
		orphans[i].pid = test_find_child(orphans[i].name);
		if (!orphans[i].pid)
			fail("%s is not our child", orphans[i].name);
		if (getsid(orphans[i].pid) != orphans[i].sid ||
		    getpgid(orphans[i].pid) != orphans[i].pgid)
			fail("%s: sid %d pgid %d, not %d %d", orphans[i].name,
			     getsid(orphans[i].pid), getpgid(orphans[i].pid),
			     orphans[i].sid, orphans[i].pgid);
	}

	/*
	 * A SIGCHLD left by the restore's stand-in leaders would wait here
	 * (with SIG_DFL the kernel drops it when the action is set back).
	 */
	signal(SIGCHLD, on_chld);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	test_ready();
	test_waitsig();

	sigpending(&pend);
	if (sigismember(&pend, SIGCHLD))
		fail("a SIGCHLD is pending that no child of ours sent");

	for (i = 0; i < ARRAY_SIZE(orphans); i++) {
		struct orphan *o = &orphans[i];

		if (test_find_child(o->name) != o->pid)
			fail("%s (%d) is no longer our child", o->name, o->pid);
		if (getsid(o->pid) != o->sid || getpgid(o->pid) != o->pgid)
			fail("%s: sid %d pgid %d, were %d %d", o->name, getsid(o->pid),
			     getpgid(o->pid), o->sid, o->pgid);
		kill(o->pid, SIGTERM);
		if (waitpid(o->pid, &status, 0) != o->pid || status)
			fail("%s: wait status %#x; see the log", o->name, status);
	}
	pass();
}
