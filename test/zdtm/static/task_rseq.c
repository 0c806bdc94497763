// SPDX-License-Identifier: GPL-2.0-only
/*
 * rseq as glibc registers it: the area at the thread pointer plus
 * __rseq_offset must still be registered after restore (registering it
 * again fails with EBUSY) and be kept up to date by the kernel (cpu_id
 * follows us when the affinity moves us to another CPU).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef RSEQ_SIG
#define RSEQ_SIG 0x53053053
#endif

static struct rseq *area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* move to cpu and check that rseq reports it */
static void check_cpu(int cpu)
{
	volatile struct rseq *rs = area();
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail_errno("sched_setaffinity(%d)", cpu);
	for (i = 0; i < 100 && rs->cpu_id != (unsigned int)cpu; i++)
		sched_yield();
	if (rs->cpu_id != (unsigned int)cpu || rs->cpu_id_start != (unsigned int)cpu)
		fail("rseq cpu_id is %d/%d while on CPU %d (sched_getcpu %d)",
		     (int)rs->cpu_id, (int)rs->cpu_id_start, cpu, sched_getcpu());
}

int main(int argc, char **argv)
{
	volatile struct rseq *rs;
	cpu_set_t all;
	int cpu, ret;

	test_init(argc, argv);
	if (__rseq_size == 0)
		skip("glibc did not register rseq (glibc before 2.35, a kernel without "
		     "rseq, or the tunable glibc.pthread.rseq=0)");
	rs = area();
	if ((int)rs->cpu_id < 0)
		fail("rseq is not active before the checkpoint: cpu_id %d", (int)rs->cpu_id);
	if (sched_getaffinity(0, sizeof(all), &all))
		fail_errno("sched_getaffinity");

	test_ready();
	test_waitsig();

	if ((int)rs->cpu_id < 0)
		fail("rseq cpu_id is %d after restore", (int)rs->cpu_id);
	/* already registered: the same registration again must say EBUSY */
	ret = syscall(SYS_rseq, area(), __rseq_size > 32 ? __rseq_size : 32, 0, RSEQ_SIG);
	if (ret == 0)
		fail("rseq was not registered after restore (registering it again worked)");
	if (errno != EBUSY)
		fail_errno("rseq re-registration failed unexpectedly (registered with other args?)");
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all))
			check_cpu(cpu);
	sched_setaffinity(0, sizeof(all), &all);
	pass();
}
