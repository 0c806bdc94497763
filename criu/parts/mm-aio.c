// SPDX-License-Identifier: GPL-2.0
/*
 * aio rings (io_setup). The ring is a shared area the kernel maps from a
 * file of its own ("/[aio] (deleted)"); its address is the context the
 * task names it by. Its header (id, nr, head, tail, magic, features,
 * header length) is followed by nr io_events; those from head to tail are
 * completed and not reaped yet.
 *
 * Dump reads the header and those events through /proc/PID/mem. Restore,
 * in the leader's thread batch once every area is back: io_setup() a ring
 * of the same size, mremap() it to the old address (the kernel's aio_ring_mremap
 * moves the context with it), then bring the kernel's tail, which no one
 * but the kernel writes, where it was: requests that complete at once
 * (reads of no bytes from a pipe) fill head
 * slots that are reaped at once, then head-to-tail slots that stay, so
 * the kernel counts those as taken exactly as it did. From outside, at
 * the end, criu checks head and tail and writes the saved events over the
 * fillers.
 *
 * A request still in flight can't be saved: the dump finds them by the
 * slots they hold (below, "dump"), and refuses the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/aio_abi.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "aio.pb-c.h"

#ifndef MREMAP_FIXED
#define MREMAP_MAYMOVE	1
#define MREMAP_FIXED	2
#endif

#define AIO_RING_MAGIC	0xa10a10a1
#define AIO_EV_SIZE	sizeof(struct io_event)
/* fillers queued by one io_submit, reaped by one io_getevents */
#define AIO_CHUNK	256

struct aio_hdr {
	uint32_t id, nr, head, tail, magic, compat, incompat, hdr_len;
};

static uint32_t ring_pending(uint32_t nr, uint32_t head, uint32_t tail)
{
	return (tail + nr - head) % nr;
}

/*
 * Slots the kernel hands out a batch at a time may sit in other CPUs'
 * caches: the fillers that stay are sure to get a slot while they take
 * at most half the ring (what io_setup's count doubled is for).
 */
static uint32_t ring_refill_max(uint32_t nr)
{
	return (nr - 1) / 2;
}

static int ring_mem(pid_t pid, int write, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write ? pwrite(fd, buf, len, addr) : pread(fd, buf, len, addr);
	close(fd);
	if (n >= 0 && (size_t)n != len)
		errno = EIO;
	return (size_t)n == len ? 0 : -1;
}

/*
 * The fillers both halves queue: reads of no bytes from a pipe the batch
 * makes, which complete inside io_submit. pipe2() writes the read end
 * into the iocb's fd and the write end into the low half of its buffer
 * address, a buffer no read of no bytes touches.
 */
static uint64_t put_filler(struct batch *b, uint64_t data)
{
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_data = data };
	uint64_t at = batch_put(b, &cb, sizeof(cb));

	if (!at || BATCH(b, "pipe2 for aio ring fillers", __NR_pipe2,
			 at + offsetof(struct iocb, aio_fildes), O_CLOEXEC) < 0)
		return 0;
	return at;
}

