// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of private memory: which pages are saved, where they are
 * stored and how restore reads them back.
 *
 * Dump asks pagemap which pages hold data and copies them with
 * process_vm_readv into the task's raw page store (pages-PID.img). A child
 * forked from its parent shares the pages neither has written since, copy
 * on write: for each of its present pages that is still the very physical
 * page its parent had at the same address (the PFN pagemap showed for the
 * parent's page when it was saved), the child's pagemap points into the
 * store that already holds the parent's copy instead of storing it again.
 * Parents are dumped before their children. Restore reads every run with
 * one pread() from whichever store holds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/sums.h"
#include "image/pagestore.h"
#include "image/stats.h"
#include "image/imgout.h"
#include "core/opts.h"
#include "parts/mm-jobs.h"
#include "parts/mm-pages.h"
#include "parts/mm-track.h"
#include "parts/mm-vma.h"

/* Linux 5.14; Debian 12's headers have it, older ones may not. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define IOV_BATCH	512
/* read at once at most, so that its checksum is taken while it is in the cache */
#define READ_PIECE	(256U << 10)
#define PFN_BATCH	4096		/* pagemap entries read at once */
#define MAX_RUN_PAGES	(1U << 31)

#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)	/* mapped by this task only */
#define PM_PFN_MASK	((1ULL << 55) - 1)

/* ---------------------------------------------------------------- dump */

/* Where a task's pages ended up: what its children's pagemaps may point at. */
struct stored_run {
	uint64_t vaddr;
	uint64_t nr_pages;
	pid_t owner;		/* whose pages-PID.img holds them (image pid) */
	uint64_t off;		/* and where */
	size_t first;		/* its first page in stored_task.pfns */
};

struct stored_task {
	pid_t pid;		/* image pid */
	struct stored_run *runs;
	size_t nr;
	uint64_t *pfns;		/* per page of the runs: its PFN before it was read */
};

struct mm_tree {
	struct stored_task *tasks;
	int nr;
	uint64_t shared_bytes;	/* pages not stored again, the whole tree */
	struct pstore *ps;	/* one writer for every task's store */
};

/* Collects runs of pages to save and copies them into the page store. */
struct page_writer {
	pid_t pid;
	int memfd;		/* /proc/PID/mem, for areas we can't read directly */
	struct pstore *out;
	uint8_t *buf;
	size_t used;
	struct iovec liov[IOV_BATCH], riov[IOV_BATCH];
	int niov;
	size_t queued;		/* bytes the iovecs ask for */
	int via_mem;		/* they are read through /proc/PID/mem */
	int readable;		/* the area at hand is readable */
	int vma_start;		/* a run must not grow across areas */
	PagemapRun **runs;
	size_t nr_runs, max_runs;
	uint64_t total;
	int pmfd;		/* /proc/PID/pagemap */
	uint64_t *chunk;	/* pagemap entries of the pages at hand */
	uint64_t *pfns;		/* every page's PFN, in run order */
	size_t nr_pfns, max_pfns;
	const struct stored_task *parent;
	size_t hint;		/* the parent's run last found */
	uint64_t shared;
	struct mtrack_task mt;	/* --track-mem: what the previous round holds */
	struct page_plan *plan;	/* --jobs: the pages are planned here, copied after */
	int jobs;
};

/* pw_add_run's owner of pages the previous round's images hold */
#define IN_PARENT	((pid_t)-1)

/*
 * Reads what the iovecs ask for into the buffer. process_vm_readv pins the
 * pages it reads, and a read-only pin of a page shared copy-on-write makes
 * the kernel give the task a copy of its own first: a tree left running
 * would pay for every page a parent shares with its children once more.
 * Those pages, and those of areas that can't be read, go through
 * /proc/PID/mem, which copies without pinning.
 */
static int pw_read(struct page_writer *w)
{
	ssize_t n;
	int i;

	if (!w->niov)
		return 0;
	if (!w->via_mem) {
		n = process_vm_readv(w->pid, w->liov, w->niov, w->riov, w->niov, 0);
		if (n != (ssize_t)w->queued) {
			pr_perror("Task %d: can't read its memory at %p (%zd of %zu bytes)",
				  w->pid, w->riov[0].iov_base, n, w->queued);
			return -1;
		}
	} else {
		for (i = 0; i < w->niov; i++)
			if (read_full(w->memfd, w->liov[i].iov_base, w->liov[i].iov_len,
				      (off_t)(uintptr_t)w->riov[i].iov_base)) {
				pr_perror("Task %d: can't read its memory at %p", w->pid,
					  w->riov[i].iov_base);
				return -1;
			}
	}
	/* the iovecs filled the buffer in one run, from the first on */
	pstore_sum(w->out, w->liov[0].iov_base, w->queued);
	w->niov = 0;
	w->queued = 0;
	return 0;
}

/* Hands the full (or last) buffer to the store's writer. */
static int pw_submit(struct page_writer *w)
{
	if (pw_read(w))
		return -1;
	if (!w->used)
		return 0;
	pstore_submit(w->out, w->used);
	w->buf = pstore_buf(w->out);
	if (!w->buf)
		return -1;
	w->total += w->used;
	w->used = 0;
	return 0;
}

/*
 * A run of @start-@end, stored here (@owner 0), in @owner's store at @off,
 * or in the parent images (IN_PARENT).
 */
static int pw_add_run(struct page_writer *w, uint64_t start, uint64_t end, pid_t owner,
		      uint64_t off)
{
	PagemapRun *r, **n, *last = w->nr_runs ? w->runs[w->nr_runs - 1] : NULL;
	uint64_t pages = (end - start) / PAGE_SIZE;
	int first = w->vma_start;

	w->vma_start = 0;
	if (!first && last && last->vaddr + (uint64_t)last->nr_pages * PAGE_SIZE == start &&
	    last->nr_pages + pages < MAX_RUN_PAGES &&
	    (owner == IN_PARENT ? last->in_parent :
	     !last->in_parent && last->in_pid == (uint32_t)owner) &&
	    (owner <= 0 || last->in_off + (uint64_t)last->nr_pages * PAGE_SIZE == off)) {
		last->nr_pages += pages;
		return 0;
	}
	if (w->nr_runs == w->max_runs) {
		w->max_runs = w->max_runs ? w->max_runs * 2 : 256;
		n = xrealloc(w->runs, w->max_runs * sizeof(*n));
		if (!n)
			return -1;
		w->runs = n;
	}
	r = xmalloc(sizeof(*r));
	if (!r)
		return -1;
	pagemap_run__init(r);
	r->vaddr = start;
	r->nr_pages = pages;
	if (owner == IN_PARENT) {
		r->has_in_parent = r->in_parent = 1;
	} else if (owner) {
		r->has_in_pid = r->has_in_off = 1;
		r->in_pid = owner;
		r->in_off = off;
	}
	w->runs[w->nr_runs++] = r;
	return 0;
}

/* Queues @start-@end (@shared: pages other tasks map too) for the store. */
static int pw_store(struct page_writer *w, uint64_t start, uint64_t end, int shared)
{
	int via_mem = shared || !w->readable;
	size_t len;

	if (pw_add_run(w, start, end, 0, 0))
		return -1;
	if (w->plan) {
		w->total += end - start;
		return page_plan_add(w->plan, start, end - start, via_mem);
	}
	if (w->niov && via_mem != w->via_mem && pw_read(w))
		return -1;
	w->via_mem = via_mem;
	while (start < end) {
		len = min(end - start, min(PSTORE_BUF - w->used, READ_PIECE - w->queued));
		w->liov[w->niov].iov_base = w->buf + w->used;
		w->liov[w->niov].iov_len = len;
		w->riov[w->niov].iov_base = (void *)start;
		w->riov[w->niov].iov_len = len;
		w->niov++;
		w->used += len;
		w->queued += len;
		start += len;
		if (w->used == PSTORE_BUF ? pw_submit(w) :
		    w->niov == IOV_BATCH || w->queued >= READ_PIECE ? pw_read(w) : 0)
			return -1;
	}
	return 0;
}

/* The parent's page at @addr, if it was saved: where it is, its PFN then. */
static int parent_page(struct page_writer *w, uint64_t addr, pid_t *owner, uint64_t *off,
		       uint64_t *pfn)
{
	const struct stored_task *p = w->parent;
	const struct stored_run *r;
	size_t lo = 0, hi = p->nr;

	r = w->hint < p->nr ? &p->runs[w->hint] : NULL;
	if (!r || addr < r->vaddr || addr >= r->vaddr + r->nr_pages * PAGE_SIZE) {
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (p->runs[mid].vaddr + p->runs[mid].nr_pages * PAGE_SIZE <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == p->nr || addr < p->runs[lo].vaddr)
			return 0;
		w->hint = lo;
		r = &p->runs[lo];
	}
	if (r->owner == IN_PARENT)
		return 0;
	*owner = r->owner;
	*off = r->off + (addr - r->vaddr);
	*pfn = p->pfns[r->first + (addr - r->vaddr) / PAGE_SIZE];
	return 1;
}

static int keep_pfns(struct page_writer *w, size_t n)
{
	uint64_t *p;
	size_t i;

	if (w->nr_pfns + n > w->max_pfns) {
		w->max_pfns = max(w->max_pfns * 2, w->nr_pfns + n);
		p = xrealloc(w->pfns, w->max_pfns * sizeof(*p));
		if (!p)
			return -1;
		w->pfns = p;
	}
	for (i = 0; i < n; i++)
		w->pfns[w->nr_pfns++] = (w->chunk[i] & PM_PRESENT) ? w->chunk[i] & PM_PFN_MASK : 0;
	return 0;
}

/* Ends the segment @seg-@end of pages that go to the same place. */
static int pw_flush_seg(struct page_writer *w, uint64_t seg, uint64_t end, pid_t owner,
			uint64_t off, int shared)
{
	if (owner > 0)
		w->shared += end - seg;
	return owner ? pw_add_run(w, seg, end, owner, off) : pw_store(w, seg, end, shared);
}

/*
 * Pages of @start-@end: those not written since the previous round
 * (--track-mem) are left in the parent images; the task's own are
 * stored; those that are still the very physical page its parent had at
 * the same address (copy on write, written by neither since the fork)
 * point to the parent's copy.
 *
 * The parent's PFNs are the ones pagemap showed before its pages were
 * read; reading shared pages does not move them (pw_read), and where a
 * page did move in between, it is only stored twice.
 */
static int pw_cb(void *arg, uint64_t start, uint64_t end)
{
	struct page_writer *w = arg;
	uint64_t addr, seg = start, seg_off = 0, off, pfn, c, n, i;
	pid_t seg_owner = 0, owner;
	int seg_shared = 0, shared;

	for (addr = start; addr < end; ) {
		n = min((end - addr) / PAGE_SIZE, (uint64_t)PFN_BATCH);
		if (read_full(w->pmfd, w->chunk, n * 8, addr / PAGE_SIZE * 8)) {
			pr_perror("Task %d: can't read pagemap at %#lx", w->pid, addr);
			return -1;
		}
		if (keep_pfns(w, n))
			return -1;
		for (i = 0; i < n; i++, addr += PAGE_SIZE) {
			c = (w->chunk[i] & PM_PRESENT) ? w->chunk[i] & PM_PFN_MASK : 0;
			shared = !(w->chunk[i] & PM_EXCLUSIVE);
			owner = 0;
			off = 0;
			if (mtrack_in_parent(&w->mt, addr))
				owner = IN_PARENT;
			else if (c && w->parent && (!parent_page(w, addr, &owner, &off, &pfn) ||
						    pfn != c))
				owner = 0;
			if (addr != seg && (owner != seg_owner ||
			    (owner > 0 ? off != seg_off + (addr - seg) :
			     !owner && shared != seg_shared))) {
				if (pw_flush_seg(w, seg, addr, seg_owner, seg_off, seg_shared))
					return -1;
				seg = addr;
			}
			if (addr == seg) {
				seg_owner = owner;
				seg_off = off;
				seg_shared = shared;
			}
		}
	}
	return pw_flush_seg(w, seg, end, seg_owner, seg_off, seg_shared);
}

static int guard_cb(void *arg, uint64_t start, uint64_t end)
{
	MmEntry *mm = arg;
	GuardRange *g;

	if (xgrow(mm->guards, mm->n_guards))
		return -1;
	g = xmalloc(sizeof(*g));
	if (!g)
		return -1;
	guard_range__init(g);
	g->start = start;
	g->nr_pages = (end - start) / PAGE_SIZE;
	mm->guards[mm->n_guards++] = g;
	return 0;
}

static struct mm_tree *tree_state(struct dump_ctx *dc)
{
	if (!dc->shared[PART_MM])
		dc->shared[PART_MM] = xzalloc(sizeof(struct mm_tree));
	return dc->shared[PART_MM];
}

/* Remembers where @pid's pages went (and their PFNs), for its children. */
static int remember(struct mm_tree *tr, pid_t pid, PagemapEntry *pm, struct page_writer *w)
{
	struct stored_task *s;
	uint64_t off = 0;
	size_t i, first = 0;

	s = xpush(tr->tasks, tr->nr);
	if (!s)
		return -1;
	s->pid = pid;
	s->nr = pm->n_runs;
	s->pfns = w->pfns;
	w->pfns = NULL;
	s->runs = xmalloc((pm->n_runs + 1) * sizeof(*s->runs));
	if (!s->runs)
		return -1;
	for (i = 0; i < pm->n_runs; i++) {
		PagemapRun *r = pm->runs[i];

		s->runs[i].vaddr = r->vaddr;
		s->runs[i].nr_pages = r->nr_pages;
		s->runs[i].first = first;
		first += r->nr_pages;
		if (r->in_parent) {
			s->runs[i].owner = IN_PARENT;
		} else if (r->has_in_pid) {
			s->runs[i].owner = r->in_pid;
			s->runs[i].off = r->in_off;
		} else {
			s->runs[i].owner = pid;
			s->runs[i].off = off;
			off += (uint64_t)r->nr_pages * PAGE_SIZE;
		}
	}
	return 0;
}

static const struct stored_task *find_stored(struct mm_tree *tr, pid_t pid)
{
	int i;

	for (i = 0; i < tr->nr; i++)
		if (tr->tasks[i].pid == pid)
			return &tr->tasks[i];
	return NULL;
}

/*
 * One job, or a page server's stream: the pages go through the tree's
 * pstore as they are read. Several: they are planned as the pagemap is
 * read and copied by mm_jobs_copy() after (mm-jobs.h).
 */
static int pw_open(struct dump_ctx *dc, struct dtask *t, struct mm_tree *tr,
		   struct page_writer *w, struct page_plan *plan)
{
	w->jobs = imgout_remote() ? 1 : mm_jobs(dc->opts, t->pid);
	if (w->jobs > 1) {
		w->plan = plan;
		return 0;
	}
	if ((!tr->ps && !(tr->ps = pstore_new())) || pstore_open(tr->ps, dc->dirfd, t->ns_pid))
		return -1;
	w->out = tr->ps;
	w->buf = pstore_buf(w->out);
	return w->buf ? 0 : -1;
}

/* Every page read and stored, the store closed. */
static int pw_finish(struct dump_ctx *dc, struct dtask *t, struct page_writer *w)
{
	int ret;

	if (w->plan)
		return mm_jobs_copy(t->pid, w->memfd, w->plan, dc->dirfd, t->ns_pid, w->jobs);
	if (pw_submit(w))
		return -1;
	ret = pstore_flush(w->out, NULL);
	w->out = NULL;
	return ret;
}

int mm_dump_pages(struct dump_ctx *dc, struct dtask *t, MmEntry *mm, PagemapEntry *pm)
{
	struct page_writer w = { .pid = t->pid, .memfd = -1, .pmfd = -1 };
	struct mm_tree *tr = tree_state(dc);
	struct page_plan plan = { 0 };
	const struct proc_vma *v;
	char path[64];
	int i, ret = -1;

	if (!tr)
		return -1;
	/* parents are dumped before their children */
	if (t->parent && !t->parent->zombie)
		w.parent = find_stored(tr, t->parent->ns_pid);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	w.pmfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/mem", t->pid);
	w.memfd = open(path, O_RDONLY | O_CLOEXEC);
	w.chunk = xmalloc(PFN_BATCH * sizeof(uint64_t));
	if (w.pmfd < 0 || w.memfd < 0 || pw_open(dc, t, tr, &w, &plan) || !w.chunk) {
		pr_perror("Task %d: can't open pagemap, mem or the page store", t->pid);
		goto out;
	}
	if (mtrack_task_start(t, w.pmfd, &w.mt))
		goto out;
	for (i = 0; i < t->maps.nr; i++) {
		v = &t->maps.vma[i];
		if (!vma_has_pages(v))
			continue;
		w.readable = !!(v->prot & PROT_READ);
		w.vma_start = 1;
		if (mtrack_area(&w.mt, v->start, v->end))
			goto out;
		if (pagemap_scan(w.pmfd, v->start, v->end,
				 vma_is_anon(v) ? PM_SCAN_DATA : PM_SCAN_ANON, pw_cb, &w))
			goto out;
		if (pagemap_scan(w.pmfd, v->start, v->end, PM_SCAN_GUARDS, guard_cb, mm))
			goto out;
	}
	if (pw_finish(dc, t, &w))
		goto out;
	pm->pages_size = w.total;
	pm->runs = w.runs;
	pm->n_runs = w.nr_runs;
	w.runs = NULL;
	if (remember(tr, t->ns_pid, pm, &w))
		goto out;
	tr->shared_bytes += w.shared;
	stats_count(STAT_PAGES_WRITTEN, w.total / PAGE_SIZE);
	stats_count(STAT_PAGES_SKIPPED_PARENT, w.shared / PAGE_SIZE);
	stats_count(STAT_PAGES_SCANNED, (w.total + w.shared) / PAGE_SIZE);
	stats_count(STAT_PAGES_SKIPPED_PARENT, w.mt.clean / PAGE_SIZE);
	stats_count(STAT_PAGES_SCANNED, w.mt.clean / PAGE_SIZE);
	pr_info("Task %d: %lu bytes of memory in %zu runs, %lu more shared with its parent, "
		"%lu unchanged since the previous round", t->pid, w.total, w.nr_runs, w.shared,
		w.mt.clean);
	ret = 0;
out:
	if (w.runs) {
		while (w.nr_runs)
			free(w.runs[--w.nr_runs]);
		free(w.runs);
	}
	if (w.out)
		pstore_flush(w.out, NULL);
	if (w.memfd >= 0)
		close(w.memfd);
	if (w.pmfd >= 0)
		close(w.pmfd);
	mtrack_task_end(&w.mt);
	page_plan_free(&plan);
	free(w.chunk);
	free(w.pfns);
	return ret;
}

void mm_dump_pages_done(struct dump_ctx *dc)
{
	struct mm_tree *tr = dc->shared[PART_MM];
	int i;

	if (!tr)
		return;
	if (tr->shared_bytes)
		pr_info("%lu bytes of memory shared by parents and children, stored once",
			tr->shared_bytes);
	for (i = 0; i < tr->nr; i++) {
		free(tr->tasks[i].runs);
		free(tr->tasks[i].pfns);
	}
	pstore_free(tr->ps);
	free(tr->tasks);
	free(tr);
	dc->shared[PART_MM] = NULL;
}

/* ------------------------------------------------------------- restore */

/* How many parents deep a chain of pre-dumps may go. */
#define MAX_LEVELS	64

/* A pagemap of the chain, with where each of its own runs starts in its store. */
struct level_pm {
	int dirfd;
	PagemapEntry *pm;
	uint64_t *off;		/* per run: its offset in pages-PID.img (own runs) */
};

/* The images @level parents up ("parent/parent/..."), or -1 logged. */
static int open_level(int dirfd, int level)
{
	char path[MAX_LEVELS * 7 + 1] = "";
	int i, fd;

	for (i = 0; i < level; i++)
		strcat(path, i ? "/parent" : "parent");
	fd = openat(dirfd, level ? path : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		pr_perror("Can't open the parent images %s", path);
	return fd;
}

static int load_level(struct rst_ctx *rc, struct rtask *t, struct level_pm *lv, int level)
{
	uint64_t off = 0;
	size_t i;

	if (lv->pm)
		return 0;
	if (level >= MAX_LEVELS) {
		pr_err("Task %d: its pages lie more than %d parent images deep", t->pid,
		       MAX_LEVELS);
		return -1;
	}
	lv->dirfd = open_level(rc->dirfd, level);
	if (lv->dirfd < 0 || img_read(lv->dirfd, IMG_PAGEMAP, t->pid, (void **)&lv->pm, 0) < 0)
		return -1;
	lv->off = xmalloc((lv->pm->n_runs + 1) * sizeof(*lv->off));
	if (!lv->off)
		return -1;
	for (i = 0; i < lv->pm->n_runs; i++) {
		lv->off[i] = off;
		if (!lv->pm->runs[i]->has_in_pid && !lv->pm->runs[i]->in_parent)
			off += (uint64_t)lv->pm->runs[i]->nr_pages * PAGE_SIZE;
	}
	return 0;
}

/* The store of @pid @level parents up, in s->st; its index, or -1. */
static int store_idx(struct rst_ctx *rc, struct mm_stores *s, struct level_pm *lv, int level,
		     pid_t pid)
{
	struct mm_store *st;
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->st[i].level == level && s->st[i].pid == pid)
			return i;
	st = xpush(s->st, s->nr);
	if (!st)
		return -1;
	st->level = level;
	st->pid = pid;
	st->fd = -1;
	st->size = img_raw_size(level ? lv[level].dirfd : rc->dirfd, IMG_PAGES, pid);
	return st->size < 0 ? -1 : s->nr - 1;
}

static int add_src(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
		   struct level_pm *lv, int level, pid_t pid, uint64_t vaddr, uint64_t len,
		   uint64_t off)
{
	struct page_src *p;
	int idx = store_idx(rc, s, lv, level, pid);

	if (idx < 0)
		return -1;
	if (off + len > (uint64_t)s->st[idx].size || off + len < len) {
		pr_err("Task %d: its pages at %#lx lie past the end of pages-%d.img %d "
		       "parent(s) up", t->pid, vaddr, pid, level);
		return -1;
	}
	p = xpush(s->src, s->nr_src);
	if (!p)
		return -1;
	p->vaddr = vaddr;
	p->len = len;
	p->store = idx;
	p->off = off;
	return 0;
}

/* Where run @r of level @level's pagemap is, for @vaddr-@end within it. */
static int resolve(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
		   struct level_pm *lv, int level, size_t ri, uint64_t vaddr, uint64_t end);

/* @vaddr-@end, marked as in the parent of @level: found there, piece by piece. */
static int resolve_parent(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
			  struct level_pm *lv, int level, uint64_t vaddr, uint64_t end)
{
	PagemapEntry *pm;
	PagemapRun *r;
	size_t i;
	uint64_t e;

	if (load_level(rc, t, &lv[level + 1], level + 1))
		return -1;
	pm = lv[level + 1].pm;
	for (i = 0; i < pm->n_runs && vaddr < end; i++) {
		r = pm->runs[i];
		e = r->vaddr + (uint64_t)r->nr_pages * PAGE_SIZE;
		if (e <= vaddr)
			continue;
		if (r->vaddr > vaddr)
			break;
		if (resolve(rc, t, s, lv, level + 1, i, vaddr, min(e, end)))
			return -1;
		vaddr = min(e, end);
	}
	if (vaddr < end) {
		pr_err("Task %d: its pages at %#lx are marked as in the parent images, "
		       "which lack them (%d parent(s) up)", t->pid, vaddr, level + 1);
		return -1;
	}
	return 0;
}

static int resolve(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
		   struct level_pm *lv, int level, size_t ri, uint64_t vaddr, uint64_t end)
{
	PagemapRun *r = lv[level].pm->runs[ri];
	uint64_t delta = vaddr - r->vaddr;

	if (r->in_parent)
		return resolve_parent(rc, t, s, lv, level, vaddr, end);
	if (r->has_in_pid)
		return add_src(rc, t, s, lv, level, r->in_pid, vaddr, end - vaddr,
			       r->in_off + delta);
	return add_src(rc, t, s, lv, level, t->pid, vaddr, end - vaddr, lv[level].off[ri] + delta);
}

/* Every run's pieces, in s->src (run i's from s->first[i] on). */
static int resolve_all(struct rst_ctx *rc, struct rtask *t, PagemapEntry *pm,
		       struct mm_stores *s)
{
	struct level_pm lv[MAX_LEVELS + 1];
	int ret = -1, i;
	size_t ri;

	memset(lv, 0, sizeof(lv));
	lv[0].pm = pm;
	lv[0].dirfd = -1;
	s->first = xmalloc((pm->n_runs + 1) * sizeof(*s->first));
	lv[0].off = xmalloc((pm->n_runs + 1) * sizeof(uint64_t));
	if (!s->first || !lv[0].off)
		goto out;
	for (ri = 0, lv[0].off[0] = 0; ri < pm->n_runs; ri++)
		lv[0].off[ri + 1] = lv[0].off[ri] + (pm->runs[ri]->has_in_pid ||
			pm->runs[ri]->in_parent ? 0 : (uint64_t)pm->runs[ri]->nr_pages * PAGE_SIZE);
	for (ri = 0; ri < pm->n_runs; ri++) {
		s->first[ri] = s->nr_src;
		if (resolve(rc, t, s, lv, 0, ri, pm->runs[ri]->vaddr, pm->runs[ri]->vaddr +
			    (uint64_t)pm->runs[ri]->nr_pages * PAGE_SIZE))
			goto out;
	}
	s->first[pm->n_runs] = s->nr_src;
	ret = 0;
out:
	free(lv[0].off);
	for (i = 1; i <= MAX_LEVELS; i++) {
		if (lv[i].pm)
			img_free(IMG_PAGEMAP, lv[i].pm);
		if (lv[i].pm || lv[i].dirfd > 0)
			close(lv[i].dirfd);
		free(lv[i].off);
	}
	return ret;
}

/*
 * --jobs: which runs criu writes from outside, with several threads,
 * after the task's batch (mm-jobs.h). Only those of private anonymous
 * areas left writable: nothing but these pages goes there, and
 * process_vm_writev() may write them with the area's final protection.
 * A task with little of that memory reads it all itself, as with one job.
 */
static int pick_outside(struct rst_ctx *rc, struct rtask *t, MmEntry *mm, PagemapEntry *pm,
			struct mm_stores *s)
{
	uint64_t bytes = 0;
	size_t i, j = 0;
	VmaEntry *v;

	/*
	 * --lazy-pages: the daemon fills the lazy areas, the task reads the
	 * rest; the daemon itself (no options) only looks the pages up
	 */
	if (!rc->opts || rc->opts->lazy_pages)
		return 0;
	s->jobs = mm_jobs(rc->opts, 0);
	if (s->jobs < 2 || !pm->n_runs)
		return 0;
	s->outside = xzalloc(pm->n_runs);
	if (!s->outside)
		return -1;
	for (i = 0; i < pm->n_runs; i++) {
		while (mm->vmas[j]->end <= pm->runs[i]->vaddr)
			j++;	/* mm_check_pages: every run lies in an area */
		v = mm->vmas[j];
		if (v->kind != VMA_KIND__VMA_ANON_PRIVATE || !(v->prot & PROT_WRITE))
			continue;
		s->outside[i] = 1;
		bytes += (uint64_t)pm->runs[i]->nr_pages * PAGE_SIZE;
	}
	if (bytes < MM_FILL_MIN) {
		free(s->outside);
		s->outside = NULL;
		return 0;
	}
	s->outside_bytes = bytes;
	pr_info("Task %d: %lu bytes of its memory to be written by %d threads", t->pid, bytes,
		s->jobs);
	return 0;
}

/* Runs must lie in areas whose pages are saved, stores must hold them. */
int mm_check_pages(struct rst_ctx *rc, struct rtask *t, MmEntry *mm, PagemapEntry *pm,
		   struct mm_stores *s)
{
	uint64_t prev_end = 0, total = 0, len, size, pages = 0;
	size_t i, j = 0;
	PagemapRun *r;

	for (i = 0; i < pm->n_runs; i++) {
		r = pm->runs[i];
		len = (uint64_t)r->nr_pages * PAGE_SIZE;
		while (j < mm->n_vmas && mm->vmas[j]->end <= r->vaddr)
			j++;
		if (!r->nr_pages || (r->vaddr & ~PAGE_MASK) || r->vaddr < prev_end ||
		    r->vaddr + len < r->vaddr || j == mm->n_vmas ||
		    r->vaddr < mm->vmas[j]->start || r->vaddr + len > mm->vmas[j]->end ||
		    !vma_entry_has_pages(mm->vmas[j]) || r->has_in_pid != r->has_in_off ||
		    (r->in_parent && r->has_in_pid) ||
		    (r->has_in_pid && (r->in_pid == (uint32_t)t->pid || !r->in_pid ||
				       (r->in_off & ~PAGE_MASK)))) {
			pr_err("Task %d: image pagemap run #%zu (%#lx, %u pages) is outside "
			       "any area", t->pid, i, r->vaddr, r->nr_pages);
			return -1;
		}
		prev_end = r->vaddr + len;
		pages += r->nr_pages;
		if (!r->has_in_pid && !r->in_parent)
			total += len;
	}
	if (total != pm->pages_size) {
		pr_err("Task %d: image pagemap lists %lu bytes, its header says %lu",
		       t->pid, total, pm->pages_size);
		return -1;
	}
	size = img_raw_size(rc->dirfd, IMG_PAGES, t->pid);
	if ((int64_t)size < 0)
		return -1;
	if (size != total) {
		pr_err("Image pages-%d.img is %s: %lu bytes, pagemap needs %lu", t->pid,
		       size < total ? "truncated" : "corrupted", size, total);
		return -1;
	}
	if (resolve_all(rc, t, pm, s) || pick_outside(rc, t, mm, pm, s))
		return -1;
	stats_count(STAT_PAGES_RESTORED, pages);
	return 0;
}

int mm_store_open(int dirfd, const struct mm_store *st)
{
	char name[64];
	int fd;

	if (!st->level)
		return img_open_raw(dirfd, IMG_PAGES, st->pid, 0);
	/* the parents' stores: no checksums of theirs are at hand */
	dirfd = open_level(dirfd, st->level);
	if (dirfd < 0)
		return -1;
	fd = img_open_read(dirfd, img_name(IMG_PAGES, st->pid, name, sizeof(name)));
	if (fd < 0)
		pr_perror("Can't open image %s %d parent(s) up", name, st->level);
	close(dirfd);
	return fd;
}

static int open_store(struct rst_ctx *rc, struct rtask *t, struct mm_store *st)
{
	int fd = mm_store_open(rc->dirfd, st);

	return fd < 0 ? -1 : rst_private_fd(t, fd);
}

int mm_open_stores(struct rst_ctx *rc, struct rtask *t, PagemapEntry *pm,
		   struct mm_stores *s)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		s->st[i].fd = open_store(rc, t, &s->st[i]);
		if (s->st[i].fd < 0)
			return -1;
	}
	return 0;
}

