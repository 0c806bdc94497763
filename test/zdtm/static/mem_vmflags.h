/* SPDX-License-Identifier: GPL-2.0-only */
/* The smaps VmFlags of an area, for the mem_* tests of VMA flags. */
#ifndef MEM_VMFLAGS_H
#define MEM_VMFLAGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdtm.h"

/* The smaps lines of the area at @addr, in a buffer of ours (the next call overwrites it). */
static inline char *smaps_of(void *addr)
{
	static char buf[1 << 20];
	char key[32], *p, *end;

	if (test_read_file("/proc/self/smaps", buf, sizeof(buf)) <= 0)
		fail_errno("read smaps");
	snprintf(key, sizeof(key), "%lx-", (unsigned long)addr);
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, strlen(key)))
			break;
	if (!p)
		fail("no area at %p in smaps", addr);
	/* up to the next area's line: the one after VmFlags */
	end = strstr(p, "VmFlags:");
	end = end ? strchr(end, '\n') : NULL;
	if (end)
		end[1] = '\0';
	return p;
}

/* The value of smaps field @name ("Rss:") of the area at @addr, in kB; -1: none. */
static inline long smaps_kb(void *addr, const char *name)
{
	char *p = strstr(smaps_of(addr), name);

	return p ? atol(p + strlen(name)) : -1;
}

/* Whether the VmFlags of the area at @addr hold @flag (" lo": a space, two letters). */
static inline int has_vmflag(void *addr, const char *flag)
{
	char *p, *end;

	p = strstr(smaps_of(addr), "VmFlags:");
	if (!p)
		fail("no VmFlags for %p", addr);
	end = strchr(p, '\n');
	if (end)
		*end = '\0';
	return strstr(p, flag) != NULL;
}

#endif
