/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_JOBS_H
#define CRIU_PARTS_MM_JOBS_H

/*
 * Copying a task's pages into its store with several threads (--jobs).
 * The dump first plans every piece of memory the store will hold, in the
 * order the pagemap lists them, so each piece's offset in pages-PID.img
 * is known before anything is read; then workers take 4 MiB slices of the
 * store, read what falls in theirs (process_vm_readv, or /proc/PID/mem for
 * pages shared copy-on-write) and pwrite() the slice at its offset. The
 * store and its pagemap are byte for byte those of one job; the slices
 * are whole 1 MiB checksum chunks, so each worker sums its own.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pagemap.pb-c.h"

struct opts;

/* One piece of memory, stored right after the previous one. */
struct page_seg {
	uint64_t vaddr, len;
	uint64_t off;		/* in the store */
	int via_mem;		/* read through /proc/PID/mem */
};

struct page_plan {
	struct page_seg *seg;
	size_t nr;
	uint64_t total;		/* the store's size */
};

/* The most --jobs takes; the default is the task's CPUs, at most MM_JOBS_AUTO_MAX. */
#define MM_JOBS_MAX		256
#define MM_JOBS_AUTO_MAX	8

/* --jobs, or by default the CPUs @pid may run on (bounded). */
int mm_jobs(const struct opts *o, pid_t pid);
/* Appends @len bytes at @vaddr to the plan. 0, or -1 logged. */
int page_plan_add(struct page_plan *p, uint64_t vaddr, uint64_t len, int via_mem);
void page_plan_free(struct page_plan *p);
/*
 * Writes store @id in @dirfd as @p says, with @jobs threads (the caller's
 * among them), and records its checksums. 0, or -1 logged (the store may
 * be left partly written, as a failed single-threaded one is).
 */
int mm_jobs_copy(pid_t pid, int memfd, const struct page_plan *p, int dirfd, int id,
		 int jobs);

/*
 * Restore. A task whose writable private anonymous memory holds at least
 * MM_FILL_MIN bytes of pages (mm-pages.c, pick_outside) does not read
 * those runs in its batch: once the batch is done and the task waits
 * stopped, criu maps the stores and several threads process_vm_writev()
 * 4 MiB slices of them into the task. The area was mapped and advised
 * (MADV_HUGEPAGE) in the batch, so the writes' faults take huge pages
 * where the task had them.
 */
#define MM_FILL_MIN		(8ULL << 20)

/* restore: one store a task's pages are read from */
struct mm_store {
	int level;		/* 0: these images; n: n parents up (pre-dumps) */
	pid_t pid;		/* pages-PID.img */
	int fd;
	int64_t size;
};

/* A piece of a run: where its pages are read from. */
struct page_src {
	uint64_t vaddr, len;
	int store;		/* in mm_stores.st */
	uint64_t off;
};

struct mm_stores {
	pid_t pid;		/* the task's own */
	struct mm_store *st;
	int nr;
	struct page_src *src;	/* every run's pieces, in order */
	size_t nr_src;
	size_t *first;		/* per run: its first piece */
	/*
	 * --jobs: per run, 1 where criu writes it into the task from outside,
	 * with several threads, once the task's batch is done (mm_jobs_fill);
	 * NULL: the task reads every run itself.
	 */
	uint8_t *outside;
	uint64_t outside_bytes;
	int jobs;
};

/*
 * After the batch of task @pid (@host_pid here): the runs s->outside
 * marks, into it; @fds: s->st's stores, open here. 0, or -1 logged.
 */
int mm_jobs_fill(pid_t host_pid, pid_t pid, const struct mm_stores *s, PagemapEntry *pm,
		 const int *fds);

#endif