int mm_queue_reads(struct batch *b, struct mm_stores *s, PagemapEntry *pm, uint64_t end,
		   size_t *run)
{
	struct page_src *p;
	size_t k;

	for (; *run < pm->n_runs && pm->runs[*run]->vaddr < end; (*run)++) {
		if (s->outside && s->outside[*run])
			continue;	/* mm_jobs_fill writes it, after the batch */
		/*
		 * Allocating the pages in one go costs a fraction of taking a
		 * fault on each as pread() fills them; older kernels say EINVAL.
		 */
		if (pm->runs[*run]->nr_pages > 1 &&
		    BATCH(b, "madvise(MADV_POPULATE_WRITE)", __NR_madvise | SC_MAY_FAIL,
			  pm->runs[*run]->vaddr, (uint64_t)pm->runs[*run]->nr_pages * PAGE_SIZE,
			  MADV_POPULATE_WRITE) < 0)
			return -1;
		for (k = s->first[*run]; k < s->first[*run + 1]; k++) {
			p = &s->src[k];
			if (BATCH(b, s->st[p->store].level ? "pread of pages saved by a pre-dump" :
				  s->st[p->store].pid != s->pid ?
				  "pread of pages saved with the parent" : "pread of saved pages",
				  __NR_pread64, s->st[p->store].fd, p->vaddr, p->len, p->off) < 0)
				return -1;
		}
	}
	return 0;
}

int mm_fill_outside(struct rst_ctx *rc, struct rtask *t, struct mm_stores *s,
		    PagemapEntry *pm)
{
	int *fds, i, ret = -1;

	if (!s->outside)
		return 0;
	fds = xmalloc((s->nr + 1) * sizeof(*fds));
	if (!fds)
		return -1;
	for (i = 0; i < s->nr; i++) {
		fds[i] = mm_store_open(rc->dirfd, &s->st[i]);
		if (fds[i] < 0)
			goto out;
	}
	ret = mm_jobs_fill(t->host_pid, t->pid, s, pm, fds);
out:
	while (i--)
		close(fds[i]);
	free(fds);
	return ret;
}

void mm_free_stores(struct mm_stores *s)
{
	free(s->st);
	free(s->src);
	free(s->first);
	free(s->outside);
	memset(s, 0, sizeof(*s));
}
