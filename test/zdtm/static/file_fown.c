// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who gets an open file's signals. A pipe with O_ASYNC signals us with
 * SIGRTMIN+1 (F_SETSIG, so the siginfo names the fd); another with O_ASYNC
 * signals our child (SIGIO); a socket's owner is our thread (F_OWNER_TID);
 * a third pipe's is our process group. After restore F_GETOWN_EX, F_GETSIG
 * and O_ASYNC are as they were, and data written into the pipes raises
 * the signals where they were going. With the argument "outside" the
 * first pipe's owner is our parent, outside the tree (without O_ASYNC: it
 * must get no signal from us): the dump must refuse (test_fown.py).
 */
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "files_lib.h"

static volatile sig_atomic_t got_rt, got_rt_fd = -1, got_io;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	got_rt_fd = si->si_fd;
	got_rt = 1;
}

static void on_io(int sig)
{
	got_io = 1;
}

static void child_setup(void)
{
	signal(SIGIO, on_io);
}

/* the parent writes into the pipe whose owner we are, then sends SIGTERM */
static const char *child_check(void)
{
	int i;

	for (i = 0; !got_io && i < 10000; i++)
		usleep(1000);
	return got_io ? NULL : "no SIGIO from the pipe we own";
}

static void own(int fd, int type, pid_t pid, int sig, int async)
{
	struct f_owner_ex o = { .type = type, .pid = pid };

	if (fcntl(fd, F_SETOWN_EX, &o) || (sig && fcntl(fd, F_SETSIG, sig)) ||
	    (async && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC)))
		fail_errno("owner of fd %d", fd);
}

static void expect_owner(int fd, int type, pid_t pid, int sig, int async)
{
	struct f_owner_ex o;

	if (fcntl(fd, F_GETOWN_EX, &o) || o.type != (unsigned int)type || o.pid != pid)
		fail("fd %d's owner is %d of type %d, not %d of type %d", fd, o.pid, o.type, pid,
		     type);
	if (fcntl(fd, F_GETSIG) != sig)
		fail("fd %d signals with %d, not %d", fd, fcntl(fd, F_GETSIG), sig);
	if (!!(fcntl(fd, F_GETFL) & O_ASYNC) != async)
		fail("fd %d's O_ASYNC is not as it was", fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO };
	int mine[2], kids[2], grp[2], sk[2], i;
	int outside = argc > 1 && !strcmp(argv[argc - 1], "outside");
	pid_t child, tid, mine_owner;

	test_init(argc, argv);
	if (sigaction(SIGRTMIN + 1, &sa, NULL))
		fail_errno("sigaction");
	child = fork_checker(child_setup, child_check);
	tid = syscall(SYS_gettid);
	if (pipe(mine) || pipe(kids) || pipe(grp) || socketpair(AF_UNIX, SOCK_STREAM, 0, sk))
		fail_errno("pipe");
	/* the runner must get no signal, even when we close the pipe: no O_ASYNC then */
	mine_owner = outside ? getppid() : getpid();
	own(mine[0], F_OWNER_PID, mine_owner, outside ? 0 : SIGRTMIN + 1, !outside);
	own(kids[0], F_OWNER_PID, child, 0, 1);
	own(grp[0], F_OWNER_PGRP, getpgrp(), 0, 0);
	own(sk[0], F_OWNER_TID, tid, 0, 0);

	test_ready();
	test_waitsig();

	expect_owner(mine[0], F_OWNER_PID, mine_owner, outside ? 0 : SIGRTMIN + 1, !outside);
	if (outside) {
		/* the dump was refused: nothing more to see */
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		pass();
	}
	expect_owner(kids[0], F_OWNER_PID, child, 0, 1);
	expect_owner(grp[0], F_OWNER_PGRP, getpgrp(), 0, 0);
	expect_owner(sk[0], F_OWNER_TID, tid, 0, 0);
	if (write(mine[1], "x", 1) != 1 || write(kids[1], "x", 1) != 1)
		fail_errno("write");
	for (i = 0; !got_rt && i < 10000; i++)
		usleep(1000);
	if (!got_rt || got_rt_fd != mine[0])
		fail("no SIGRTMIN+1 for fd %d (got %d, fd %d)", mine[0], got_rt, got_rt_fd);
	end_checker(child);
	pass();
}
