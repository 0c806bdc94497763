// SPDX-License-Identifier: GPL-2.0-only
/*
 * A sandbox: the task takes other group ids (setgroups, setresgid) and
 * drops a capability (capset), sets no_new_privs, and only then installs a
 * seccomp filter, allowed by no_new_privs alone, that forbids the very
 * calls a restore needs to give it those credentials (setresuid,
 * setresgid, setgroups, capset, setfsuid, setfsgid: ENOTUNIQ).
 * After restore the ids, the capability sets, no_new_privs and the filter
 * are all there.
 */
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>

#include "seccomp_lib.h"

#define GID	4242
#define DROPPED	CAP_NET_RAW

static const char *check(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	gid_t r, e, s;
	const char *why;

	if (getresgid(&r, &e, &s) || r != GID || e != GID || s != GID)
		return "gids are not 4242";
	if (getgroups(0, NULL) != 0)
		return "supplementary groups are back";
	if (syscall(SYS_capget, &h, d))
		return "capget failed";
	if ((d[0].effective | d[0].permitted) & (1u << DROPPED))
		return "CAP_NET_RAW is back";
	if (!(d[0].effective & (1u << CAP_SYS_ADMIN)))
		return "CAP_SYS_ADMIN is gone";
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return "no_new_privs is not set";
	why = sc_expect("setresgid", SYS_setresgid, ENOTUNIQ);
	if (!why)
		why = sc_expect("capset", SYS_capset, ENOTUNIQ);
	if (!why)
		why = sc_expect("getpgrp", SYS_getpgrp, 0);
	return why;
}

static int drop_cap(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << DROPPED);
	d[0].permitted &= ~(1u << DROPPED);
	return syscall(SYS_capset, &h, d);
}

int main(int argc, char **argv)
{
	static const int nrs[] = { SYS_setresuid, SYS_setresgid, SYS_setgroups, SYS_capset,
				   SYS_setfsuid, SYS_setfsgid };
	const char *why;

	test_init(argc, argv);
	if (getuid())
		skip("needs root to change its group ids");
	if (setgroups(0, NULL) || setresgid(GID, GID, GID) || drop_cap())
		fail_errno("changing its credentials");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail_errno("PR_SET_NO_NEW_PRIVS");
	if (sc_install(nrs, 6, SECCOMP_RET_ERRNO | ENOTUNIQ, 0))
		fail_errno("seccomp");
	why = check();
	if (why)
		fail("before the dump: %s", why);

	test_ready();
	test_waitsig();

	why = check();
	if (why)
		fail("%s", why);
	pass();
}