static int close_filler(struct batch *b, uint64_t at)
{
	return BATCH(b, "close of the fillers' pipe", __NR_close | SC_ARG0_AT,
		     at + offsetof(struct iocb, aio_fildes)) < 0 ||
	       BATCH(b, "close of the fillers' pipe", __NR_close | SC_ARG0_AT,
		     at + offsetof(struct iocb, aio_buf)) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ dump */

/*
 * Requests in flight live only in the kernel, but they hold slots: the
 * ring's nr - 1 slots are free (in the context's count, and in the caches
 * of the CPUs it hands them to req_batch at a time), held by a request in
 * flight, or by a completed event until the kernel sees it reaped. The
 * dump batch takes every free slot it can with reads of no bytes from a
 * pipe of its own, which complete inside io_submit, on every CPU in turn
 * (each CPU's cache is its own). What stays in the count then is less than
 * req_batch and, moved only by req_batch, is (nr - 1) % req_batch: so
 * nr - 1 - that - the events in the ring is at least the requests in
 * flight (exactly them, unless a CPU the task can't run on caches slots).
 * The fillers' events are then taken out: the task's own events move up
 * to the tail, in order, and head follows, so the kernel counts the
 * fillers as reaped and the task sees the same events (head and tail
 * moved on by the fillers' count).
 */
#define AIO_PROBE_MARK	0xa10c0017a10c0017ULL
#define CPU_POSSIBLE	"/sys/devices/system/cpu/possible"

struct aio_probed {
	uint64_t addr;
	uint32_t nr, head;	/* the header's before the fillers */
	int done;		/* the fillers are out of it again */
	int live_idx;		/* the batch's io_submit of nothing: is it a context? */
	/*
	 * Not a context of the task's: a child's copy of its parent's area
	 * (fork copies the area, not the context). Its requests and fillers
	 * are the parent's; it comes back as a ring of the child's own.
	 */
	int inherited;
};

/* One task's rings and its batch's fillers, listed in dc->shared[PART_AIO]. */
struct aio_probe {
	pid_t pid;
	int nr;
	struct aio_probed *ring;
	uint64_t iocb;		/* the fillers' iocb in the task: their events' obj */
	int cpus;		/* possible CPUs, which req_batch is computed by */
	struct aio_probe *next;
};

struct cpus {
	int count, max;		/* possible CPUs, and the highest id + 1 */
};

static int parse_cpus(char *text, struct cpus *c)
{
	char *p = text, *end;
	long a, b;

	c->count = c->max = 0;
	while (*p && *p != '\n') {
		a = b = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -1;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -1;
		}
		c->count += b - a + 1;
		c->max = max(c->max, (int)b + 1);
		p = *end == ',' ? end + 1 : end;
	}
	return c->count ? 0 : -1;
}

static int is_ring(const struct proc_vma *v)
{
	return proc_is_aio(v->path, v->dev_major);
}

static const char *ring_unsupported(const struct aio_hdr *h, uint64_t len)
{
	if (h->magic != AIO_RING_MAGIC || h->hdr_len != sizeof(*h))
		return "its header is not an aio ring's";
	if (h->compat != 1 || h->incompat)
		return "its header has features this criu does not know";
	if (h->nr != (len - sizeof(*h)) / AIO_EV_SIZE)
		return "its header's size is not its area's";
	if (h->head >= h->nr || h->tail >= h->nr)
		return "its head or tail is beyond the ring";
	return NULL;
}

static const char *too_many(uint32_t nr, uint32_t pending)
{
	return pending > ring_refill_max(nr) ?
	       "more completed events wait to be reaped than a restore can queue again" : NULL;
}

static int read_ring(struct dtask *t, const struct proc_vma *v, struct aio_hdr *h)
{
	const char *why;

	if (ring_mem(t->pid, 0, v->start, h, sizeof(*h))) {
		pr_perror("Task %d: can't read the aio ring at %#lx", t->pid, v->start);
		return -1;
	}
	why = ring_unsupported(h, v->end - v->start);
	if (!why)
		why = too_many(h->nr, ring_pending(h->nr, h->head, h->tail));
	if (why) {
		pr_err("Task %d: aio ring at %#lx-%#lx (nr %u, head %u, tail %u): %s",
		       t->pid, v->start, v->end, h->nr, h->head, h->tail, why);
		return -1;
	}
	return 0;
}

static int aio_check(struct dump_ctx *dc, struct dtask *t)
{
	struct aio_hdr h;
	int i;

	for (i = 0; i < t->maps.nr; i++)
		if (is_ring(&t->maps.vma[i]) && read_ring(t, &t->maps.vma[i], &h))
			return -1;
	return 0;
}

static struct aio_probe *new_probe(struct dump_ctx *dc, struct dtask *t, int n)
{
	struct aio_probe *p = xzalloc(sizeof(*p));

	if (!p)
		return NULL;
	p->ring = xzalloc(n * sizeof(*p->ring));
	if (!p->ring) {
		free(p);
		return NULL;
	}
	p->pid = t->pid;
	p->next = dc->shared[PART_AIO];
	dc->shared[PART_AIO] = p;
	t->priv[PART_AIO] = p;
	return p;
}

