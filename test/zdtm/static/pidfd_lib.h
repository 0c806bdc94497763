/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the pidfd tests: the system calls (Debian's headers predate
 * some of them) and what a pidfd's fdinfo says.
 */
#ifndef PIDFD_LIB_H
#define PIDFD_LIB_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* Linux 6.9 */
#endif
#ifndef P_PIDFD
#define P_PIDFD		3	/* Linux 5.4 */
#endif

static inline int pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(SYS_pidfd_open, pid, flags);
}

static inline int pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* The "Pid:" of @fd's fdinfo: the process the pidfd names, -1 once reaped. */
static inline pid_t pidfd_pid(int fd)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		fail_errno("read %s", path);
	p = strstr(buf, "\nPid:");
	if (!p)
		fail("fd %d is no pidfd: %s", fd, buf);
	return strtol(p + 5, NULL, 10);
}

#endif
