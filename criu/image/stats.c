// SPDX-License-Identifier: GPL-2.0
/*
 * The stats files: CRIU's format, our numbers. The counters are plain
 * globals: dump and restore run once per criu process (a service worker is
 * a process of its own), and everything that counts runs in criu itself,
 * never in a task being restored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/stats.h"
#include "stats.pb-c.h"

static uint64_t counters[STAT_NR_COUNTERS];
static int64_t times[STAT_NR_TIMES];

void stats_reset(void)
{
	memset(counters, 0, sizeof(counters));
	memset(times, 0, sizeof(times));
}

void stats_count(enum stat_counter c, uint64_t n)
{
	counters[c] += n;
}

void stats_set_time(enum stat_time t, int64_t ns)
{
	times[t] = ns;
}

/* CRIU's times are microseconds in a u32: about 71 minutes at most. */
static uint32_t usec(enum stat_time t)
{
	int64_t us = times[t] / 1000;

	return us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* Level 0: always logged (--display-stats), else at info. */
#define pr_stats(display, fmt, ...) \
	log_msg((display) ? 0 : LOG_INFO, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

static void fill_dump(DumpStatsEntry *d, int display)
{
	d->freezing_time = usec(STAT_FREEZING);
	d->frozen_time = usec(STAT_FROZEN);
	d->memdump_time = usec(STAT_MEMDUMP);
	d->memwrite_time = usec(STAT_MEMWRITE);
	d->pages_scanned = counters[STAT_PAGES_SCANNED];
	d->pages_skipped_parent = counters[STAT_PAGES_SKIPPED_PARENT];
	d->pages_written = counters[STAT_PAGES_WRITTEN];
	d->pages_lazy = 0;
	pr_stats(display, "Dump stats: freezing %u us, frozen %u us, memdump %u us, memwrite %u us, "
		"pages scanned %lu, skipped (parent's) %lu, written %lu",
		d->freezing_time, d->frozen_time, d->memdump_time, d->memwrite_time,
		d->pages_scanned, d->pages_skipped_parent, d->pages_written);
}

static void fill_restore(RestoreStatsEntry *r, int display)
{
	r->pages_compared = 0;
	r->pages_skipped_cow = 0;
	r->forking_time = usec(STAT_FORKING);
	r->restore_time = usec(STAT_RESTORE);
	r->has_pages_restored = 1;
	r->pages_restored = counters[STAT_PAGES_RESTORED];
	pr_stats(display, "Restore stats: forking %u us, restore %u us, pages restored %lu",
		r->forking_time, r->restore_time, r->pages_restored);
}

static int write_file(int dirfd, const char *name, const uint8_t *buf, size_t len)
{
	int fd;

	/* a link planted under the name is removed, never written through */
	fd = create_file_at(dirfd, name, O_WRONLY);
	if (fd < 0) {
		pr_warn("Can't create %s: %s", name, strerror(errno));
		return -1;
	}
	if (write_full(fd, buf, len)) {
		pr_warn("Can't write %s: %s", name, strerror(errno));
		close(fd);
		unlinkat(dirfd, name, 0);
		return -1;
	}
	close(fd);
	return 0;
}

int stats_write(int dirfd, int restore, int display)
{
	DumpStatsEntry d = DUMP_STATS_ENTRY__INIT;
	RestoreStatsEntry r = RESTORE_STATS_ENTRY__INIT;
	StatsEntry e = STATS_ENTRY__INIT;
	const char *name = restore ? STATS_RESTORE_FILE : STATS_DUMP_FILE;
	uint32_t hdr[3] = { STATS_SERVICE_MAGIC, STATS_MAGIC, 0 };
	uint8_t *buf;
	size_t len;
	int ret;

	if (restore) {
		fill_restore(&r, display);
		e.restore = &r;
	} else {
		fill_dump(&d, display);
		e.dump = &d;
	}
	len = stats_entry__get_packed_size(&e);
	hdr[2] = len;
	buf = xmalloc(sizeof(hdr) + len);
	if (!buf)
		return -1;
	memcpy(buf, hdr, sizeof(hdr));
	stats_entry__pack(&e, buf + sizeof(hdr));
	ret = write_file(dirfd, name, buf, sizeof(hdr) + len);
	free(buf);
	return ret;
}
