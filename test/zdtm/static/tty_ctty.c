// SPDX-License-Identifier: GPL-2.0-only
/*
 * A session with a terminal: the test (a session leader) takes a pty of
 * its own devpts as its controlling terminal, a child in a process group
 * of its own is the terminal's foreground group. After restore the pty is
 * still the session's terminal (TIOCGSID, the child's tty_nr), the
 * foreground group is the child's, /dev/tty (open in both) still leads to
 * it, and the line discipline acts on it: a ^C written on the master
 * interrupts the child, and only it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

#define INTERRUPTED	7

static void on_int(int sig)
{
	_exit(INTERRUPTED);
}

/* tty_nr of /proc/PID/stat */
static unsigned int tty_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned int tty = 0;
	int fd, n, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		fail_errno("read %s", path);
	close(fd);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (i = 0; p && i < 5; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %u", &tty) != 1)
		fail("can't parse %s", path);
	return tty;
}

int main(int argc, char **argv)
{
	const char *pts = mnt_abs("pts");
	int master, slave, devtty, unlock = 0, status;
	char link[64], to[64] = "", c = 0;
	pid_t child, pgrp = 0, sid = 0;
	struct stat st;
	unsigned int want;

	test_init(argc, argv);
	mnt_enter_ns();
	if (mkdir(pts, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", pts);
	if (mount("devpts", pts, "devpts", 0, "newinstance,ptmxmode=0666"))
		fail_errno("mount devpts on %s", pts);
	master = open(mnt_abs("pts/ptmx"), O_RDWR | O_NOCTTY);
	if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock))
		fail_errno("open ptmx");
	slave = open(mnt_abs("pts/0"), O_RDWR | O_NOCTTY);
	if (slave < 0 || fstat(slave, &st) || ioctl(slave, TIOCSCTTY, 0))
		fail_errno("take pts/0 as the terminal");
	want = (minor(st.st_rdev) & 0xff) | (major(st.st_rdev) << 8);
	devtty = open("/dev/tty", O_RDWR);
	if (devtty < 0)
		fail_errno("open /dev/tty");

	child = fork();
	if (child < 0)
		fail_errno("fork");
	if (!child) {
		signal(SIGINT, on_int);
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(child, child);
	if (tcsetpgrp(slave, child))
		fail_errno("tcsetpgrp");

	test_ready();
	test_waitsig();

	if (ioctl(slave, TIOCGSID, &sid) || sid != getpid())
		fail("the terminal's session is %d, not ours (%d): %s", sid, getpid(),
		     strerror(errno));
	if (tty_of(getpid()) != want || tty_of(child) != want)
		fail("tty_nr %#x and child's %#x, not %#x", tty_of(getpid()), tty_of(child), want);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", devtty);
	if (readlink(link, to, sizeof(to) - 1) != 8 || strncmp(to, "/dev/tty", 8))
		fail("fd %d is not /dev/tty any more", devtty);
	if (ioctl(devtty, TIOCGSID, &sid) || sid != getpid())
		fail("/dev/tty is not our session's terminal");
	if (write(devtty, "T", 1) != 1 || read(master, &c, 1) != 1 || c != 'T')
		fail("what /dev/tty writes does not reach the master (%#x)", c);
	pgrp = tcgetpgrp(slave);
	if (pgrp != child)
		fail("the foreground group is %d, not the child's %d", pgrp, child);
	if (write(master, "\003", 1) != 1)
		fail_errno("write ^C");
	if (waitpid(child, &status, 0) != child)
		fail_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != INTERRUPTED)
		fail("^C did not interrupt the foreground group (status %#x)", status);
	pass();
}