/* On each CPU in turn, every free slot of every ring to a filler. */
static int queue_fillers_dump(struct batch *b, struct aio_probe *p, uint32_t maxnr,
			      const struct cpus *c)
{
	size_t msize = (c->max + 63) / 64 * 8, i;
	uint64_t *ptrs = xmalloc((maxnr - 1) * sizeof(*ptrs)), arr, saved, mask;
	uint8_t *m = xzalloc(msize);
	int cpu, j, ret = -1;

	p->iocb = put_filler(b, AIO_PROBE_MARK);
	if (!ptrs || !m || !p->iocb)
		goto out;
	for (i = 0; i < maxnr - 1; i++)
		ptrs[i] = p->iocb;
	arr = batch_put(b, ptrs, (maxnr - 1) * sizeof(*ptrs));
	saved = batch_put(b, NULL, msize);
	if (!arr || !saved ||
	    BATCH(b, "sched_getaffinity", __NR_sched_getaffinity, 0, msize, saved) < 0)
		goto out;
	for (cpu = 0; cpu < c->max; cpu++) {
		memset(m, 0, msize);
		m[cpu / 8] = 1 << (cpu % 8);
		mask = batch_put(b, m, msize);
		/* a CPU out of the task's cpuset: it never cached a slot of the task's */
		if (!mask || BATCH(b, "sched_setaffinity to one CPU",
				   __NR_sched_setaffinity | SC_MAY_FAIL, 0, msize, mask) < 0)
			goto out;
		for (j = 0; j < p->nr; j++)
			if (BATCH(b, "io_submit of aio ring fillers", __NR_io_submit | SC_MAY_FAIL,
				  p->ring[j].addr, p->ring[j].nr - 1, arr) < 0)
				goto out;
	}
	if (BATCH(b, "sched_setaffinity back", __NR_sched_setaffinity, 0, msize, saved) < 0 ||
	    close_filler(b, p->iocb))
		goto out;
	ret = 0;
out:
	free(ptrs);
	free(m);
	return ret;
}

static int aio_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct aio_probe *p;
	struct aio_hdr h;
	struct cpus c;
	uint32_t maxnr = 0;
	int i, n = 0;

	for (i = 0; i < t->maps.nr; i++)
		n += is_ring(&t->maps.vma[i]);
	if (!n)
		return 0;
	if (proc_read(CPU_POSSIBLE, parse_cpus, &c) < 0)
		return -1;
	p = new_probe(dc, t, n);
	if (!p)
		return -1;
	p->cpus = c.count;
	for (i = 0; i < t->maps.nr; i++) {
		if (!is_ring(&t->maps.vma[i]))
			continue;
		if (read_ring(t, &t->maps.vma[i], &h))
			return -1;
		p->ring[p->nr].addr = t->maps.vma[i].start;
		p->ring[p->nr].nr = h.nr;
		p->ring[p->nr].head = h.head;
		p->ring[p->nr].live_idx = BATCH(b, "io_submit of nothing to an aio ring",
						__NR_io_submit | SC_MAY_FAIL,
						t->maps.vma[i].start, 0, 0);
		if (p->ring[p->nr++].live_idx < 0)
			return -1;
		maxnr = max(maxnr, h.nr);
	}
	return queue_fillers_dump(b, p, maxnr, &c);
}

/* @n slots of the ring from @from, wrapping after its end */
static int ring_slots(pid_t pid, int write, uint64_t addr, uint32_t nr, uint32_t from,
		      uint32_t n, uint8_t *buf)
{
	uint32_t first = min(n, nr - from);
	uint64_t at = addr + sizeof(struct aio_hdr);

	return ring_mem(pid, write, at + from * AIO_EV_SIZE, buf, first * AIO_EV_SIZE) ||
	       (n > first && ring_mem(pid, write, at, buf + first * AIO_EV_SIZE,
				      (n - first) * AIO_EV_SIZE)) ? -1 : 0;
}

/* What the fillers found, once they are out of the ring again. */
struct settled {
	uint8_t *ev;		/* the task's events, head to tail */
	uint32_t head, n;	/* where they were before the fillers, how many */
	int64_t in_flight;	/* at most; 0: none */
};

/*
 * Takes the fillers' events out of ring @r of the stopped task: the
 * task's own events go to the slots before the tail, in order, and head
 * to the first of them.
 */
static int settle_ring(pid_t pid, uint64_t iocb, int cpus, struct aio_probed *r,
		       struct settled *s)
{
	uint32_t batch = max((r->nr - 1) / (4 * cpus), 1U), n, i, head;
	struct io_event *ev;
	struct aio_hdr h;

