// SPDX-License-Identifier: GPL-2.0-only
/*
 * UTS namespaces made by the tree:
 *
 *   root: a UTS namespace of its own, names R
 *   +-- a: born into root's (shares it)
 *   +-- b: unshares again, names B
 *       +-- g: born into b's
 *
 * After restore each sees its names, and those sharing a namespace still
 * share it: the root renames its namespace before it tells a to check, b
 * renames its own before it tells g. The root's namespace is not its
 * parent's (the runner's, the host's). Each task checks itself after
 * SIGTERM, exits 0 or says why and exits 1; the root writes the verdict.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static const char *name = "root";
static int setup[2];

#define die(...) test_task_fail(!strcmp(name, "root"), name, __VA_ARGS__)

static void set_names(const char *host, const char *domain)
{
	if (sethostname(host, strlen(host)) || setdomainname(domain, strlen(domain)))
		die("can't set names %s %s: %m", host, domain);
}

static void check_names(const char *host, const char *domain)
{
	struct utsname u;

	if (uname(&u))
		die("uname: %m");
	if (strcmp(u.nodename, host) || strcmp(u.domainname, domain))
		die("names %s %s, not %s %s", u.nodename, u.domainname, host, domain);
}

static void new_ns(const char *host, const char *domain)
{
	if (unshare(CLONE_NEWUTS))
		die("unshare(CLONE_NEWUTS): %m");
	set_names(host, domain);
}

/*
 * Are we in our parent's UTS namespace? /proc is the runner's, so the
 * parent is looked up by the ppid /proc/self/stat shows (also with --pidns).
 */
static int in_parents_uts(void)
{
	char buf[512], path[64], mine[64] = "", its[64] = "", *p;
	int ppid;

	if (test_read_file("/proc/self/stat", buf, sizeof(buf)) < 0 ||
	    !(p = strrchr(buf, ')')) || sscanf(p + 2, "%*c %d", &ppid) != 1)
		die("can't read /proc/self/stat");
	snprintf(path, sizeof(path), "/proc/%d/ns/uts", ppid);
	if (readlink("/proc/self/ns/uts", mine, sizeof(mine) - 1) < 0 ||
	    readlink(path, its, sizeof(its) - 1) < 0)
		die("readlink of our or our parent's UTS namespace: %m");
	return !strcmp(mine, its);
}

static void reap(pid_t pid, const char *who)
{
	int status;

	if (kill(pid, SIGTERM))
		die("%s (%d) is gone: %m", who, pid);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid %s: %m", who);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s failed (status %#x); see the log", who, status);
}

static void ready_and_wait(void)
{
	if (write(setup[1], "x", 1) != 1)
		_exit(5);
	close(setup[0]);
	close(setup[1]);
	test_waitsig();
}

static pid_t spawn(const char *who, void (*fn)(void))
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		die("fork: %m");
	if (pid == 0) {
		/* nothing outlives a failed test; restore keeps the setting */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(3);
		name = who;
		fn();
		_exit(0);
	}
	return pid;
}

static void run_a(void)
{
	ready_and_wait();
	if (!in_parents_uts())
		die("not in the root's UTS namespace");
	/* the root renamed the namespace we share, after restore */
	check_names("zdtm-after", "after.zdtm");
}

static void run_g(void)
{
	ready_and_wait();
	if (!in_parents_uts())
		die("not in b's UTS namespace");
	check_names("zdtm-b-after", "b-after.zdtm");
}

static void run_b(void)
{
	pid_t g;

	new_ns("zdtm-uts-b", "b.zdtm");
	g = spawn("g", run_g);
	ready_and_wait();
	if (in_parents_uts())
		die("in the root's UTS namespace, not one of its own");
	check_names("zdtm-uts-b", "b.zdtm");
	set_names("zdtm-b-after", "b-after.zdtm");
	reap(g, "g");
}

int main(int argc, char **argv)
{
	pid_t a, b;
	char c;
	int i;

	test_init(argc, argv);
	if (pipe(setup))
		fail_errno("pipe");
	new_ns("zdtm-uts-root", "root.zdtm");
	a = spawn("a", run_a);
	b = spawn("b", run_b);
	for (i = 0; i < 3; i++)
		if (read(setup[0], &c, 1) != 1)
			fail("a task died while setting up");
	close(setup[0]);
	close(setup[1]);

	test_ready();
	test_waitsig();

	check_names("zdtm-uts-root", "root.zdtm");
	if (in_parents_uts())
		fail("the root is in its parent's UTS namespace");
	set_names("zdtm-after", "after.zdtm");
	reap(a, "a");
	reap(b, "b");
	pass();
}
