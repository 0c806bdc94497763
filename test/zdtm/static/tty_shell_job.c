// SPDX-License-Identifier: GPL-2.0-only
/*
 * A job of a shell on a terminal (test_tty.py runs it, not the flavours):
 * not a session leader, its stdin and stdout the slave of a pty whose
 * master the runner holds, outside the tree (the path is the last
 * argument). The runner dumps it with --shell-job and restores it with
 * another terminal given through --inherit-fd fd[N]:tty[RDEV:DEV], then
 * types that terminal's path on its master. After restore stdin and stdout
 * are that terminal, the line typed after the restore arrives, and the
 * answer reaches the runner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	const char *path = argv[argc - 1];
	char name[256], line[64];
	struct termios t, now;
	int fd, n;

	test_init(argc, argv);
	if (getsid(0) == getpid())
		fail("the job leads its session: run it with session_leader=False");
	fd = open(path, O_RDWR | O_NOCTTY);
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
		fail_errno("open the terminal %s", path);
	close(fd);
	if (tcgetattr(0, &t))
		fail_errno("tcgetattr");
	t.c_lflag &= ~ECHO;
	t.c_cc[VKILL] = 0x0b;
	if (tcsetattr(0, TCSANOW, &t))
		fail_errno("tcsetattr");

	test_ready();
	test_waitsig();

	n = read(0, line, sizeof(line) - 1);
	if (n <= 0)
		fail_errno("read the terminal");
	line[n - 1] = '\0';
	if (ttyname_r(0, name, sizeof(name)) || strcmp(name, line))
		fail("stdin is %s, not the terminal typed on (%s)", name, line);
	if (tcgetattr(1, &now) || ttyname_r(1, name, sizeof(name)) || strcmp(name, line))
		fail("stdout is not the terminal %s", line);
	if (write(1, "pong\n", 5) != 5)
		fail_errno("write the terminal");
	pass();
}