	if (ring_mem(pid, 0, r->addr, &h, sizeof(h)) || h.nr != r->nr || h.tail >= h.nr ||
	    h.head >= h.nr)
		goto err;
	/* a parent may have taken its fillers out of an inherited ring since */
	s->head = r->inherited ? h.head : r->head;
	n = ring_pending(h.nr, s->head, h.tail);
	ev = xmalloc(n * AIO_EV_SIZE + 1);
	if (!ev)
		return -1;
	s->ev = (uint8_t *)ev;
	if (ring_slots(pid, 0, r->addr, h.nr, s->head, n, s->ev))
		goto err;
	for (i = 0, s->n = 0; i < n; i++)
		if (ev[i].data != AIO_PROBE_MARK || ev[i].obj != iocb)
			ev[s->n++] = ev[i];
	s->in_flight = r->inherited ? 0 : (int64_t)h.nr - 1 - (h.nr - 1) % batch - n;
	head = (h.tail + h.nr - s->n) % h.nr;
	if (s->n < n && (ring_slots(pid, 1, r->addr, h.nr, head, s->n, s->ev) ||
			 ring_mem(pid, 1, r->addr + offsetof(struct aio_hdr, head), &head,
				  sizeof(head))))
		goto err;
	r->done = 1;
	return 0;
err:
	pr_perror("Task %d: can't take the fillers out of the aio ring at %#lx", pid, r->addr);
	return -1;
}

static void free_rings(AioEntry *ae)
{
	size_t i;

	for (i = 0; i < ae->n_rings; i++) {
		free(ae->rings[i]->events.data);
		free(ae->rings[i]);
	}
	free(ae->rings);
}

static int dump_ring(struct dtask *t, struct aio_probe *p, struct aio_probed *r,
		     AioEntry *ae)
{
	AioRingEntry *e = xzalloc(sizeof(*e));
	struct settled s = { 0 };
	const char *why;

	if (!e)
		return -1;
	aio_ring_entry__init(e);
	ae->rings[ae->n_rings++] = e;
	if (settle_ring(t->pid, p->iocb, p->cpus, r, &s)) {
		free(s.ev);
		return -1;
	}
	e->has_events = 1;
	e->events.data = s.ev;
	e->events.len = s.n * AIO_EV_SIZE;
	if (s.in_flight > 0) {
		pr_err("Task %d: aio ring at %#lx: %ld requests in flight (or slots cached by "
		       "CPUs the task can't run on): not supported", t->pid, r->addr,
		       (long)s.in_flight);
		return -1;
	}
	why = too_many(r->nr, s.n);
	if (why) {
		pr_err("Task %d: aio ring at %#lx (nr %u, %u events unreaped): %s", t->pid,
		       r->addr, r->nr, s.n, why);
		return -1;
	}
	/* the restore puts them where they were before the fillers */
	e->addr = r->addr;
	e->len = sizeof(struct aio_hdr) + r->nr * AIO_EV_SIZE;
	e->head = s.head;
	e->tail = (s.head + s.n) % r->nr;
	e->nr = r->nr;
	pr_info("Task %d: aio ring at %#lx, %u events, head %u, %u unreaped", t->pid,
		r->addr, r->nr, s.head, s.n);
	return 0;
}

static int aio_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct aio_probe *p = t->priv[PART_AIO];
	AioEntry ae = AIO_ENTRY__INIT;
	int i, ret = -1;

	if (!p)
		return 0;	/* no image: the restore makes no ring */
	ae.rings = xzalloc(p->nr * sizeof(*ae.rings));
	if (!ae.rings)
		return -1;
	for (i = 0; i < p->nr; i++) {
		p->ring[i].inherited = batch_entry(b, p->ring[i].live_idx)->ret == -EINVAL;
		if (dump_ring(t, p, &p->ring[i], &ae))
			goto out;
	}
	ret = img_write(dc->dirfd, IMG_AIO, t->ns_pid, &ae.base);
out:
	free_rings(&ae);
	return ret;
}

/* A tree that goes on: the rings whose dump did not get to them lose their fillers too. */
static void aio_after_dump(struct dump_ctx *dc, int runs)
{
	struct aio_probe *p;
	struct settled s;
	int i;

	while ((p = dc->shared[PART_AIO])) {
		for (i = 0; runs && i < p->nr; i++) {
			memset(&s, 0, sizeof(s));
			if (!p->ring[i].done)
				settle_ring(p->pid, p->iocb, p->cpus, &p->ring[i], &s);
			free(s.ev);
		}
		dc->shared[PART_AIO] = p->next;
		free(p->ring);
		free(p);
	}
}

