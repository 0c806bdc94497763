// SPDX-License-Identifier: GPL-2.0
/*
 * dropcap MASK PROG [ARGS...]: runs PROG without the capabilities of MASK
 * (hexadecimal, bit N for capability N), gone from its bounding set and
 * its permitted, effective and inheritable sets. test_guest_to_host.py
 * starts the guest's program so: a restore here gives a task only the
 * capabilities criu has itself, and this machine's criu lacks some.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	unsigned long long mask;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: dropcap MASK PROG [ARGS...]\n");
		return 2;
	}
	mask = strtoull(argv[1], NULL, 16);
	for (i = 0; i < 64; i++)
		if ((mask >> i) & 1)
			prctl(PR_CAPBSET_DROP, i, 0, 0, 0);
	if (syscall(SYS_capget, &h, d)) {
		perror("capget");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		d[i].permitted &= ~(unsigned int)(mask >> (32 * i));
		d[i].effective &= ~(unsigned int)(mask >> (32 * i));
		d[i].inheritable &= ~(unsigned int)(mask >> (32 * i));
	}
	if (syscall(SYS_capset, &h, d)) {
		perror("capset");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
