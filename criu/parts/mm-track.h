/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_TRACK_H
#define CRIU_PARTS_MM_TRACK_H

/*
 * Which pages a task wrote since the previous dump round (pre-dump
 * --track-mem, dump --prev-images-dir): userfaultfd write-protection in
 * asynchronous mode, read and armed again with PAGEMAP_SCAN, the
 * userfaultfds kept between criu runs by a small tracker process
 * (mm-track.c; Documentation/pre-dump.md). mm-pages.c asks it, area by
 * area, whether a page may be left in the parent images.
 */
#include <stdint.h>
#include <sys/types.h>

#include "parts/part.h"
#include "pagemap.pb-c.h"

/* The areas of task @pid registered for write-protection are this dump's tracking. */
int mtrack_owns(pid_t pid);
/*
 * How many parent images this round's may read pages from at restore
 * (--prev-images-dir and its own parent links), 0 without a parent.
 */
int mtrack_depth(void);

/* Whether this kernel can track: 1, or 0 with why in *@why. */
int mtrack_supported(const char **why);

/*
 * Once per dump, before the tree is frozen: checks the options, opens the
 * previous images, links DIR/parent to them and takes the userfaultfds
 * over from the previous round's tracker. 0, or -1 logged.
 */
int mtrack_begin(const struct opts *o, int dirfd);
/*
 * Once per dump, at its end: a pre-dump that succeeded hands the
 * userfaultfds to a new tracker; anything else drops them, which ends the
 * tracking (the kernel unregisters the areas as the last fd closes).
 */
void mtrack_end(const struct opts *o, int dirfd, int ok);

struct mtrack_range {
	uint64_t start, end;
};

/* One task's tracking while its pages are dumped. */
struct mtrack_task {
	int on;			/* --track-mem */
	struct dtask *t;
	pid_t pid;
	int uffd;		/* -1: none yet */
	int fresh;		/* made this round (else: the previous round's) */
	int pmfd;		/* /proc/PID/pagemap */
	PagemapEntry *parent;	/* the previous round's pagemap, or NULL */
	size_t pcur;
	int tracked;		/* the area at hand was tracked since the previous round */
	struct mtrack_range *dirty;
	size_t nr_dirty, dcur;
	uint64_t clean;		/* bytes left in the parent images */
};

/* The task's tracking (@pmfd: its pagemap); 0, or -1 logged. */
int mtrack_task_start(struct dtask *t, int pmfd, struct mtrack_task *mt);
/*
 * Before the pages of area @start-@end are read: which were written since
 * the previous round (protected again), or, for an area not tracked,
 * registered and protected now. 0, or -1 logged.
 */
int mtrack_area(struct mtrack_task *mt, uint64_t start, uint64_t end);
/* Page @addr of the area at hand is unchanged and held by the parent images. */
int mtrack_in_parent(struct mtrack_task *mt, uint64_t addr);
void mtrack_task_end(struct mtrack_task *mt);

#endif
