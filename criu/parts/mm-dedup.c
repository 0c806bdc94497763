// SPDX-License-Identifier: GPL-2.0
/*
 * --auto-dedup: once a round's images are complete, the pages it stored
 * again are freed in the parent images that held the older copies (holes
 * punched in their pages-PID.img, which keep their size, so every offset
 * stays valid). Only what the newest images can no longer reach is freed:
 * a page of a parent's store is kept when another task of that parent
 * round points at it (in_pid: shared copy on write). The parents are no
 * checkpoints of their own afterwards (their freed pages read as zeros),
 * as with CRIU's --auto-dedup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/mm-dedup.h"
#include "pagemap.pb-c.h"

#define MAX_DEPTH	64

struct span {
	uint64_t start, end;
};

/* One level of the chain, for one task: its pagemap, where its runs are. */
struct dlevel {
	int dirfd;
	PagemapEntry *pm;
	uint64_t *off;		/* per run: its offset in the store (own runs) */
	struct span *refs;	/* bytes of its store other tasks point at */
	int nr_refs;
	int store;		/* pages-PID.img, opened for punching; -1 */
};

static int add_refs(struct dlevel *lv, const char *name, pid_t pid)
{
	PagemapEntry *pm;
	size_t i;
	int ret = -1;
	int id = atoi(name + strlen("pagemap-"));

	if (id == pid || img_read(lv->dirfd, IMG_PAGEMAP, id, (void **)&pm, 1) <= 0)
		return 0;
	for (i = 0; i < pm->n_runs; i++) {
		struct span *s;

		if (!pm->runs[i]->has_in_pid || pm->runs[i]->in_pid != (uint32_t)pid)
			continue;
		s = xpush(lv->refs, lv->nr_refs);
		if (!s)
			goto out;
		s->start = pm->runs[i]->in_off;
		s->end = s->start + (uint64_t)pm->runs[i]->nr_pages * PAGE_SIZE;
	}
	ret = 0;
out:
	img_free(IMG_PAGEMAP, pm);
	return ret;
}

/* Which bytes of @pid's store at this level other tasks' runs point at. */
static int find_refs(struct dlevel *lv, pid_t pid)
{
	int fd = openat(lv->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;
	struct dirent *de;
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		pr_perror("--auto-dedup: can't list the parent images");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (!ret && (de = readdir(d)))
		if (!strncmp(de->d_name, "pagemap-", 8))
			ret = add_refs(lv, de->d_name, pid);
	closedir(d);
	return ret;
}

static int load(struct dlevel *lv, int parent_dirfd, pid_t pid)
{
	char name[64];
	uint64_t off = 0;
	size_t i;

	lv->store = -1;
	lv->dirfd = openat(parent_dirfd, "parent", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lv->dirfd < 0)
		return 0;	/* the end of the chain */
	if (img_read(lv->dirfd, IMG_PAGEMAP, pid, (void **)&lv->pm, 1) <= 0)
		return 0;
	lv->off = xmalloc((lv->pm->n_runs + 1) * sizeof(*lv->off));
	if (!lv->off || find_refs(lv, pid))
		return -1;
	for (i = 0; i < lv->pm->n_runs; i++) {
		lv->off[i] = off;
		if (!lv->pm->runs[i]->has_in_pid && !lv->pm->runs[i]->in_parent)
			off += (uint64_t)lv->pm->runs[i]->nr_pages * PAGE_SIZE;
	}
	lv->store = openat(lv->dirfd, img_name(IMG_PAGES, pid, name, sizeof(name)),
			   O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (lv->store < 0) {
		pr_perror("--auto-dedup: can't open the parent's %s", name);
		return -1;
	}
	return 0;
}

/* Punches [off, end) of the level's store but what others point at. */
static int punch(struct dlevel *lv, uint64_t off, uint64_t end, uint64_t *freed)
{
	uint64_t from = off, to;
	int i;

	while (from < end) {
		to = end;
		for (i = 0; i < lv->nr_refs; i++) {
			if (lv->refs[i].start <= from && lv->refs[i].end > from) {
				from = lv->refs[i].end;
				i = -1;		/* look again from the new start */
				continue;
			}
			if (lv->refs[i].start > from && lv->refs[i].start < to)
				to = lv->refs[i].start;
		}
		if (from >= end)
			break;
		to = min(to, end);
		if (fallocate(lv->store, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from,
			      to - from)) {
			pr_perror("--auto-dedup: can't free pages of a parent store");
			return -1;
		}
		*freed += to - from;
		from = to;
	}
	return 0;
}

/* Frees [a, b) of @pid's memory at level @l and, where it said so, above. */
static int dedup(struct dlevel *lvs, int l, int dirfd, pid_t pid, uint64_t a, uint64_t b,
		 uint64_t *freed)
{
	struct dlevel *lv = &lvs[l];
	PagemapRun *r;
	uint64_t e, x, y;
	size_t i;

	if (l >= MAX_DEPTH)
		return 0;
	if (!lv->pm && !lv->dirfd && load(lv, dirfd, pid))
		return -1;
	if (!lv->pm)
		return 0;
	for (i = 0; i < lv->pm->n_runs; i++) {
		r = lv->pm->runs[i];
		e = r->vaddr + (uint64_t)r->nr_pages * PAGE_SIZE;
		if (e <= a || r->vaddr >= b)
			continue;
		x = max(a, r->vaddr);
		y = min(b, e);
		if (r->in_parent ? dedup(lvs, l + 1, lv->dirfd, pid, x, y, freed) :
		    r->has_in_pid ? 0 :
		    punch(lv, lv->off[i] + (x - r->vaddr), lv->off[i] + (y - r->vaddr), freed))
			return -1;
	}
	return 0;
}

static void unload(struct dlevel *lvs)
{
	int i;

	for (i = 0; i < MAX_DEPTH; i++) {
		if (lvs[i].pm)
			img_free(IMG_PAGEMAP, lvs[i].pm);
		if (lvs[i].dirfd > 0)
			close(lvs[i].dirfd);
		if (lvs[i].store >= 0 && lvs[i].pm)
			close(lvs[i].store);
		free(lvs[i].off);
		free(lvs[i].refs);
	}
}

int mm_dedup(int dirfd, pid_t pid, uint64_t *freed)
{
	struct dlevel lvs[MAX_DEPTH];
	PagemapEntry *pm;
	PagemapRun *r;
	size_t i;
	int ret = -1;

	if (img_read(dirfd, IMG_PAGEMAP, pid, (void **)&pm, 0) < 0)
		return -1;
	memset(lvs, 0, sizeof(lvs));
	for (i = 0; i < pm->n_runs; i++) {
		r = pm->runs[i];
		/* only what this round stored anew supersedes older copies */
		if (r->has_in_pid || r->in_parent)
			continue;
		if (dedup(lvs, 0, dirfd, pid, r->vaddr,
			  r->vaddr + (uint64_t)r->nr_pages * PAGE_SIZE, freed))
			goto out;
	}
	ret = 0;
out:
	unload(lvs);
	img_free(IMG_PAGEMAP, pm);
	return ret;
}