/* --------------------------------------------------------------- restore */

struct aio_rst {
	AioEntry *e;
	uint64_t iocb, ptrs, evs, ts;	/* the fillers' data in the batch, shared by the rings */
};

/* What io_setup() must be asked for a ring of @nr events (fs/aio.c sizes it so). */
static uint32_t ring_nr_req(uint32_t nr)
{
	return (nr - 2) / 2;
}

static uint32_t chunks(uint32_t n)
{
	return (n + AIO_CHUNK - 1) / AIO_CHUNK;
}

static const char *bad_ring(const AioRingEntry *r, long cpus)
{
	if ((r->addr | r->len) & ~PAGE_MASK || !r->len || r->len > (1ULL << 30) ||
	    r->addr + r->len < r->addr)
		return "its area is not whole pages";
	if (r->nr != (r->len - sizeof(struct aio_hdr)) / AIO_EV_SIZE)
		return "its size is not its area's";
	if (r->head >= r->nr || r->tail >= r->nr ||
	    ring_pending(r->nr, r->head, r->tail) > ring_refill_max(r->nr))
		return "its head or tail is out of range";
	if ((r->has_events ? r->events.len : 0) !=
	    ring_pending(r->nr, r->head, r->tail) * AIO_EV_SIZE)
		return "its events are not those from head to tail";
	/* the kernel makes a ring of at least 8 events per CPU that may come up */
	if (ring_nr_req(r->nr) < 4 * (uint64_t)cpus)
		return "it is smaller than any ring the kernel makes on this machine";
	return NULL;
}

static int check_rings(struct rtask *t, AioEntry *e)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	const char *why;
	size_t i, j;

	for (i = 0; i < e->n_rings; i++) {
		why = bad_ring(e->rings[i], cpus > 0 ? cpus : 1);
		for (j = 0; !why && j < i; j++)
			if (e->rings[i]->addr < e->rings[j]->addr + e->rings[j]->len &&
			    e->rings[j]->addr < e->rings[i]->addr + e->rings[i]->len)
				why = "it overlaps another ring";
		if (why) {
			pr_err("Task %d: image aio has a ring at %#lx that can't be made: %s",
			       t->pid, e->rings[i]->addr, why);
			return -1;
		}
	}
	return 0;
}

static int aio_load(struct rst_ctx *rc, struct rtask *t)
{
	struct aio_rst *a;
	AioEntry *e;
	size_t i;
	int ret;

	ret = img_read(rc->dirfd, IMG_AIO, t->pid, (void **)&e, 1);
	if (ret <= 0)
		return ret;	/* none: the task had no ring */
	a = xzalloc(sizeof(*a));
	if (!a || check_rings(t, e)) {
		free(a);
		img_free(IMG_AIO, e);
		return -1;
	}
	a->e = e;
	t->img[PART_AIO] = a;
	for (i = 0; i < e->n_rings; i++) {
		t->batch_entries += 2 + 2 * chunks(e->rings[i]->head) +
				    chunks(ring_pending(e->rings[i]->nr, e->rings[i]->head,
							e->rings[i]->tail));
		t->batch_data += sizeof(aio_context_t) + 16;
	}
	t->batch_entries += 3;	/* the fillers' pipe */
	t->batch_data += sizeof(struct iocb) + AIO_CHUNK * (sizeof(uint64_t) + AIO_EV_SIZE) +
			 sizeof(struct timespec) + 64;
	return 0;
}

/* The fillers' data: one iocb that every slot of the array names. */
static int put_fillers(struct aio_rst *a, struct batch *b)
{
	struct timespec ts = { .tv_sec = 1 };
	uint64_t ptrs[AIO_CHUNK];
	int i;

	a->iocb = put_filler(b, 0xa10f111e);
	for (i = 0; i < AIO_CHUNK; i++)
		ptrs[i] = a->iocb;
	a->ptrs = batch_put(b, ptrs, sizeof(ptrs));
	a->evs = batch_put(b, NULL, AIO_CHUNK * AIO_EV_SIZE);
	a->ts = batch_put(b, &ts, sizeof(ts));
	return a->iocb && a->ptrs && a->evs && a->ts ? 0 : -1;
}

