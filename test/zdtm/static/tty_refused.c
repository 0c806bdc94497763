// SPDX-License-Identifier: GPL-2.0-only
/*
 * Terminals criu must refuse to dump, one per run (test_tty.py picks it
 * with an argument): a pty whose slave has an unread line the master wrote
 * ("queued-slave"), a slave whose master a process outside the tree holds
 * ("outside"), and the system console ("console"). Whatever the dump did,
 * the state is still there afterwards: the data reads back whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

static int master = -1, slave = -1, held = -1;

static void make_pair(void)
{
	const char *pts = mnt_abs("pts");
	int unlock = 0;

	mnt_enter_ns();
	if (mkdir(pts, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", pts);
	if (mount("devpts", pts, "devpts", 0, "newinstance,ptmxmode=0666"))
		fail_errno("mount devpts on %s", pts);
	master = open(mnt_abs("pts/ptmx"), O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock))
		fail_errno("open ptmx");
	slave = open(mnt_abs("pts/0"), O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (slave < 0)
		fail_errno("open pts/0");
}

/* A grandchild outside the tree holds the master until we are gone. */
static void master_outside(void)
{
	held = test_hold_outside(master, slave);
	master = -1;
}

static void expect(int fd, const char *what)
{
	char buf[64];
	int n = -1;

	for (int i = 0; i < 300 && n < 0; i++) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EAGAIN)
			usleep(10000);
		else if (n < 0)
			fail_errno("read");
	}
	if (n < 0 || !memmem(buf, n, what, strlen(what)))
		fail("the data queued before the dump (%s) is gone", what);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";
	int console = -1;

	test_init(argc, argv);
	if (!strcmp(what, "console")) {
		console = open("/dev/console", O_RDWR | O_NOCTTY | O_NONBLOCK);
		if (console < 0)
			skip("can't open /dev/console: %s", strerror(errno));
	} else {
		make_pair();
	}
	if (!strcmp(what, "queued-slave") && write(master, "to the slave\n", 13) != 13)
		fail_errno("write the master");
	if (!strcmp(what, "outside"))
		master_outside();

	test_ready();
	test_waitsig();

	if (!strcmp(what, "queued-slave"))
		expect(slave, "to the slave");
	if (!strcmp(what, "outside") && write(slave, "x", 1) != 1)
		fail_errno("write to the slave of an outside master");
	if (held >= 0)
		close(held);
	if (console >= 0)
		close(console);
	pass();
}
