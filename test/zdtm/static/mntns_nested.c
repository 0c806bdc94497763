// SPDX-License-Identifier: GPL-2.0-only
/*
 * A child in a mount namespace of its own below the root's, as a service
 * with a private /tmp makes it (systemd's PrivateTmp): it unshares
 * CLONE_NEWNS, makes every mount a slave (MS_REC | MS_SLAVE, as systemd
 * does), and mounts in its namespace only:
 *   t        a tmpfs with a directory, a file and a symlink
 *   b        a private bind of t/dir
 * It keeps a file open on the tmpfs and its cwd in t/dir.
 * After restore: the child's mounts below the test's directory are the
 * same (order, options, roots); the fd reads the file and is on the
 * tmpfs; the bind shows the same inode as its source; its cwd is t/dir;
 * its namespace is not its parent's. The root sees none of it: t is an
 * empty directory and nothing is mounted below the test's directory.
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
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

#define MAX	8

static char base[4096];

static const char *at(const char *name)
{
	return mnt_at(base, name);
}

#define die(...) test_task_fail(0, "child", __VA_ARGS__)

/* @text into @path, or the task fails */
static void put(const char *path, const char *text)
{
	if (mnt_write(path, text))
		die("write %s: %m", path);
}

static void expect_text(const char *path, const char *text)
{
	char buf[64];
	ssize_t n = test_read_file(path, buf, sizeof(buf));

	if (n < 0 || strcmp(buf, text))
		die("%s holds '%s', not '%s'", path, n < 0 ? "(unreadable)" : buf, text);
}

static int ns_of(const char *pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static void child_check(const struct mnt_line *before, int nb, int fd)
{
	struct mnt_line after[MAX], t;
	char own[64], parent[64], ppid[16], buf[8];
	struct stat st, a, b;
	int na = mnt_list(base, after, MAX);

	mnt_compare(base, before, nb, after, na);
	snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
	if (ns_of("self", own, sizeof(own)) || ns_of(ppid, parent, sizeof(parent)) ||
	    !strcmp(own, parent))
		die("the child's mount namespace %s is its parent's %s", own, parent);
	if (mnt_find(at("t"), 0, &t) || fstat(fd, &st) || st.st_dev != makedev(t.major, t.minor))
		die("the fd on t/dir/f is not on the tmpfs");
	if (pread(fd, buf, sizeof(buf), 0) != 5 || memcmp(buf, "inner", 5))
		die("the fd on t/dir/f does not read it");
	expect_text(at("b/f"), "inner");
	if (stat(at("b/f"), &a) || stat(at("t/dir/f"), &b) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev)
		die("b/f is not t/dir/f");
	if (stat(".", &a) || stat(at("t/dir"), &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		die("the cwd is not t/dir");
	if (readlink(at("t/link"), buf, sizeof(buf)) != 3 || memcmp(buf, "dir", 3))
		die("t/link does not lead to dir");
	put(at("b/g"), "through");
	expect_text(at("t/dir/g"), "through");
}

static void child(int ready)
{
	struct mnt_line before[MAX];
	int fd, nb;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	mnt_catch_term();
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		die("unshare a mount namespace: %m");
	if (mount("zdtm-private", at("t"), "tmpfs", 0, "size=1m,mode=0750"))
		die("mount the tmpfs: %m");
	if (mkdir(at("t/dir"), 0700) || symlink("dir", at("t/link")))
		die("fill the tmpfs: %m");
	put(at("t/dir/f"), "inner");
	if (mount(at("t/dir"), at("b"), NULL, MS_BIND, NULL) ||
	    mount(NULL, at("b"), NULL, MS_PRIVATE, NULL))
		die("bind t/dir on b: %m");
	fd = open(at("t/dir/f"), O_RDONLY);
	if (fd < 0 || chdir(at("t/dir")))
		die("open t/dir/f: %m");
	nb = mnt_list(base, before, MAX);
	if (nb != 2)
		die("%d mounts below %s, not 2", nb, base);
	if (write(ready, "r", 1) != 1)
		die("say ready: %m");
	close(ready);
	mnt_until_term();
	child_check(before, nb, fd);
	_exit(0);
}

static void root_check(void)
{
	struct mnt_line m[MAX];
	int n = mnt_list(base, m, MAX);

	if (n)
		fail("the root sees %d mounts below %s (the first at %s)", n, base, m[0].mountpoint);
	if (access(at("t/dir"), F_OK) == 0 || errno != ENOENT)
		fail("the root sees the child's tmpfs");
}

int main(int argc, char **argv)
{
	pid_t kid;

	test_init(argc, argv);
	snprintf(base, sizeof(base), "%s", mnt_abs("mntns_nested.d"));
	if ((mkdir(base, 0755) && errno != EEXIST) || (mkdir(at("t"), 0755) && errno != EEXIST) ||
	    (mkdir(at("b"), 0755) && errno != EEXIST))
		fail_errno("mkdir in %s", base);
	kid = mnt_fork_ready(child);
	if (kid < 0)
		fail("the child did not get ready");
	root_check();

	test_ready();
	test_waitsig();

	root_check();
	if (mnt_stop_child(kid))
		fail("the child failed");
	pass();
}
