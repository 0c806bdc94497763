// SPDX-License-Identifier: GPL-2.0-only
/*
 * SCHED_BATCH with a nice value of 7: policy, priority, nice and the
 * reset-on-fork flag read back the same after restore.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "zdtm.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 0 };
	int pol, nice;

	test_init(argc, argv);
	if (sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp))
		fail_errno("sched_setscheduler");
	if (setpriority(PRIO_PROCESS, 0, 7))
		fail_errno("setpriority");

	test_ready();
	test_waitsig();

	pol = sched_getscheduler(0);
	if (pol != (SCHED_BATCH | SCHED_RESET_ON_FORK))
		fail("policy is %#x, was SCHED_BATCH|SCHED_RESET_ON_FORK", pol);
	if (sched_getparam(0, &sp) || sp.sched_priority != 0)
		fail("priority is %d", sp.sched_priority);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		fail_errno("getpriority");
	if (nice != 7)
		fail("nice is %d, was 7", nice);
	pass();
}
