// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task that joins (setns) the nested mount namespace its sibling made:
 *   A unshares CLONE_NEWNS (every mount private) and mounts tmpfs "a"
 *     with a file;
 *   B, forked by the root once A is ready, joins A's namespace through
 *     /proc/A/ns/mnt, opens a/f, makes a its cwd and forks C, born in it.
 * After restore: B and C are in A's namespace (not the root's), B's fd
 * reads a/f and sees what A writes to it, B's cwd is a, C sees a; the
 * root sees none of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

static char base[4096];
static const char *me = "A";
static pid_t a_pid;

static const char *at(const char *name)
{
	return mnt_at(base, name);
}

#define die(...) test_task_fail(0, me, __VA_ARGS__)

/* @text into @path, or the task fails */
static void put(const char *path, const char *text)
{
	if (mnt_write(path, text))
		die("write %s: %m", path);
}

static int mounted(const char *name)
{
	return mnt_is_mount(at(name));
}

/* Is task @pid in our mount namespace? */
static int with(pid_t pid)
{
	char path[64], own[64], its[64];
	ssize_t n, k;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	n = readlink("/proc/self/ns/mnt", own, sizeof(own) - 1);
	k = readlink(path, its, sizeof(its) - 1);
	if (n < 0 || k < 0)
		die("readlink the mount namespaces: %m");
	own[n] = its[k] = '\0';
	return !strcmp(own, its);
}

static void a_main(int ready)
{
	mnt_catch_term();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("zdtm-joined", at("a"), "tmpfs", 0, "size=1m"))
		die("a namespace with a tmpfs: %m");
	put(at("a/f"), "before");
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (!mounted("a"))
		die("A does not see a");
	put(at("a/f"), "written");
	_exit(0);
}

static void c_main(int ready)
{
	me = "C";
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (!mounted("a") || !with(getppid()))
		die("C is not in B's namespace with a");
	_exit(0);
}

static void b_main(int ready)
{
	char path[64], buf[16];
	struct stat x, y;
	int ns, fd, i;
	pid_t c;

	me = "B";
	mnt_catch_term();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)a_pid);
	ns = open(path, O_RDONLY);
	if (ns < 0 || setns(ns, CLONE_NEWNS))
		die("join A's namespace: %m");
	close(ns);
	fd = open(at("a/f"), O_RDONLY);
	if (fd < 0 || chdir(at("a")))
		die("open a/f: %m");
	c = mnt_fork_ready(c_main);
	if (c < 0)
		die("C did not get ready");
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (!with(a_pid) || with(getppid()))
		die("B is not in A's namespace, or in the root's");
	if (stat(".", &x) || stat(at("a"), &y) || x.st_ino != y.st_ino || x.st_dev != y.st_dev)
		die("B's cwd is not a");
	if (mnt_stop_child(c))
		die("C failed");
	if (kill(a_pid, SIGTERM))
		die("stop A: %m");
	/* A writes before it exits; the root reaps it */
	for (i = 0; i < 500; i++) {
		memset(buf, 0, sizeof(buf));
		if (pread(fd, buf, sizeof(buf) - 1, 0) == 7 && !strcmp(buf, "written"))
			_exit(0);
		usleep(10000);
	}
	die("the fd on a/f reads '%s', not A's write", buf);
}

int main(int argc, char **argv)
{
	pid_t b;

	test_init(argc, argv);
	snprintf(base, sizeof(base), "%s", mnt_abs("mntns_join.d"));
	if ((mkdir(base, 0755) && errno != EEXIST) || (mkdir(at("a"), 0755) && errno != EEXIST))
		fail_errno("mkdir in %s", base);
	a_pid = mnt_fork_ready(a_main);
	if (a_pid < 0)
		fail("A did not get ready");
	b = mnt_fork_ready(b_main);
	if (b < 0)
		fail("B did not get ready");
	if (mounted("a"))
		fail("the root sees A's tmpfs");

	test_ready();
	test_waitsig();

	if (mounted("a"))
		fail("the root sees A's tmpfs");
	if (mnt_stop_child(b))
		fail("B failed");
	if (waitpid(a_pid, NULL, 0) != a_pid)
		fail_errno("reap A");
	pass();
}
