/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_STATS_H
#define CRIU_IMAGE_STATS_H

#include <stdint.h>

/*
 * What a dump or a restore measured, written as CRIU writes it: stats-dump
 * and stats-restore in the work directory, u32 0x55105940 (a service
 * image), u32 0x57093306 (stats), u32 length, one StatsEntry (stats.proto).
 * containerd refuses a checkpoint without stats-dump; podman --print-stats
 * and CRIU's crit read them.
 */
#define STATS_SERVICE_MAGIC	0x55105940u
#define STATS_MAGIC		0x57093306u
#define STATS_DUMP_FILE		"stats-dump"
#define STATS_RESTORE_FILE	"stats-restore"

enum stat_counter {
	STAT_PAGES_SCANNED,		/* private pages that hold data */
	STAT_PAGES_SKIPPED_PARENT,	/* of those, stored once, in the parent's store */
	STAT_PAGES_WRITTEN,
	STAT_PAGES_RESTORED,
	STAT_NR_COUNTERS,
};

enum stat_time {
	STAT_FREEZING,		/* dump: seizing the tree */
	STAT_FROZEN,		/* dump: from frozen to let go or killed */
	STAT_MEMDUMP,		/* dump: the memory part */
	STAT_MEMWRITE,		/* dump: the final writes and syncfs */
	STAT_FORKING,		/* restore: until every task exists */
	STAT_RESTORE,		/* restore: all of it */
	STAT_NR_TIMES,
};

void stats_reset(void);
void stats_count(enum stat_counter c, uint64_t n);
void stats_set_time(enum stat_time t, int64_t ns);

/*
 * Writes stats-dump (@restore 0) or stats-restore into the directory @dirfd:
 * created anew (an older file or a link of that name is removed first,
 * never followed), 0600. @display: also log what it holds. A failure is
 * a warning: the dump or restore it describes is done.
 */
int stats_write(int dirfd, int restore, int display);

#endif
