// SPDX-License-Identifier: GPL-2.0-only
/*
 * signalfds with their masks (a standard signal and a real-time one; one
 * non-blocking, one blocking with close-on-exec), and signals pending for
 * them: blocked, sent before the dump. After restore they are read through
 * the signalfds, with their values, and no more than that is there.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	struct signalfd_siginfo si;
	sigset_t a, b, all;
	int fa, fb;

	test_init(argc, argv);
	sigemptyset(&a);
	sigaddset(&a, SIGUSR1);
	sigaddset(&a, SIGRTMIN + 2);
	sigemptyset(&b);
	sigaddset(&b, SIGUSR2);
	sigemptyset(&all);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGUSR2);
	sigaddset(&all, SIGRTMIN + 2);
	if (sigprocmask(SIG_BLOCK, &all, NULL))
		fail_errno("sigprocmask");
	fa = signalfd(-1, &a, SFD_NONBLOCK);
	fb = signalfd(-1, &b, SFD_CLOEXEC);
	if (fa < 0 || fb < 0)
		fail_errno("signalfd");
	if (sigqueue(getpid(), SIGRTMIN + 2, (union sigval){ .sival_int = 4242 }) ||
	    kill(getpid(), SIGUSR1) || kill(getpid(), SIGUSR2))
		fail_errno("send");

	test_ready();
	test_waitsig();

	if (read(fb, &si, sizeof(si)) != sizeof(si) || si.ssi_signo != SIGUSR2)
		fail("SIGUSR2 is not read through its signalfd");
	if (read(fa, &si, sizeof(si)) != sizeof(si) || si.ssi_signo != SIGUSR1)
		fail("SIGUSR1 is not read first through the other");
	if (read(fa, &si, sizeof(si)) != sizeof(si) || si.ssi_signo != (unsigned)SIGRTMIN + 2 ||
	    si.ssi_int != 4242)
		fail("the real-time signal and its value are not read");
	if (read(fa, &si, sizeof(si)) != -1 || errno != EAGAIN)
		fail("more signals than were sent");
	if (!(fcntl(fa, F_GETFL) & O_NONBLOCK) || (fcntl(fb, F_GETFL) & O_NONBLOCK) ||
	    fcntl(fb, F_GETFD) != FD_CLOEXEC)
		fail("the flags are not as they were");
	/* the mask: a signal outside it is not read */
	if (kill(getpid(), SIGUSR2) || read(fa, &si, sizeof(si)) != -1 || errno != EAGAIN)
		fail("SIGUSR2 is read through a signalfd that does not take it");
	pass();
}
