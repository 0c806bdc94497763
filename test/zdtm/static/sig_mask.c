// SPDX-License-Identifier: GPL-2.0-only
/*
 * The blocked signal mask, including glibc's internal signals 32 and 33
 * and real-time signals (set with the raw system call), is the same after
 * restore.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#define BIT(sig) (1ULL << ((sig) - 1))

static unsigned long long get_mask(void)
{
	unsigned long long m;

	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, sizeof(m)))
		fail_errno("rt_sigprocmask");
	return m;
}

int main(int argc, char **argv)
{
	unsigned long long want, m, st;
	char buf[64];

	test_init(argc, argv);
	want = BIT(SIGHUP) | BIT(SIGINT) | BIT(SIGQUIT) | BIT(SIGUSR1) |
	       BIT(SIGUSR2) | BIT(SIGPIPE) | BIT(SIGALRM) | BIT(SIGCHLD) |
	       BIT(SIGWINCH) | BIT(32) | BIT(33) | BIT(34) | BIT(40) |
	       BIT(47) | BIT(63) | BIT(64);
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &want, NULL, sizeof(want)))
		fail_errno("rt_sigprocmask");
	if (get_mask() != want)
		fail("mask reads back as %#llx before the checkpoint", get_mask());

	test_ready();
	test_waitsig();

	m = get_mask();
	if (m != want)
		fail("blocked mask is %#llx, was %#llx", m, want);
	if (!test_status_field("SigBlk", buf, sizeof(buf)))
		fail("no SigBlk in /proc/self/status");
	st = strtoull(buf, NULL, 16);
	if (st != want)
		fail("SigBlk is %s", buf);
	pass();
}