/* @n fillers into the ring at @ctx, reaped at once if @reap */
static int queue_fillers(struct aio_rst *a, struct batch *b, uint64_t ctx, uint32_t n,
			 int reap)
{
	uint32_t c;

	for (; n; n -= c) {
		c = min(n, AIO_CHUNK);
		if (BATCH(b, "io_submit of aio ring fillers", __NR_io_submit, ctx, c,
			  a->ptrs) < 0 ||
		    (reap && BATCH(b, "io_getevents of aio ring fillers", __NR_io_getevents,
				   ctx, c, c, a->evs, a->ts) < 0))
			return -1;
	}
	return 0;
}

/*
 * The leader's last steps, once every part's batch has mapped what it
 * maps: what criu unmaps of its own at the start of the batch would take
 * a ring made before with it.
 */
static int aio_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	struct aio_rst *a = t->img[PART_AIO];
	AioRingEntry *r;
	uint64_t slot;
	size_t i;

	if (!a || th)
		return 0;
	if (put_fillers(a, b))
		return -1;
	for (i = 0; i < a->e->n_rings; i++) {
		r = a->e->rings[i];
		slot = batch_put(b, NULL, sizeof(aio_context_t));
		if (!slot ||
		    BATCH(b, "io_setup of an aio ring", __NR_io_setup, ring_nr_req(r->nr),
			  slot) < 0 ||
		    BATCH(b, "mremap of an aio ring where it was", __NR_mremap | SC_ARG0_AT,
			  slot, r->len, r->len, MREMAP_MAYMOVE | MREMAP_FIXED, r->addr) < 0 ||
		    queue_fillers(a, b, r->addr, r->head, 1) ||
		    queue_fillers(a, b, r->addr, ring_pending(r->nr, r->head, r->tail), 0))
			return -1;
	}
	return close_filler(b, a->iocb);
}

/* The ring came back where and as it was; its waiting events go over the fillers. */
static int refill_ring(struct rtask *t, const AioRingEntry *r)
{
	uint32_t n = ring_pending(r->nr, r->head, r->tail);
	uint32_t first = min(n, r->nr - r->head);
	struct aio_hdr h;

	if (ring_mem(t->host_pid, 0, r->addr, &h, sizeof(h))) {
		pr_perror("Task %d: can't read the restored aio ring at %#lx", t->pid, r->addr);
		return -1;
	}
	if (h.magic != AIO_RING_MAGIC || h.nr != r->nr || h.head != r->head ||
	    h.tail != r->tail) {
		pr_err("Task %d: aio ring at %#lx came back with nr %u, head %u, tail %u, "
		       "not %u, %u, %u", t->pid, r->addr, h.nr, h.head, h.tail, r->nr,
		       r->head, r->tail);
		return -1;
	}
	if (!n)
		return 0;
	if (ring_mem(t->host_pid, 1, r->addr + sizeof(h) + r->head * AIO_EV_SIZE,
		     r->events.data, first * AIO_EV_SIZE) ||
	    (n > first && ring_mem(t->host_pid, 1, r->addr + sizeof(h),
				   r->events.data + first * AIO_EV_SIZE,
				   (n - first) * AIO_EV_SIZE))) {
		pr_perror("Task %d: can't write the events of the aio ring at %#lx", t->pid,
			  r->addr);
		return -1;
	}
	return 0;
}

static int aio_final(struct rst_ctx *rc, struct rtask *t)
{
	struct aio_rst *a = t->img[PART_AIO];
	size_t i;

	for (i = 0; a && i < a->e->n_rings; i++)
		if (refill_ring(t, a->e->rings[i]))
			return -1;
	return 0;
}

static void aio_release(struct rtask *t)
{
	struct aio_rst *a = t->img[PART_AIO];

	if (!a)
		return;
	img_free(IMG_AIO, a->e);
	free(a);
	t->img[PART_AIO] = NULL;
}

const struct part part_aio = {
	.name = "aio",
	.id = PART_AIO,
	.after_dump = aio_after_dump,
	.check = aio_check,
	.prepare = aio_prepare,
	.dump = aio_dump,
	.load = aio_load,
	.thread_batch = aio_thread_batch,
	.final = aio_final,
	.release = aio_release,
};
