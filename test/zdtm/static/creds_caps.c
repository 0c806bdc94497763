// SPDX-License-Identifier: GPL-2.0-only
/*
 * Capability sets of a root task that gave some up: a reduced permitted and
 * effective set, an inheritable set, two ambient capabilities and a bounding
 * set with a few capabilities dropped. All five sets must be the same after
 * restore (compared as /proc/self/status shows them).
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#define CAPBIT(c) (1ULL << (c))

static const char *const keys[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };

static void caps_get(unsigned long long *eff, unsigned long long *prm,
		     unsigned long long *inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		fail_errno("capget");
	*eff = d[0].effective | (unsigned long long)d[1].effective << 32;
	*prm = d[0].permitted | (unsigned long long)d[1].permitted << 32;
	*inh = d[0].inheritable | (unsigned long long)d[1].inheritable << 32;
}

static void caps_set(unsigned long long eff, unsigned long long prm,
		     unsigned long long inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (__u32)eff, (__u32)prm, (__u32)inh },
		{ (__u32)(eff >> 32), (__u32)(prm >> 32), (__u32)(inh >> 32) },
	};

	if (syscall(SYS_capset, &h, d))
		fail_errno("capset");
}

int main(int argc, char **argv)
{
	unsigned long long eff, prm, inh;
	char want[ARRAY_SIZE(keys)][64], buf[64];
	unsigned int i;

	test_init(argc, argv);

	/* bounding set: drop a few */
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT) || prctl(PR_CAPBSET_DROP, CAP_MKNOD) ||
	    prctl(PR_CAPBSET_DROP, CAP_WAKE_ALARM))
		fail_errno("PR_CAPBSET_DROP");

	caps_get(&eff, &prm, &inh);
	prm &= ~(CAPBIT(CAP_SYS_BOOT) | CAPBIT(CAP_SYS_TIME) | CAPBIT(CAP_LEASE));
	inh = CAPBIT(CAP_NET_RAW) | CAPBIT(CAP_KILL) | CAPBIT(CAP_CHOWN);
	eff = prm & ~(CAPBIT(CAP_SYS_NICE) | CAPBIT(CAP_NET_BIND_SERVICE));
	caps_set(eff, prm, inh);

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0))
		fail_errno("PR_CAP_AMBIENT_RAISE");

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!test_status_field(keys[i], want[i], sizeof(want[i])))
			fail("no %s in /proc/self/status", keys[i]);

	test_ready();
	test_waitsig();

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (!test_status_field(keys[i], buf, sizeof(buf)))
			fail("no %s in /proc/self/status", keys[i]);
		if (strcmp(buf, want[i]))
			fail("%s is %s, was %s", keys[i], buf, want[i]);
	}
	if (prctl(PR_CAPBSET_READ, CAP_SYS_BOOT) != 0 || prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN) != 1)
		fail("PR_CAPBSET_READ disagrees");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 0, 0) != 1)
		fail("CAP_KILL is no longer ambient");
	pass();
}
