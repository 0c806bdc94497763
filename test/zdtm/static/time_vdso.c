// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vDSO is where it was (AT_SYSINFO_EHDR, and the [vvar*]/[vdso] lines
 * of maps are unchanged) and it works: __vdso_clock_gettime, found by
 * parsing the vDSO's ELF symbol table, agrees with the system call for
 * MONOTONIC, BOOTTIME and REALTIME, and so does __vdso_time.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"
#include "vdso_lib.h"

typedef int (*cgt_fn)(clockid_t, struct timespec *);
typedef time_t (*time_fn)(time_t *);

static void special_maps(char *out, size_t size)
{
	char line[512];
	size_t len = 0;
	FILE *f;

	out[0] = 0;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		fail_errno("open maps");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") || strstr(line, "[vvar"))
			len += snprintf(out + len, size - len, "%s", line);
	fclose(f);
}

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void check_clock(cgt_fn cgt, clockid_t clk, const char *name)
{
	struct timespec a, v, b;

	if (syscall(SYS_clock_gettime, clk, &a))
		fail_errno("clock_gettime(%s)", name);
	if (cgt(clk, &v))
		fail("__vdso_clock_gettime(%s) failed", name);
	if (syscall(SYS_clock_gettime, clk, &b))
		fail_errno("clock_gettime(%s)", name);
	if (ns(&v) < ns(&a) || ns(&v) > ns(&b))
		fail("%s: vDSO says %lld, the system call %lld .. %lld", name,
		     ns(&v), ns(&a), ns(&b));
}

static void check_all(cgt_fn cgt, time_fn tfn)
{
	time_t t1, t2, tv;

	check_clock(cgt, CLOCK_MONOTONIC, "MONOTONIC");
	check_clock(cgt, CLOCK_BOOTTIME, "BOOTTIME");
	check_clock(cgt, CLOCK_REALTIME, "REALTIME");
	t1 = syscall(SYS_time, NULL);
	tv = tfn(NULL);
	t2 = syscall(SYS_time, NULL);
	if (tv < t1 || tv > t2)
		fail("__vdso_time says %ld, the system call %ld .. %ld",
		     (long)tv, (long)t1, (long)t2);
}

static char maps1[2048], maps2[2048];

int main(int argc, char **argv)
{
	unsigned long base;
	cgt_fn cgt;
	time_fn tfn;

	test_init(argc, argv);
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		fail("no vDSO");
	cgt = vdso_sym(base, "__vdso_clock_gettime");
	tfn = vdso_sym(base, "__vdso_time");
	special_maps(maps1, sizeof(maps1));
	check_all(cgt, tfn);

	test_ready();
	test_waitsig();

	if (getauxval(AT_SYSINFO_EHDR) != base)
		fail("AT_SYSINFO_EHDR is %#lx, was %#lx", getauxval(AT_SYSINFO_EHDR), base);
	special_maps(maps2, sizeof(maps2));
	if (strcmp(maps1, maps2))
		fail("vDSO areas moved:\n%s-- now --\n%s", maps1, maps2);
	check_all(cgt, tfn);
	if (cgt != vdso_sym(base, "__vdso_clock_gettime"))
		fail("the vDSO symbol moved");
	pass();
}
