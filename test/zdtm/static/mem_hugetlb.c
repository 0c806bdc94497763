// SPDX-License-Identifier: GPL-2.0-only
/*
 * Private anonymous memory in huge pages (MAP_PRIVATE | MAP_ANONYMOUS |
 * MAP_HUGETLB, the default huge page size): an area of three huge pages,
 * the first written whole, the second in a few small pieces, the third
 * never touched; and a second area written, then made read-only. After
 * the restore both are hugetlb areas again (smaps: "ht", KernelPageSize),
 * every byte is as it was, the untouched huge page is still not there
 * (Private_Hugetlb: no more huge pages than before the dump), and the
 * first area takes a new write. Skipped where the machine has too few
 * free huge pages (vm.nr_hugepages).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_vmflags.h"

#define NEED	5		/* huge pages: 3 + 1, and one spare */

static unsigned char *a, *ro;
static size_t huge;

static unsigned char pattern(size_t i, int salt)
{
	return (unsigned char)(i * 7 + (i >> 12) + salt);
}

static long meminfo(const char *name)
{
	static char buf[8192];
	char *p;

	if (test_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		fail_errno("read /proc/meminfo");
	p = strstr(buf, name);
	return p ? atol(p + strlen(name)) : -1;
}

/* the pieces of the second huge page that are written: 4 KiB at these offsets */
static const size_t pieces[] = { 0, 5 << 12, 300 << 12, (512 - 1) << 12 };

static int in_piece(size_t off)
{
	size_t i;

	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
		if (off >= pieces[i] && off < pieces[i] + 4096)
			return 1;
	return 0;
}

static void fill(void)
{
	size_t i, j;

	for (i = 0; i < huge; i++)
		a[i] = pattern(i, 1);
	for (j = 0; j < sizeof(pieces) / sizeof(pieces[0]); j++)
		for (i = pieces[j]; i < pieces[j] + 4096 && i < huge; i++)
			a[huge + i] = pattern(i, 2);
	for (i = 0; i < huge; i++)
		ro[i] = pattern(i, 3);
	if (mprotect(ro, huge, PROT_READ))
		fail_errno("mprotect");
}

static void check_area(void *p, const char *what, long hugetlb_kb)
{
	if (!has_vmflag(p, " ht"))
		fail("%s is not a hugetlb area now", what);
	if (smaps_kb(p, "KernelPageSize:") != (long)(huge >> 10))
		fail("%s has pages of %ld kB, not %zu", what, smaps_kb(p, "KernelPageSize:"),
		     huge >> 10);
	if (smaps_kb(p, "Private_Hugetlb:") != hugetlb_kb)
		fail("%s holds %ld kB of huge pages, %ld before", what,
		     smaps_kb(p, "Private_Hugetlb:"), hugetlb_kb);
}

static void check(long a_kb, long ro_kb)
{
	size_t i;

	check_area(a, "the three-page area", a_kb);
	check_area(ro, "the read-only area", ro_kb);
	for (i = 0; i < huge; i++)
		if (a[i] != pattern(i, 1))
			fail("the first huge page differs at byte %zu", i);
	for (i = 0; i < huge; i++)
		if (a[huge + i] != (in_piece(i) ? pattern(i, 2) : 0))
			fail("the second huge page differs at byte %zu", i);
	for (i = 0; i < huge; i += 4096)
		if (ro[i] != pattern(i, 3) || ro[i + 4095] != pattern(i + 4095, 3))
			fail("the read-only area differs near byte %zu", i);
	if (!has_vmflag(ro, " rd") || has_vmflag(ro, " wr"))
		fail("the read-only area is writable now");
	/* after the contents: a read of the third page would fault it in */
	for (i = 0; i < huge; i += 4096)
		if (a[2 * huge + i])
			fail("the untouched huge page holds data at byte %zu", i);
	a[huge + 4096 * 7] = 0x5a;
	if (a[huge + 4096 * 7] != 0x5a)
		fail("a write to the area after the restore is lost");
}

int main(int argc, char **argv)
{
	long a_kb, ro_kb;

	test_init(argc, argv);
	huge = (size_t)meminfo("Hugepagesize:") << 10;
	if (!huge || meminfo("HugePages_Free:") < NEED)
		skip("fewer than %d free huge pages (vm.nr_hugepages)", NEED);
	a = mmap(NULL, 3 * huge, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	ro = mmap(NULL, huge, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (a == MAP_FAILED || ro == MAP_FAILED)
		skip("MAP_HUGETLB: %m");
	fill();
	a_kb = smaps_kb(a, "Private_Hugetlb:");
	ro_kb = smaps_kb(ro, "Private_Hugetlb:");
	if (a_kb != (long)(2 * huge >> 10) || ro_kb != (long)(huge >> 10))
		fail("before the dump: %ld and %ld kB of huge pages", a_kb, ro_kb);
	test_msg("areas at %p (3 huge pages of %zu kB) and %p", a, huge >> 10, ro);

	test_ready();
	test_waitsig();

	check(a_kb, ro_kb);
	pass();
}
