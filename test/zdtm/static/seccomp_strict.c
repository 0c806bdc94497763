// SPDX-License-Identifier: GPL-2.0-only
/*
 * A child in seccomp strict mode, which allows read, write, exit and
 * sigreturn only. It serves its parent over two pipes: blocked in read()
 * it is dumped and restored; then it answers a ping, and a forbidden
 * getpid() kills it with SIGKILL: strict mode came back, and nothing criu
 * did in it while it was strict was judged by it.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "seccomp_lib.h"

static long child_mode(pid_t pid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nSeccomp:");
	return p ? strtol(p + 9, NULL, 10) : -1;
}

static void __attribute__((noreturn)) child(int in, int out)
{
	char c = 's';

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		_exit(2);
	/* from here on: read, write and exit only */
	if (write(out, &c, 1) != 1)
		syscall(SYS_exit, 3);
	for (;;) {
		if (read(in, &c, 1) != 1)
			syscall(SYS_exit, 4);
		if (c == 'k')
			syscall(SYS_getpid);
		if (c != 'p')
			syscall(SYS_exit, 5);
		c = 'o';
		if (write(out, &c, 1) != 1)
			syscall(SYS_exit, 6);
	}
}

int main(int argc, char **argv)
{
	int cmd[2], rep[2], status;
	pid_t pid;
	char c;

	test_init(argc, argv);
	if (pipe(cmd) || pipe(rep))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		child(cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	if (read(rep[0], &c, 1) != 1 || c != 's')
		fail("the child did not enter strict mode");
	if (child_mode(pid) != SECCOMP_MODE_STRICT)
		fail("the child is in seccomp mode %ld", child_mode(pid));

	test_ready();
	test_waitsig();

	if (child_mode(pid) != SECCOMP_MODE_STRICT)
		fail("after restore the child is in seccomp mode %ld", child_mode(pid));
	c = 'p';
	if (write(cmd[1], &c, 1) != 1 || read(rep[0], &c, 1) != 1 || c != 'o')
		fail("the child does not answer");
	c = 'k';
	if (write(cmd[1], &c, 1) != 1)
		fail_errno("write");
	if (waitpid(pid, &status, 0) != pid)
		fail_errno("waitpid");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail("getpid in strict mode did not kill the child (wait status %#x)", status);
	pass();
}
