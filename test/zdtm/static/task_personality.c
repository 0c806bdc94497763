// SPDX-License-Identifier: GPL-2.0-only
/*
 * The personality (ADDR_NO_RANDOMIZE | UNAME26 | READ_IMPLIES_EXEC) is
 * kept. READ_IMPLIES_EXEC makes new PROT_READ mappings executable, so a
 * restorer that sets the personality before rebuilding memory would turn
 * our read-only area executable; the runner's maps check sees that, and we
 * check our own area here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "zdtm.h"

static void perms(void *addr, char *out)
{
	unsigned long s, e;
	char line[512], p[8];
	FILE *f;

	out[0] = 0;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		fail_errno("open maps");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3 &&
		    (unsigned long)addr >= s && (unsigned long)addr < e)
			strcpy(out, p);
	fclose(f);
}

int main(int argc, char **argv)
{
	int want = PER_LINUX | ADDR_NO_RANDOMIZE | UNAME26, now;
	char p1[8], p2[8];
	struct utsname u;
	void *ro;

	test_init(argc, argv);
	/* a read-only area created before READ_IMPLIES_EXEC */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		fail_errno("mmap");
	perms(ro, p1);
	if (strcmp(p1, "r--p"))
		fail("fresh read-only area is %s", p1);

	want |= READ_IMPLIES_EXEC;
	if (personality(want) < 0)
		fail_errno("personality");

	test_ready();
	test_waitsig();

	now = personality(0xffffffff);
	if (now != want)
		fail("personality is %#x, was %#x", now, want);
	perms(ro, p2);
	if (strcmp(p1, p2))
		fail("the read-only area became %s", p2);
	if (uname(&u) || strncmp(u.release, "2.6.", 4))
		fail("UNAME26 has no effect: release %s", u.release);
	pass();
}
