// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/uptime inside agrees with CLOCK_BOOTTIME (within a second) after
 * restore, i.e. the time namespace offsets apply to it too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "zdtm.h"

static void check(const char *when)
{
	struct timespec b;
	char buf[128];
	double up;

	if (test_read_file("/proc/uptime", buf, sizeof(buf)) < 0)
		fail_errno("read /proc/uptime");
	clock_gettime(CLOCK_BOOTTIME, &b);
	up = strtod(buf, NULL);
	if (up - (b.tv_sec + b.tv_nsec / 1e9) > 1 || up - (b.tv_sec + b.tv_nsec / 1e9) < -1)
		fail("%s: /proc/uptime says %.2f, CLOCK_BOOTTIME %ld.%02ld", when, up,
		     (long)b.tv_sec, b.tv_nsec / 10000000);
}

int main(int argc, char **argv)
{
	test_init(argc, argv);
	check("before");
	test_ready();
	test_waitsig();
	check("after restore");
	pass();
}
