// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task pinned to a CPU that the restoring machine does not have: the
 * task pins itself to CPU PIN (first argument); once restored, its affinity
 * must be the CPU list EXPECT (second argument). PIN "none": the task
 * keeps the affinity it was started with and must have it after the
 * restore too, whatever EXPECT says. The .desc makes criu
 * believe that only CPU 0 is online (CRIU_FAKE_ONLINE_CPUS), so that this
 * works on a 2-CPU machine.
 *
 * Whether the task was restored at all is told by its time namespace:
 * criu restores into a new one. Not restored (the self-check), the
 * affinity must simply be unchanged.
 */
#include <getopt.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdtm.h"

static void parse_list(const char *s, cpu_set_t *set)
{
	char *end;
	long a, b;

	CPU_ZERO(set);
	while (*s) {
		a = b = strtol(s, &end, 10);
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (end == s || a < 0 || b < a || b >= CPU_SETSIZE)
			fail("bad CPU list '%s'", s);
		for (; a <= b; a++)
			CPU_SET(a, set);
		s = *end == ',' ? end + 1 : end;
	}
}

static char *list(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int cpu;

	buf[0] = 0;
	for (cpu = 0; cpu < CPU_SETSIZE && off < len; cpu++)
		if (CPU_ISSET(cpu, set))
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", cpu);
	return buf;
}

static void time_ns(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/ns/time", buf, len - 1);

	if (n < 0)
		fail_errno("readlink /proc/self/ns/time");
	buf[n] = 0;
}

int main(int argc, char **argv)
{
	cpu_set_t avail, pin, expect, now;
	char ns0[64], ns1[64], b1[256], b2[256];
	const cpu_set_t *want;
	int cpu;

	test_init(argc, argv);
	if (optind + 2 != argc)
		fail("usage: %s [options] PIN EXPECT", test_name);
	cpu = atoi(argv[optind]);
	parse_list(argv[optind + 1], &expect);
	if (sched_getaffinity(0, sizeof(avail), &avail))
		fail_errno("sched_getaffinity");
	if (!strcmp(argv[optind], "none")) {
		pin = expect = avail;
		goto ready;
	}
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &avail))
		skip("CPU %d is not one we may run on (%s)", cpu,
		     list(&avail, b1, sizeof(b1)));
	CPU_ZERO(&pin);
	CPU_SET(cpu, &pin);
	if (sched_setaffinity(0, sizeof(pin), &pin))
		fail_errno("sched_setaffinity(%d)", cpu);
ready:
	time_ns(ns0, sizeof(ns0));

	test_ready();
	test_waitsig();

	time_ns(ns1, sizeof(ns1));
	want = strcmp(ns0, ns1) ? &expect : &pin;
	if (sched_getaffinity(0, sizeof(now), &now))
		fail_errno("sched_getaffinity");
	if (!CPU_EQUAL(&now, want))
		fail("affinity is %s, expected %s (%s)", list(&now, b1, sizeof(b1)),
		     list(want, b2, sizeof(b2)), want == &pin ? "not restored" : "restored");
	if (CPU_COUNT(want) == 1 && !CPU_ISSET(sched_getcpu(), want))
		fail("running on CPU %d, not %s", sched_getcpu(), list(want, b1, sizeof(b1)));
	pass();
}
