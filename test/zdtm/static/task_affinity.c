// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU affinity restricted to the last online CPU is kept.
 */
#include <sched.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	cpu_set_t set, now;
	int cpu;

	test_init(argc, argv);
	if (sched_getaffinity(0, sizeof(set), &set))
		fail_errno("sched_getaffinity");
	for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &set))
			break;
	/* with one CPU a restricted affinity is the default one */
	if (cpu < 0 || CPU_COUNT(&set) < 2)
		skip("fewer than 2 CPUs to run on (%d)", CPU_COUNT(&set));
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail_errno("sched_setaffinity");
	if (sched_getaffinity(0, sizeof(set), &set))
		fail_errno("sched_getaffinity");

	test_ready();
	test_waitsig();

	if (sched_getaffinity(0, sizeof(now), &now))
		fail_errno("sched_getaffinity");
	if (!CPU_EQUAL(&now, &set))
		fail("affinity changed (%d CPUs, was %d)", CPU_COUNT(&now), CPU_COUNT(&set));
	if (sched_getcpu() != cpu)
		fail("running on CPU %d, not %d", sched_getcpu(), cpu);
	pass();
}
