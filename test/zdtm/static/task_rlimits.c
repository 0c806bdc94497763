// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resource limits: several soft limits lowered and two hard limits lowered
 * (raising a hard limit needs CAP_SYS_RESOURCE, which we do not assume).
 * Every limit must read back the same after restore.
 */
#include <sys/resource.h>

#include "zdtm.h"

struct lower {
	int res;
	rlim_t soft;
	int hard_too;
};

static const struct lower lowers[] = {
	{ RLIMIT_CPU, 36000, 0 },
	{ RLIMIT_FSIZE, 1ULL << 40, 0 },
	{ RLIMIT_DATA, 1ULL << 38, 0 },
	{ RLIMIT_STACK, 6 << 20, 0 },
	{ RLIMIT_NOFILE, 777, 0 },
	{ RLIMIT_AS, 1ULL << 42, 0 },
	{ RLIMIT_LOCKS, 4321, 1 },
	{ RLIMIT_SIGPENDING, 3000, 0 },
	{ RLIMIT_MSGQUEUE, 654321, 1 },
	{ RLIMIT_MEMLOCK, 1 << 20, 0 },
	{ RLIMIT_RTTIME, 5000000, 0 },
};

static struct rlimit before[RLIM_NLIMITS];

int main(int argc, char **argv)
{
	struct rlimit rl;
	unsigned int i;
	int r;

	test_init(argc, argv);
	for (i = 0; i < ARRAY_SIZE(lowers); i++) {
		if (getrlimit(lowers[i].res, &rl))
			fail_errno("getrlimit(%d)", lowers[i].res);
		if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > lowers[i].soft)
			rl.rlim_cur = lowers[i].soft;
		else
			rl.rlim_cur = rl.rlim_cur / 2;
		if (lowers[i].hard_too && (rl.rlim_max == RLIM_INFINITY ||
					   rl.rlim_max > rl.rlim_cur + 1))
			rl.rlim_max = rl.rlim_cur + 1;
		if (setrlimit(lowers[i].res, &rl))
			fail_errno("setrlimit(%d)", lowers[i].res);
	}
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (getrlimit(r, &before[r]))
			fail_errno("getrlimit(%d)", r);

	test_ready();
	test_waitsig();

	for (r = 0; r < RLIM_NLIMITS; r++) {
		if (getrlimit(r, &rl))
			fail_errno("getrlimit(%d)", r);
		if (rl.rlim_cur != before[r].rlim_cur || rl.rlim_max != before[r].rlim_max)
			fail("limit %d is %llu/%llu, was %llu/%llu", r,
			     (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
			     (unsigned long long)before[r].rlim_cur,
			     (unsigned long long)before[r].rlim_max);
	}
	pass();
}
