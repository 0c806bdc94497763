// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real/effective/saved/fs user and group ids all different and not root,
 * supplementary groups, and the capabilities kept through the uid change
 * with PR_SET_KEEPCAPS: all unchanged after restore. The dumpable flag
 * (cleared by the kernel on the uid change) must be kept too.
 */
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

static const gid_t groups[] = { 5001, 5003, 5002, 17 };

static void caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (syscall(SYS_capget, &h, d))
		fail_errno("capget");
}

static void caps_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (syscall(SYS_capset, &h, d))
		fail_errno("capset");
}

int main(int argc, char **argv)
{
	struct __user_cap_data_struct caps[2], now[2];
	char uids[128], gids[128], buf[128];
	uid_t r, e, s;
	gid_t rg, eg, sg, list[64];
	int n, dumpable, i;

	test_init(argc, argv);
	if (setgroups(ARRAY_SIZE(groups), groups))
		fail_errno("setgroups");
	if (prctl(PR_SET_KEEPCAPS, 1))
		fail_errno("PR_SET_KEEPCAPS");
	if (setresgid(1001, 1002, 1003))
		fail_errno("setresgid");
	if (setresuid(2001, 2002, 2003))
		fail_errno("setresuid");
	/* the uid change cleared the effective set; permitted was kept */
	caps_get(caps);
	caps[0].effective = caps[0].permitted;
	caps[1].effective = caps[1].permitted;
	caps_set(caps);
	setfsgid(1004);
	setfsuid(2004);
	if (setfsuid(-1) != 2004 || setfsgid(-1) != 1004)
		fail("setfsuid/setfsgid did not take");
	caps_get(caps);
	dumpable = prctl(PR_GET_DUMPABLE);
	if (!test_status_field("Uid", uids, sizeof(uids)) ||
	    !test_status_field("Gid", gids, sizeof(gids)))
		fail("no Uid/Gid in /proc/self/status");

	test_ready();
	test_waitsig();

	if (getresuid(&r, &e, &s) || r != 2001 || e != 2002 || s != 2003)
		fail("uids are %d/%d/%d, were 2001/2002/2003", r, e, s);
	if (getresgid(&rg, &eg, &sg) || rg != 1001 || eg != 1002 || sg != 1003)
		fail("gids are %d/%d/%d, were 1001/1002/1003", rg, eg, sg);
	if ((n = setfsuid(-1)) != 2004)
		fail("fsuid is %d, was 2004", n);
	if ((n = setfsgid(-1)) != 1004)
		fail("fsgid is %d, was 1004", n);
	if (!test_status_field("Uid", buf, sizeof(buf)) || strcmp(buf, uids))
		fail("status Uid is '%s', was '%s'", buf, uids);
	if (!test_status_field("Gid", buf, sizeof(buf)) || strcmp(buf, gids))
		fail("status Gid is '%s', was '%s'", buf, gids);
	n = getgroups(ARRAY_SIZE(list), list);
	if (n != (int)ARRAY_SIZE(groups))
		fail("%d supplementary groups, were %zu", n, ARRAY_SIZE(groups));
	for (i = 0; i < n; i++) {
		unsigned int j;

		for (j = 0; j < ARRAY_SIZE(groups); j++)
			if (list[i] == groups[j])
				break;
		if (j == ARRAY_SIZE(groups))
			fail("unexpected supplementary group %d", list[i]);
	}
	caps_get(now);
	if (memcmp(now, caps, sizeof(caps)))
		fail("capabilities changed: eff %08x%08x prm %08x%08x inh %08x%08x",
		     now[1].effective, now[0].effective, now[1].permitted,
		     now[0].permitted, now[1].inheritable, now[0].inheritable);
	if (prctl(PR_GET_KEEPCAPS) != 1)
		fail("keepcaps was lost");
	if (prctl(PR_GET_DUMPABLE) != dumpable)
		fail("dumpable is %d, was %d", prctl(PR_GET_DUMPABLE), dumpable);
	pass();
}
