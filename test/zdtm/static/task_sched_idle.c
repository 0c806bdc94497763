// SPDX-License-Identifier: GPL-2.0-only
/*
 * SCHED_IDLE (with a nice value, which the kernel keeps for it): the policy
 * and the nice value read back the same after restore.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 0 };
	int pol, nice;

	test_init(argc, argv);
	if (setpriority(PRIO_PROCESS, 0, -3))
		fail_errno("setpriority");
	if (sched_setscheduler(0, SCHED_IDLE, &sp))
		fail_errno("sched_setscheduler");

	test_ready();
	test_waitsig();

	pol = sched_getscheduler(0);
	if (pol != SCHED_IDLE)
		fail("policy is %d, was SCHED_IDLE", pol);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		fail_errno("getpriority");
	if (nice != -3)
		fail("nice is %d, was -3", nice);
	pass();
}
