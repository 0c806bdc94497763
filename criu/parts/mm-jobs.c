// SPDX-License-Identifier: GPL-2.0
/*
 * A task's page store written by several threads at once (mm-jobs.h).
 *
 * One thread copies about 1.5 GiB/s here: process_vm_readv faults in and
 * copies the task's pages, write() copies them again into the page cache,
 * and both are bound by one core's memory copies, not by the disk or
 * tmpfs. Slices of the store are independent once their offsets are
 * known, so N threads copy N slices at once; the file is the same.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "image/crc32c.h"
#include "image/image.h"
#include "image/sums.h"
#include "parts/mm-jobs.h"

/* a slice: whole checksum chunks, small enough to stay in the cache between copies */
#define SLICE		(4U << 20)
#define SLICE_IOV	(SLICE / 4096)	/* a slice of single pages: UIO_MAXIOV */

struct copy_job {
	pid_t pid;
	int memfd, fd;
	const struct page_plan *p;
	uint32_t *crc;		/* per IMG_SUM_CHUNK of the store, or NULL */
	uint64_t next;		/* the next slice to take (atomic) */
	uint64_t nr_slices;
	int failed;		/* atomic: the others stop */
};

int mm_jobs(const struct opts *o, pid_t pid)
{
	cpu_set_t set;
	int n;

	if (o->jobs)
		return o->jobs;
	if (sched_getaffinity(pid, sizeof(set), &set))
		return 1;
	/*
	 * One stream already keeps two CPUs busy (the reads and the writes):
	 * a job per two. On 2 CPUs two jobs measured no faster than one
	 * (Documentation/design.md, "Pages with several jobs").
	 */
	n = CPU_COUNT(&set) / 2;
	return n < 1 ? 1 : min(n, MM_JOBS_AUTO_MAX);
}

int page_plan_add(struct page_plan *p, uint64_t vaddr, uint64_t len, int via_mem)
{
	struct page_seg *s = p->nr ? &p->seg[p->nr - 1] : NULL;

	if (s && s->via_mem == via_mem && s->vaddr + s->len == vaddr) {
		s->len += len;
		p->total += len;
		return 0;
	}
	if (xgrow(p->seg, p->nr))
		return -1;
	s = &p->seg[p->nr++];
	s->vaddr = vaddr;
	s->len = len;
	s->off = p->total;
	s->via_mem = via_mem;
	p->total += len;
	return 0;
}

void page_plan_free(struct page_plan *p)
{
	free(p->seg);
	memset(p, 0, sizeof(*p));
}

