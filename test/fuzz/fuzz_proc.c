// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the /proc parsers of criu/proc: the first input byte
 * picks the parser, the rest is the file's text as read_file() hands it
 * over (NUL-terminated, after any NUL bytes of its own).
 *
 * What the kernel writes is well-formed, but a parser that crashes, reads
 * out of bounds or overflows on a line it did not expect is a bug all the
 * same (a kernel of another version, a field that grew). Beyond what ASan
 * and UBSan see, a parse that succeeds must hold what its callers rely on:
 * areas page aligned and non-empty, strings terminated, counts within
 * their arrays, timers with a known notification.
 *
 * The pagemap reader (pagemap_scan on a file without PAGEMAP_SCAN, as on
 * Linux before 6.7) is checked against a model: the input is the pagemap
 * of a range of pages, the runs it reports must be exactly the maximal runs
 * of pages that hold data.
 *
 * Build and run: test/fuzz/build.sh, test/fuzz/run.sh [seconds].
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

enum {
	P_MAPS, P_STATUS, P_STAT, P_LIMITS, P_FDINFO, P_TIMERS, P_TIMENS,
	P_CHILDREN, P_NS_LINK, P_PAGEMAP, P_NR
};

#define MAX_PAGES	4096	/* one read of scan_with_read() and a bit */

static void die(const char *parser, const char *what)
{
	fprintf(stderr, "fuzz_proc: %s: %s\n", parser, what);
	abort();
}

static int terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void check_maps(char *buf)
{
	struct proc_maps maps;
	int i;

	if (proc_parse_maps(buf, &maps))
		return;
	if (maps.nr < 0 || (maps.nr && !maps.vma))
		die("maps", "a count without areas");
	for (i = 0; i < maps.nr; i++) {
		const struct proc_vma *v = &maps.vma[i];

		if (v->start >= v->end || (v->start | v->end) % PAGE_SIZE)
			die("maps", "an empty or unaligned area");
		if (v->prot & ~7u)
			die("maps", "protection bits beyond rwx");
		if (v->path && !v->path[0])
			die("maps", "an empty path instead of none");
	}
	proc_maps_free(&maps);
}

static void check_status(char *buf)
{
	struct proc_status st;

	if (proc_parse_status(buf, &st))
		return;
	if (!terminated(st.name, sizeof(st.name)))
		die("status", "Name not terminated");
	if (st.ngroups < 0 || (st.ngroups && !st.groups))
		die("status", "a count of groups without groups");
	if (st.ns_levels < 1)
		die("status", "no pid namespace level");
	proc_status_free(&st);
}

static void check_stat(const char *buf)
{
	struct proc_stat st;

	if (proc_parse_stat(buf, &st))
		return;
	if (!terminated(st.comm, sizeof(st.comm)))
		die("stat", "comm not terminated");
}

static void check_limits(const char *buf)
{
	struct proc_rlimit lim[RLIM_NLIMITS];
	int n, i;

	n = proc_parse_limits(buf, lim, RLIM_NLIMITS);
	if (n > RLIM_NLIMITS)
		die("limits", "more limits than the array holds");
	for (i = 0; i < n; i++)
		if (lim[i].resource < 0 || lim[i].resource >= RLIM_NLIMITS)
			die("limits", "a resource out of range");
}

static void check_timers(char *buf)
{
	struct proc_timer *t = NULL;
	int n, i, how;

	n = proc_parse_timers(buf, &t);
	if (n < 0)
		return;
	if (n && !t)
		die("timers", "a count without timers");
	for (i = 0; i < n; i++) {
		how = t[i].notify & ~4;	/* SIGEV_THREAD_ID */
		if (t[i].id < 0 || how < 0 || how > 2)
			die("timers", "a negative id or an unknown notification");
	}
	free(t);
}

static void check_children(const char *buf)
{
	pid_t *pids = NULL;
	int n;

	n = proc_parse_children(buf, &pids);
	if (n > 0 && !pids)
		die("children", "a count without pids");
	free(pids);
}

/* ---- pagemap: pagemap_scan() against a model of it ---- */

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_FILE		(1ULL << 61)
#define PM_GUARD	(1ULL << 58)
#define PM_PFN_MASK	((1ULL << 55) - 1)

struct runs {
	uint64_t r[MAX_PAGES][2];
	int nr;
};

static int collect(void *arg, uint64_t start, uint64_t end)
{
	struct runs *rs = arg;

	if (rs->nr == MAX_PAGES)
		die("pagemap", "more runs than pages");
	rs->r[rs->nr][0] = start;
	rs->r[rs->nr][1] = end;
	rs->nr++;
	return 0;
}

