/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Seccomp filters for the seccomp_*.c tests: one program per call of
 * sc_install(), answering @action for the listed system calls and
 * allowing every other one (and every other architecture).
 */
#ifndef SECCOMP_LIB_H
#define SECCOMP_LIB_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#define SC_MAX_NRS	16

/* seccomp(SECCOMP_SET_MODE_FILTER, @flags): its return value, errno set */
static inline long sc_install(const int *nrs, int n, unsigned int action, unsigned int flags)
{
	struct sock_filter f[4 + 2 * SC_MAX_NRS + 1];
	struct sock_fprog prog = { .filter = f };
	int i, k = 0;

	if (n > SC_MAX_NRS)
		abort();
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = k;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* "Key:" of this thread's own status, as a number; -1 if missing */
static inline long sc_status(const char *key)
{
	char buf[4096], *p;
	size_t klen = strlen(key);
	ssize_t len;

	len = test_read_file("/proc/thread-self/status", buf, sizeof(buf));
	for (p = buf; len > 0 && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtol(p + klen + 1, NULL, 10);
	return -1;
}

/*
 * NULL when the raw call @nr fails with @err (0: succeeds), else why not.
 * getppid, getpgrp and getsid(0) are all the tests filter this way.
 */
static inline const char *sc_expect(const char *name, long nr, int err)
{
	static char why[128];
	long ret;

	errno = 0;
	ret = syscall(nr, 0);
	if (err ? ret == -1 && errno == err : ret >= 0)
		return NULL;
	snprintf(why, sizeof(why), "%s returned %ld, errno %d (%s) instead of errno %d", name,
		 ret, errno, strerror(errno), err);
	return why;
}

#endif
