// SPDX-License-Identifier: GPL-2.0-only
/*
 * pidfds of the tree's processes: of ourselves (non-blocking), of a child
 * made with pidfd_open() and of one made by clone(CLONE_PIDFD) (watched by
 * an epoll), of a child that exited and was reaped, of one that exited and
 * was not (a zombie), and, held by the first
 * child, of its parent and of the second child, its younger sibling, which
 * a restore forks after it. After restore each pidfd names its process
 * (fdinfo), signals reach it through the pidfd, the epoll reports the
 * clone child's death and waitid(P_PIDFD) collects both children; the
 * reaped one's pidfd polls readable and signals nobody (ESRCH), the
 * zombie's polls readable and waitid(P_PIDFD) gets its exit status. The
 * children inherited our own pidfd and the reaped child's: each is still
 * one open file description in all three.
 */
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <sys/wait.h>

#include "pidfd_lib.h"

static int sib_pipe[2];
static int of_parent = -1, of_sibling = -1;
static pid_t sibling;

static const char *child_check(void)
{
	if (pidfd_pid(of_parent) != getppid() || pidfd_signal(of_parent, 0))
		return "the pidfd of the parent does not reach it";
	if (pidfd_pid(of_sibling) != sibling || pidfd_signal(of_sibling, 0))
		return "the pidfd of the sibling does not reach it";
	return NULL;
}

/*
 * The first child: a pidfd of its parent, and one of its sibling once the
 * parent made it and sent its pid; then it waits for SIGTERM and checks
 * them, as fork_checker()'s children do (files_lib.h).
 */
static pid_t first_child(int done[2])
{
	const char *why;
	pid_t pid;

	if (pipe(sib_pipe) || pipe(done))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	of_parent = pidfd_open(getppid(), 0);
	if (of_parent < 0 || read(sib_pipe[0], &sibling, sizeof(sibling)) != sizeof(sibling))
		_exit(2);
	of_sibling = pidfd_open(sibling, 0);
	if (of_sibling < 0 || write(done[1], "r", 1) != 1)
		_exit(3);
	close(sib_pipe[0]);
	close(sib_pipe[1]);
	close(done[0]);
	close(done[1]);
	test_waitsig();
	why = child_check();
	if (why) {
		test_msg("child: FAIL: %s", why);
		_exit(1);
	}
	_exit(0);
}

/* The second child, by clone(CLONE_PIDFD): it waits for its SIGKILL. */
static pid_t clone_pidfd(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	if (pid < 0)
		fail_errno("clone3(CLONE_PIDFD)");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static int reaped_pidfd(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		fail_errno("fork");
	if (pid == 0)
		_exit(7);
	fd = pidfd_open(pid, 0);
	if (fd < 0 || waitpid(pid, NULL, 0) != pid)
		fail_errno("a pidfd of a child, reaped");
	return fd;
}

static void check_waitid(int pidfd, int code, int status, const char *who)
{
	siginfo_t si = { 0 };

	if (waitid(P_PIDFD, pidfd, &si, WEXITED))
		fail_errno("waitid(P_PIDFD) of the %s", who);
	if (si.si_code != code || si.si_status != status)
		fail("the %s ended with code %d status %d, not %d %d", who, si.si_code,
		     si.si_status, code, status);
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x5eed };
	int self, of_child, of_clone, reaped, ep, done[2], of_zombie;
	char c;
	struct pollfd pfd;
	siginfo_t zi;
	pid_t child, clone_child, zombie;

	test_init(argc, argv);
	self = pidfd_open(getpid(), O_NONBLOCK);
	if (self < 0)
		fail_errno("pidfd_open of ourselves");
	reaped = reaped_pidfd();
	zombie = fork();
	if (zombie < 0)
		fail_errno("fork");
	if (zombie == 0)
		_exit(5);
	of_zombie = pidfd_open(zombie, 0);
	if (of_zombie < 0 || waitid(P_PID, zombie, &zi, WEXITED | WNOWAIT))
		fail_errno("a pidfd of a zombie");
	child = first_child(done);
	of_child = pidfd_open(child, 0);
	clone_child = clone_pidfd(&of_clone);
	if (of_child < 0 ||
	    write(sib_pipe[1], &clone_child, sizeof(clone_child)) != sizeof(clone_child) ||
	    read(done[0], &c, 1) != 1)
		fail_errno("the first child's pidfds");
	close(sib_pipe[0]);
	close(sib_pipe[1]);
	close(done[0]);
	close(done[1]);
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, of_clone, &ev))
		fail_errno("epoll on the pidfd");

	test_ready();
	test_waitsig();

	if (pidfd_pid(self) != getpid() || pidfd_signal(self, 0))
		fail("our own pidfd does not name us");
	if (!(fcntl(self, F_GETFL) & O_NONBLOCK))
		fail("our own pidfd lost O_NONBLOCK");
	if (pidfd_pid(of_child) != child || pidfd_pid(of_clone) != clone_child)
		fail("the children's pidfds name %d and %d, not %d and %d", pidfd_pid(of_child),
		     pidfd_pid(of_clone), child, clone_child);
	pfd = (struct pollfd){ .fd = reaped, .events = POLLIN };
	if (pidfd_pid(reaped) != -1 || poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN))
		fail("the reaped child's pidfd does not poll readable");
	if (!pidfd_signal(reaped, 0) || errno != ESRCH)
		fail("a signal through the reaped child's pidfd went somewhere: %m");
	pfd = (struct pollfd){ .fd = of_zombie, .events = POLLIN };
	if (pidfd_pid(of_zombie) != zombie || poll(&pfd, 1, 0) != 1)
		fail("the zombie's pidfd does not name it, readable");
	check_waitid(of_zombie, CLD_EXITED, 5, "zombie");
	if (syscall(SYS_kcmp, getpid(), child, KCMP_FILE, self, self) ||
	    syscall(SYS_kcmp, getpid(), clone_child, KCMP_FILE, reaped, reaped))
		fail("a pidfd the children inherited is not one description with ours");
	/* the first child checks its pidfds (the clone child lives), then exits 0 */
	if (pidfd_signal(of_child, SIGTERM))
		fail_errno("pidfd_send_signal(SIGTERM) to the first child");
	check_waitid(of_child, CLD_EXITED, 0, "first child");
	if (epoll_wait(ep, &ev, 1, 0) != 0)
		fail("the epoll reports the clone child dead while it lives");
	if (pidfd_signal(of_clone, SIGKILL))
		fail_errno("pidfd_send_signal(SIGKILL) to the clone child");
	if (epoll_wait(ep, &ev, 1, 10000) != 1 || ev.data.u64 != 0x5eed)
		fail("the epoll does not report the clone child's death");
	check_waitid(of_clone, CLD_KILLED, SIGKILL, "clone child");
	pass();
}