static int wanted(uint64_t e, int what, uint64_t zpfn)
{
	if (what == PM_SCAN_GUARDS)
		return !!(e & PM_GUARD);
	if (!(e & (PM_PRESENT | PM_SWAP)) || (e & PM_GUARD))
		return 0;
	if (what == PM_SCAN_ANON && (e & PM_FILE))
		return 0;
	return !((e & PM_PRESENT) && zpfn && (e & PM_PFN_MASK) == zpfn);
}

/*
 * Input: what, the first page's number (two bytes), then one pagemap entry
 * per page (8 bytes, little endian; an entry pointing at the zero page is
 * made from a byte with bit 7 set after the pfn).
 */
static void check_pagemap(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static struct runs got, want;
	uint64_t e[MAX_PAGES], first, start, end, zpfn = pagemap_zero_pfn();
	size_t n, i;
	int what;

	if (size < 3)
		return;
	if (fd < 0)
		fd = memfd_create("fuzz-pagemap", MFD_CLOEXEC);
	if (fd < 0)
		die("pagemap", "memfd_create failed");
	what = data[0] % 3;
	first = data[1] | data[2] << 8;
	n = min((size - 3) / 8, (size_t)MAX_PAGES);
	for (i = 0; i < n; i++) {
		memcpy(&e[i], data + 3 + i * 8, 8);
		/* the fuzzer can't guess this machine's zero pfn: bit 57 says "zero page" */
		if ((e[i] & (1ULL << 57)) && zpfn)
			e[i] = (e[i] & ~PM_PFN_MASK) | zpfn;
	}
	if (ftruncate(fd, 0) || pwrite(fd, e, n * 8, first * 8) != (ssize_t)(n * 8))
		die("pagemap", "can't write the memfd");
	start = first * PAGE_SIZE;
	end = start + n * PAGE_SIZE;

	want.nr = 0;
	for (i = 0; i < n; i++) {
		if (!wanted(e[i], what, zpfn))
			continue;
		if (want.nr && want.r[want.nr - 1][1] == start + i * PAGE_SIZE)
			want.r[want.nr - 1][1] += PAGE_SIZE;
		else
			collect(&want, start + i * PAGE_SIZE, start + (i + 1) * PAGE_SIZE);
	}
	got.nr = 0;
	if (pagemap_scan(fd, start, end, what, collect, &got))
		die("pagemap", "pagemap_scan failed on a readable file");
	if (got.nr != want.nr || memcmp(got.r, want.r, got.nr * sizeof(got.r[0]))) {
		fprintf(stderr, "fuzz_proc: pagemap: %d runs, want %d", got.nr, want.nr);
		for (i = 0; i < (size_t)got.nr; i++)
			fprintf(stderr, "%s%#llx-%#llx", i ? ", " : ": got ",
				(unsigned long long)got.r[i][0], (unsigned long long)got.r[i][1]);
		for (i = 0; i < (size_t)want.nr; i++)
			fprintf(stderr, "%s%#llx-%#llx", i ? ", " : "; want ",
				(unsigned long long)want.r[i][0], (unsigned long long)want.r[i][1]);
		fprintf(stderr, "\n");
		die("pagemap", "the runs differ from the model");
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* refusals are the common case: keep their log lines out of the way */
	if (!getenv("FUZZ_PROC_LOG")) {
		log_open(NULL, LOG_ERR);
		log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t mono, boot;
	char *buf;

	if (size < 1)
		return 0;
	if (data[0] % P_NR == P_PAGEMAP) {
		check_pagemap(data + 1, size - 1);
		return 0;
	}
	/* as read_file() returns it: the bytes, then a NUL */
	buf = malloc(size);
	if (!buf)
		abort();
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	switch (data[0] % P_NR) {
	case P_MAPS: check_maps(buf); break;
	case P_STATUS: check_status(buf); break;
	case P_STAT: check_stat(buf); break;
	case P_LIMITS: check_limits(buf); break;
	case P_FDINFO: {
		struct proc_fdinfo fi;
		struct proc_lock l;
		const char *p;

		proc_parse_fdinfo(buf, &fi);
		for (p = proc_next_lock(buf); p; p = proc_next_lock(p))
			if (!proc_parse_lock(p, &l) && (l.start < 0 || (l.end >= 0 && l.end < l.start)))
				die("fdinfo", "a lock's range is upside down");
		break;
	}
	case P_TIMERS: check_timers(buf); break;
	case P_TIMENS: proc_parse_timens_offsets(buf, &mono, &boot); break;
	case P_CHILDREN: check_children(buf); break;
	case P_NS_LINK: proc_parse_ns_link(buf); break;
	}
	free(buf);
	return 0;
}