/* The piece that holds store offset @off. */
static size_t seg_at(const struct page_plan *p, uint64_t off)
{
	size_t lo = 0, hi = p->nr;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (p->seg[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int readv_all(struct copy_job *j, struct iovec *l, struct iovec *r, int *n,
		     size_t *queued)
{
	ssize_t got;

	if (!*n)
		return 0;
	got = process_vm_readv(j->pid, l, *n, r, *n, 0);
	if (got != (ssize_t)*queued) {
		pr_perror("Task %d: can't read its memory at %p (%zd of %zu bytes)", j->pid,
			  r[0].iov_base, got, *queued);
		return -1;
	}
	*n = 0;
	*queued = 0;
	return 0;
}

/* Store bytes @from-@to into @buf, from the task. */
static int read_slice(struct copy_job *j, uint8_t *buf, uint64_t from, uint64_t to)
{
	struct iovec liov[SLICE_IOV], riov[SLICE_IOV];
	const struct page_seg *s;
	uint64_t at = from, skip, len;
	size_t i = seg_at(j->p, from), queued = 0;
	int n = 0;

	for (; at < to; i++) {
		s = &j->p->seg[i];
		skip = at - s->off;
		len = min(s->len - skip, to - at);
		if (s->via_mem) {
			if (readv_all(j, liov, riov, &n, &queued))
				return -1;
			if (read_full(j->memfd, buf + (at - from), len, s->vaddr + skip)) {
				pr_perror("Task %d: can't read its memory at %#lx", j->pid,
					  s->vaddr + skip);
				return -1;
			}
		} else {
			liov[n].iov_base = buf + (at - from);
			liov[n].iov_len = len;
			riov[n].iov_base = (void *)(uintptr_t)(s->vaddr + skip);
			riov[n].iov_len = len;
			queued += len;
			if (++n == SLICE_IOV && readv_all(j, liov, riov, &n, &queued))
				return -1;
		}
		at += len;
	}
	return readv_all(j, liov, riov, &n, &queued);
}

static int pwrite_full(int fd, const uint8_t *buf, size_t len, off_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int copy_slice(struct copy_job *j, uint8_t *buf, uint64_t k)
{
	uint64_t from = k * SLICE, to = min(from + SLICE, j->p->total), c;

	if (read_slice(j, buf, from, to))
		return -1;
	/* summed while the slice is in the cache, before pwrite() copies it */
	for (c = from; j->crc && c < to; c += IMG_SUM_CHUNK)
		j->crc[c / IMG_SUM_CHUNK] = crc32c(0, buf + (c - from),
						   min((uint64_t)IMG_SUM_CHUNK, to - c));
	if (pwrite_full(j->fd, buf, to - from, from)) {
		pr_perror("Can't write the page store of task %d at %#lx", j->pid, from);
		return -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct copy_job *j = arg;
	uint8_t *buf;
	uint64_t k;

	buf = mmap(NULL, SLICE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		pr_perror("Task %d: can't allocate a page copy buffer", j->pid);
		__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (!__atomic_load_n(&j->failed, __ATOMIC_RELAXED)) {
		k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->nr_slices)
			break;
		if (copy_slice(j, buf, k))
			__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
	}
	munmap(buf, SLICE);
	return NULL;
}

/* The sums the workers took, as one writer would have: into the inventory. */
static int record_sums(struct copy_job *j, int id)
{
	struct store_sum s;

	store_sum_init(&s);
	s.crc = j->crc;
	s.nr = s.max = (j->p->total + IMG_SUM_CHUNK - 1) / IMG_SUM_CHUNK;
	s.size = j->p->total;
	j->crc = NULL;
	return img_sums_record(IMG_PAGES, id, &s);
}

int mm_jobs_copy(pid_t pid, int memfd, const struct page_plan *p, int dirfd, int id,
		 int jobs)
{
	struct copy_job j = { .pid = pid, .memfd = memfd, .p = p };
	pthread_t th[MM_JOBS_MAX];
	int i, started = 0, ret = -1;

	j.nr_slices = (p->total + SLICE - 1) / SLICE;
	j.fd = img_open_raw(dirfd, IMG_PAGES, id, 1);
	if (j.fd < 0)
		return -1;
	if (img_checksum_on()) {
		j.crc = xzalloc((j.nr_slices * (SLICE / IMG_SUM_CHUNK) + 1) * sizeof(*j.crc));
		if (!j.crc)
			goto out;
	}
	jobs = (int)min((uint64_t)min(jobs, MM_JOBS_MAX), max(j.nr_slices, (uint64_t)1));
	pr_debug("Task %d: %lu bytes of memory in %zu pieces to copy, %d thread(s)", pid,
		 p->total, p->nr, jobs);
	for (i = 1; i < jobs; i++, started++)
		if (pthread_create(&th[i], NULL, worker, &j)) {
			pr_warn("Task %d: page copy thread %d of %d did not start; "
				"the others copy its share", pid, i, jobs);
			break;
		}
	worker(&j);	/* this thread is one of them; with threads missing, it does more */
	for (i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	if (j.failed)
		goto out;
	pr_info("Task %d: %lu bytes of memory copied by %d thread(s)", pid, p->total,
		started + 1);
	ret = j.crc ? record_sums(&j, id) : 0;
out:
	free(j.crc);
	if (close(j.fd) && !ret) {
		pr_perror("Can't write page store %d", id);
		ret = -1;
	}
	return ret;
}

/* ------------------------------------------------------------- restore */

/* A slice of a run: @len bytes from @src (a mapped store) to @vaddr in the task. */
struct fill_piece {
	uint64_t vaddr, len;
	const uint8_t *src;
};

struct fill_job {
	pid_t pid, img_pid;
	struct fill_piece *pc;
	size_t nr;
	uint64_t next;		/* atomic */
	int failed;		/* atomic */
};

static void *filler(void *arg)
{
	struct fill_job *j = arg;
	struct iovec l, r;
	uint64_t k;
	ssize_t n;

	while (!__atomic_load_n(&j->failed, __ATOMIC_RELAXED)) {
		k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->nr)
			break;
		l.iov_base = (void *)j->pc[k].src;
		r.iov_base = (void *)(uintptr_t)j->pc[k].vaddr;
		l.iov_len = r.iov_len = j->pc[k].len;
		n = process_vm_writev(j->pid, &l, 1, &r, 1, 0);
		if (n != (ssize_t)l.iov_len) {
			pr_perror("Task %d: can't write its pages at %#lx (%zd of %lu bytes)",
				  j->img_pid, j->pc[k].vaddr, n, j->pc[k].len);
			__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* Every store of @s mapped for reading (NULL where empty). */
static int map_stores(const struct mm_stores *s, const int *fds, uint8_t **map)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		if (!s->st[i].size)
			continue;
		map[i] = mmap(NULL, s->st[i].size, PROT_READ, MAP_SHARED, fds[i], 0);
		if (map[i] == MAP_FAILED) {
			map[i] = NULL;
			pr_perror("Task %d: can't map pages-%d.img %d parent(s) up", s->pid,
				  s->st[i].pid, s->st[i].level);
			return -1;
		}
	}
	return 0;
}

/* The outside runs, cut at every SLICE of the address space: the work to share. */
static int cut_pieces(const struct mm_stores *s, PagemapEntry *pm, uint8_t **map,
		      struct fill_job *j)
{
	const struct page_src *p;
	uint64_t at, len;
	size_t ri, k;

	for (ri = 0; ri < pm->n_runs; ri++) {
		if (!s->outside[ri])
			continue;
		for (k = s->first[ri]; k < s->first[ri + 1]; k++) {
			p = &s->src[k];
			for (at = 0; at < p->len; at += len) {
				len = min(p->len - at, SLICE - (p->vaddr + at) % SLICE);
				if (xgrow(j->pc, j->nr))
					return -1;
				j->pc[j->nr].vaddr = p->vaddr + at;
				j->pc[j->nr].len = len;
				j->pc[j->nr].src = map[p->store] + p->off + at;
				j->nr++;
			}
		}
	}
	return 0;
}

int mm_jobs_fill(pid_t host_pid, pid_t pid, const struct mm_stores *s, PagemapEntry *pm,
		 const int *fds)
{
	struct fill_job j = { .pid = host_pid, .img_pid = pid };
	pthread_t th[MM_JOBS_MAX];
	uint8_t **map;
	int i, jobs, started = 0, ret = -1;

	map = xzalloc((s->nr + 1) * sizeof(*map));
	if (!map || map_stores(s, fds, map) || cut_pieces(s, pm, map, &j))
		goto out;
	jobs = (int)min((size_t)min(s->jobs, MM_JOBS_MAX), max(j.nr, (size_t)1));
	for (i = 1; i < jobs; i++, started++)
		if (pthread_create(&th[i], NULL, filler, &j)) {
			pr_warn("Task %d: page fill thread %d of %d did not start; "
				"the others write its share", pid, i, jobs);
			break;
		}
	filler(&j);
	for (i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	if (!j.failed) {
		pr_info("Task %d: %lu bytes of memory written by %d thread(s)", pid,
			s->outside_bytes, started + 1);
		ret = 0;
	}
out:
	for (i = 0; map && i < s->nr; i++)
		if (map[i])
			munmap(map[i], s->st[i].size);
	free(map);
	free(j.pc);
	return ret;
}
