// SPDX-License-Identifier: GPL-2.0
/* Which pages of a range hold data: PAGEMAP_SCAN, or /proc/PID/pagemap. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

/* PAGEMAP_SCAN came with Linux 6.7; Debian 12's headers are 6.1's. */
#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_FILE		(1 << 2)
#define PAGE_IS_PRESENT		(1 << 3)
#define PAGE_IS_SWAPPED		(1 << 4)
#define PAGE_IS_PFNZERO		(1 << 5)
#define PAGE_IS_HUGE		(1 << 6)
#define PAGE_IS_SOFT_DIRTY	(1 << 7)	/* Linux 6.8 */
#define PAGE_IS_GUARD		(1 << 8)	/* Linux 6.14: MADV_GUARD_INSTALL */

struct pm_page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

struct pm_scan_arg {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg)

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_FILE		(1ULL << 61)
#define PM_GUARD	(1ULL << 58)	/* Linux 6.14 */
#define PM_PFN_MASK	((1ULL << 55) - 1)

static int scan_ioctl = 1;
static uint64_t guard_bit = PAGE_IS_GUARD;	/* 0 on kernels without it */

/* PAGEMAP_SCAN's flags, Linux 6.7 */
#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)

/*
 * Runs the scan @a describes up to @end, telling @cb each run of pages
 * it returns (adjacent regions merged). 0, -1 (errno), -2 if @cb failed.
 */
static int scan_loop(int fd, struct pm_scan_arg *a, uint64_t start, uint64_t end,
		     pagemap_cb cb, void *arg)
{
	uint64_t pending_start = 0, pending_end = 0;
	struct pm_page_region vec[512];
	long n, i;

	a->size = sizeof(*a);
	a->start = start;
	a->end = end;
	a->vec = (uint64_t)(uintptr_t)vec;
	a->vec_len = ARRAY_SIZE(vec);
	while (a->start < end) {
		n = ioctl(fd, PAGEMAP_SCAN, a);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			/* regions split by category; merge what is adjacent */
			if (pending_end == vec[i].start) {
				pending_end = vec[i].end;
				continue;
			}
			if (pending_end && cb(arg, pending_start, pending_end))
				return -2;
			pending_start = vec[i].start;
			pending_end = vec[i].end;
		}
		if (a->walk_end <= a->start)
			break;
		a->start = a->walk_end;
	}
	if (pending_end && cb(arg, pending_start, pending_end))
		return -2;
	return 0;
}

static int scan_with_ioctl(int fd, uint64_t start, uint64_t end, int what,
			   pagemap_cb cb, void *arg)
{
	struct pm_scan_arg a = { 0 };
	int ret;

	if (what == PM_SCAN_GUARDS) {
		if (!guard_bit)
			return 0;
		a.category_mask = guard_bit;
		a.return_mask = guard_bit;
	} else {
		/* guard markers look swapped: they are no data */
		a.category_inverted = PAGE_IS_PFNZERO | guard_bit |
				      (what == PM_SCAN_ANON ? PAGE_IS_FILE : 0);
		a.category_mask = a.category_inverted;
		a.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED;
		a.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED;
	}
	ret = scan_loop(fd, &a, start, end, cb, arg);
	if (ret == -1 && errno == EINVAL && guard_bit) {
		guard_bit = 0;	/* a kernel before 6.14 */
		return scan_with_ioctl(fd, start, end, what, cb, arg);
	}
	return ret;
}

int pagemap_scan_written(int fd, uint64_t start, uint64_t end, pagemap_cb cb, void *arg)
{
	struct pm_scan_arg a = { 0 };
	int ret;

	/* protected again as they are reported: no write falls in between */
	a.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
	a.category_mask = PAGE_IS_WRITTEN;
	a.return_mask = PAGE_IS_WRITTEN;
	ret = scan_loop(fd, &a, start, end, cb, arg);
	if (ret == -1 && errno == EPERM)
		return 1;
	if (ret == -1)
		pr_perror("PAGEMAP_SCAN of the written pages of %#lx-%#lx failed", start, end);
	return ret ? -1 : 0;
}

uint64_t pagemap_zero_pfn(void)
{
	static uint64_t pfn = ~0ULL;
	static volatile char *page;
	uint64_t e;
	int fd;

	if (pfn != ~0ULL)
		return pfn;
	page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	pfn = 0;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || !page)
		goto out;
	/* a freshly allocated, read-only touched page maps the zero page */
	(void)page[0];
	if (pread(fd, &e, sizeof(e), ((uintptr_t)page / PAGE_SIZE) * 8) == sizeof(e) &&
	    (e & PM_PRESENT))
		pfn = e & PM_PFN_MASK;
out:
	if (fd >= 0)
		close(fd);
	return pfn;
}

static int scan_with_read(int fd, uint64_t start, uint64_t end, int what,
			  pagemap_cb cb, void *arg)
{
	uint64_t buf[4096], addr, run = 0, zpfn = pagemap_zero_pfn(), e;
	int want, in_run = 0;	/* not run != 0: a run may start at address 0 */
	size_t n, i;

	for (addr = start; addr < end; ) {
		n = min((end - addr) / PAGE_SIZE, ARRAY_SIZE(buf));
		if (read_full(fd, buf, n * 8, addr / PAGE_SIZE * 8))
			return -1;
		for (i = 0; i < n; i++, addr += PAGE_SIZE) {
			e = buf[i];
			if (what == PM_SCAN_GUARDS)
				want = !!(e & PM_GUARD);
			else
				want = (e & (PM_PRESENT | PM_SWAP)) && !(e & PM_GUARD) &&
				       !(what == PM_SCAN_ANON && (e & PM_FILE)) &&
				       !((e & PM_PRESENT) && zpfn &&
					 (e & PM_PFN_MASK) == zpfn);
			if (want && !in_run) {
				run = addr;
				in_run = 1;
			}
			if (!want && in_run) {
				if (cb(arg, run, addr))
					return -2;
				in_run = 0;
			}
		}
	}
	if (in_run && cb(arg, run, end))
		return -2;
	return 0;
}

int pagemap_scan(int fd, uint64_t start, uint64_t end, int what,
		 pagemap_cb cb, void *arg)
{
	int ret;

	if (scan_ioctl) {
		ret = scan_with_ioctl(fd, start, end, what, cb, arg);
		if (ret != -1)
			return ret ? -1 : 0;
		if (errno != ENOTTY && errno != EINVAL) {
			pr_perror("PAGEMAP_SCAN of %#lx-%#lx failed", start, end);
			return -1;
		}
		pr_info("No PAGEMAP_SCAN (before Linux 6.7): reading pagemap");
		scan_ioctl = 0;
	}
	ret = scan_with_read(fd, start, end, what, cb, arg);
	if (ret == -1)
		pr_perror("Can't read pagemap of %#lx-%#lx", start, end);
	return ret ? -1 : 0;
}
