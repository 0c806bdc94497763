/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_PAGES_H
#define CRIU_PARTS_MM_PAGES_H

/*
 * The contents of private pages (mm-pages.c), the mm part's second half:
 * which are saved, where they are stored, how restore reads them back.
 * mm.c, which saves and maps the areas, calls it.
 */
#include "parts/part.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"
#include "parts/mm-jobs.h"

/* dump: fills @pm (and the guard regions of @mm) */
int mm_dump_pages(struct dump_ctx *dc, struct dtask *t, MmEntry *mm, PagemapEntry *pm);
/* once every task is dumped */
void mm_dump_pages_done(struct dump_ctx *dc);

/*
 * in criu: runs inside areas that take pages, stores that hold them; the
 * runs left in parent images are looked up there (@s gets every piece)
 */
int mm_check_pages(struct rst_ctx *rc, struct rtask *t, MmEntry *mm, PagemapEntry *pm,
		   struct mm_stores *s);
/* in criu, after @t's batch: the runs s->outside marks, written into the task */
int mm_fill_outside(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
		    PagemapEntry *pm);
/* in the new task: open the stores, as fds private to criu */
int mm_open_stores(struct rst_ctx *rc, struct rtask *t, PagemapEntry *pm,
		   struct mm_stores *s);
/* store @st of the images in @dirfd, opened for reading (criu lazy-pages too) */
int mm_store_open(int dirfd, const struct mm_store *st);
/* in the new task: reads of the runs from *run on that lie below @end */
int mm_queue_reads(struct batch *b, struct mm_stores *s, PagemapEntry *pm, uint64_t end,
		   size_t *run);
void mm_free_stores(struct mm_stores *s);

#endif
