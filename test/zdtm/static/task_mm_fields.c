// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mm's bookkeeping: /proc/self/auxv (byte for byte), /proc/self/exe,
 * and the address fields of /proc/self/stat (start_code, end_code,
 * start_stack, start_data, end_data, start_brk, arg_start, arg_end,
 * env_start, env_end) are unchanged. getauxval() still works.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "zdtm.h"

static const int fields[] = { 26, 27, 28, 45, 46, 47, 48, 49, 50, 51 };
static const char *const names[] = {
	"start_code", "end_code", "start_stack", "start_data", "end_data",
	"start_brk", "arg_start", "arg_end", "env_start", "env_end",
};

static void stat_fields(unsigned long *v)
{
	char buf[4096], *p;
	unsigned int i;
	int f;

	if (test_read_file("/proc/self/stat", buf, sizeof(buf)) < 0)
		fail_errno("read stat");
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		p = strrchr(buf, ')') + 2;	/* field 3 */
		for (f = 3; f < fields[i]; f++)
			p = strchr(p, ' ') + 1;
		if (sscanf(p, "%lu", &v[i]) != 1)
			fail("cannot parse stat field %d", fields[i]);
	}
}

static char auxv[4096], auxv2[4096];

int main(int argc, char **argv)
{
	unsigned long st[ARRAY_SIZE(fields)], st2[ARRAY_SIZE(fields)];
	unsigned long pagesz, phdr, entry, random;
	char exe[PATH_MAX], exe2[PATH_MAX];
	ssize_t alen, alen2, n;
	unsigned int i;

	test_init(argc, argv);
	alen = test_read_file("/proc/self/auxv", auxv, sizeof(auxv));
	if (alen <= 0)
		fail_errno("read auxv");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		fail_errno("readlink exe");
	exe[n] = 0;
	stat_fields(st);
	pagesz = getauxval(AT_PAGESZ);
	phdr = getauxval(AT_PHDR);
	entry = getauxval(AT_ENTRY);
	random = getauxval(AT_RANDOM);

	test_ready();
	test_waitsig();

	alen2 = test_read_file("/proc/self/auxv", auxv2, sizeof(auxv2));
	if (alen2 != alen || memcmp(auxv, auxv2, alen))
		fail("/proc/self/auxv changed (%zd bytes, were %zd)", alen2, alen);
	n = readlink("/proc/self/exe", exe2, sizeof(exe2) - 1);
	if (n < 0)
		fail_errno("readlink exe");
	exe2[n] = 0;
	if (strcmp(exe, exe2))
		fail("/proc/self/exe is %s, was %s", exe2, exe);
	stat_fields(st2);
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (st[i] != st2[i])
			fail("%s is %#lx, was %#lx", names[i], st2[i], st[i]);
	if (getauxval(AT_PAGESZ) != pagesz || getauxval(AT_PHDR) != phdr ||
	    getauxval(AT_ENTRY) != entry || getauxval(AT_RANDOM) != random)
		fail("getauxval() results changed");
	pass();
}
