// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two tasks in one nested mount namespace, below a root in a mount
 * namespace of its own (every mount private):
 *   the root mounts tmpfs "gone" and forks A;
 *   A unshares CLONE_NEWNS, unmounts "gone" (in its namespace only),
 *     mounts tmpfs "mine" with a file, and forks B, born in A's namespace;
 *   B opens mine/f and makes mine its cwd, and forks C;
 *   C unshares again (a namespace nested in a nested one) and mounts
 *     tmpfs "mine/sub" with a file, which neither A nor B see;
 *   then the root mounts tmpfs "late", which A's namespace never had.
 * After restore: the root sees gone and late and not mine; A sees mine
 * and neither gone nor late; B is in A's namespace (not the root's), its
 * fd reads mine/f, a write by A through mine is seen through B's fd,
 * and its cwd is mine; C is in a namespace of its own, below B's, and
 * sees mine/sub and its file, B does not.
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

#define MAX	8

static char base[4096];
static const char *me = "A";

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

static void ns_of(const char *pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		die("readlink %s: %m", path);
	buf[n] = '\0';
}

/* Are we in our parent's mount namespace? */
static int in_parents_ns(void)
{
	char ppid[16], own[64], parent[64];

	snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
	ns_of("self", own, sizeof(own));
	ns_of(ppid, parent, sizeof(parent));
	return !strcmp(own, parent);
}

static int mounted(const char *name)
{
	return mnt_is_mount(at(name));
}

static void c_main(int ready)
{
	char buf[8];

	me = "C";
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("zdtm-deep", at("mine/sub"), "tmpfs", 0, "size=1m"))
		die("a namespace in B's: %m");
	put(at("mine/sub/c"), "deep");
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (in_parents_ns())
		die("C is in B's mount namespace");
	if (!mounted("mine") || !mounted("mine/sub") ||
	    test_read_file(at("mine/sub/c"), buf, sizeof(buf)) != 4 || strcmp(buf, "deep"))
		die("C does not see its mine/sub");
	_exit(0);
}

static void b_main(int ready)
{
	char buf[16];
	struct stat a, c;
	pid_t deep;
	int fd;

	me = "B";
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(at("mine/f"), O_RDONLY);
	if (fd < 0 || chdir(at("mine")))
		die("open mine/f: %m");
	deep = mnt_fork_ready(c_main);
	if (deep < 0)
		die("C did not get ready");
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (!in_parents_ns())
		die("B's mount namespace is not A's");
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, sizeof(buf) - 1, 0) != 7 || strcmp(buf, "changed"))
		die("the fd on mine/f reads '%s', not A's write", buf);
	if (stat(".", &a) || stat(at("mine"), &c) || a.st_ino != c.st_ino || a.st_dev != c.st_dev)
		die("B's cwd is not mine");
	if (mounted("mine/sub"))
		die("B sees C's mine/sub");
	if (mnt_stop_child(deep))
		die("C failed");
	_exit(0);
}

static void a_main(int ready)
{
	pid_t b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	mnt_catch_term();
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("unshare a mount namespace: %m");
	if (umount(at("gone")) || mount("zdtm-mine", at("mine"), "tmpfs", 0, "size=1m"))
		die("change the namespace: %m");
	put(at("mine/f"), "initial");
	if (mkdir(at("mine/sub"), 0755))
		die("mkdir mine/sub: %m");
	b = mnt_fork_ready(b_main);
	if (b < 0)
		die("B did not get ready");
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	if (in_parents_ns())
		die("A is in the root's mount namespace");
	if (!mounted("mine") || mounted("gone") || mounted("late") || mounted("mine/sub"))
		die("A sees mine %d, gone %d, late %d, mine/sub %d (1, 0, 0, 0 before)",
		    mounted("mine"), mounted("gone"), mounted("late"), mounted("mine/sub"));
	put(at("mine/f"), "changed");
	if (mnt_stop_child(b))
		die("B failed");
	_exit(0);
}

static void root_view(void)
{
	if (mounted("mine") || !mounted("gone") || !mounted("late"))
		fail("the root sees mine %d, gone %d, late %d (0, 1, 1 before)", mounted("mine"),
		     mounted("gone"), mounted("late"));
}

int main(int argc, char **argv)
{
	static const char *const dirs[] = { "gone", "mine", "late" };
	size_t i;
	pid_t a;

	test_init(argc, argv);
	mnt_enter_ns();
	snprintf(base, sizeof(base), "%s", mnt_abs("mntns_shared_child.d"));
	if (mkdir(base, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", base);
	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (mkdir(at(dirs[i]), 0755) && errno != EEXIST)
			fail_errno("mkdir %s", dirs[i]);
	if (mount("zdtm-gone", at("gone"), "tmpfs", 0, "size=1m"))
		fail_errno("mount gone");
	a = mnt_fork_ready(a_main);
	if (a < 0)
		fail("A did not get ready");
	if (mount("zdtm-late", at("late"), "tmpfs", 0, "size=1m"))
		fail_errno("mount late");
	root_view();

	test_ready();
	test_waitsig();

	root_view();
	if (mnt_stop_child(a))
		fail("A failed");
	pass();
}
