// SPDX-License-Identifier: GPL-2.0-only
/*
 * Areas with content and then unusual protections: PROT_NONE, read-only,
 * write-only, exec-only and read+exec holding code we call. Protections and
 * contents must survive.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtm.h"

struct area {
	int prot;
	const char *perms;	/* as in /proc/self/maps */
	int code;		/* holds a function returning code */
	unsigned char *addr;
};

static struct area areas[] = {
	{ PROT_NONE, "---p", 0 },
	{ PROT_READ, "r--p", 0 },
	{ PROT_WRITE, "-w-p", 0 },
	{ PROT_EXEC, "--xp", 101 },
	{ PROT_READ | PROT_EXEC, "r-xp", 102 },
	{ PROT_WRITE | PROT_EXEC, "-wxp", 103 },
};

#define PAGES 3

static long psz;

static void fill(struct area *a, unsigned int n)
{
	unsigned long long *w = (void *)a->addr;
	size_t i;

	for (i = 0; i < PAGES * psz / sizeof(*w); i++)
		w[i] = test_pattern(n, i);
	if (a->code) {
		/* mov $code, %eax; ret */
		unsigned char insn[] = { 0xb8, a->code, 0, 0, 0, 0xc3 };

		memcpy(a->addr + psz, insn, sizeof(insn));
	}
}

static void check_perms(struct area *a)
{
	char line[512], want[64];
	FILE *f;
	int found = 0;

	snprintf(want, sizeof(want), "%lx-%lx %s ", (unsigned long)a->addr,
		 (unsigned long)a->addr + PAGES * psz, a->perms);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		fail_errno("open maps");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			found = 1;
	fclose(f);
	if (!found)
		fail("no maps line starting with '%s'", want);
}

int main(int argc, char **argv)
{
	unsigned int n;
	size_t i;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);

	for (n = 0; n < ARRAY_SIZE(areas); n++) {
		struct area *a = &areas[n];

		a->addr = mmap(NULL, PAGES * psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a->addr == MAP_FAILED)
			fail_errno("mmap");
		fill(a, n);
		if (mprotect(a->addr, PAGES * psz, a->prot))
			fail_errno("mprotect");
		check_perms(a);
	}

	test_ready();
	test_waitsig();

	for (n = 0; n < ARRAY_SIZE(areas); n++) {
		struct area *a = &areas[n];
		unsigned long long *w = (void *)a->addr;

		check_perms(a);
		if (a->code) {
			int (*fn)(void) = (void *)(a->addr + psz);
			int ret = fn();

			if (ret != a->code)
				fail("code in area %u returned %d, not %d", n, ret, a->code);
		}
		if (mprotect(a->addr, PAGES * psz, PROT_READ | PROT_WRITE))
			fail_errno("mprotect back");
		if (a->code) {
			unsigned char insn[] = { 0xb8, a->code, 0, 0, 0, 0xc3 };

			if (memcmp(a->addr + psz, insn, sizeof(insn)))
				fail("code bytes in area %u differ", n);
			memset(a->addr + psz, 0, sizeof(insn));
			/* recompute the pattern words the code overwrote */
			w[psz / 8] = test_pattern(n, psz / 8);
		}
		for (i = 0; i < PAGES * psz / sizeof(*w); i++)
			if (w[i] != test_pattern(n, i))
				fail("area %u (%s) word %zu differs", n, a->perms, i);
	}
	pass();
}
