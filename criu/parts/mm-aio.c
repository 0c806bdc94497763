// SPDX-License-Identifier: GPL-2.0
/*
 * aio rings (io_setup). The ring is a shared area the kernel maps from a
 * file of its own ("/[aio] (deleted)"); its address is the context the
 * task names it by. Its header (id, nr, head, tail, magic, features,
 * header length) is followed by nr io_events; those from head to tail are
 * completed and not reaped yet.
 *
 * Dump reads the header and those events through /proc/PID/mem. Restore,
 * in the task's batch once its areas are back: io_setup() a ring of the
 * same size, mremap() it to the old address (the kernel's aio_ring_mremap
 * moves the context with it), then bring the kernel's tail, which no one
 * but the kernel writes, where it was: requests that complete at once
 * (reads of no bytes from an eventfd, which fail with EINVAL) fill head
 * slots that are reaped at once, then head-to-tail slots that stay, so
 * the kernel counts those as taken exactly as it did. From outside, at
 * the end, criu checks head and tail and writes the saved events over the
 * fillers.
 *
 * A request still in flight can't be saved and can't be seen: the kernel
 * keeps no count of them where user space can read it (Documentation/
 * design.md, "aio rings").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
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

/* ------------------------------------------------------------------ dump */

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
	if (ring_pending(h->nr, h->head, h->tail) > ring_refill_max(h->nr))
		return "more completed events wait to be reaped than a restore can queue again";
	return NULL;
}

static int read_ring(struct dtask *t, const struct proc_vma *v, struct aio_hdr *h)
{
	const char *why;

	if (ring_mem(t->pid, 0, v->start, h, sizeof(*h))) {
		pr_perror("Task %d: can't read the aio ring at %#lx", t->pid, v->start);
		return -1;
	}
	why = ring_unsupported(h, v->end - v->start);
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

/* The events from head to tail, in order, the ring wrapping after nr. */
static int read_events(struct dtask *t, const struct proc_vma *v, const struct aio_hdr *h,
		       AioRingEntry *e)
{
	uint32_t n = ring_pending(h->nr, h->head, h->tail);
	uint32_t first = min(n, h->nr - h->head);
	uint8_t *buf;

	if (!n)
		return 0;
	buf = xmalloc(n * AIO_EV_SIZE);
	if (!buf)
		return -1;
	if (ring_mem(t->pid, 0, v->start + sizeof(*h) + h->head * AIO_EV_SIZE, buf,
		     first * AIO_EV_SIZE) ||
	    (n > first && ring_mem(t->pid, 0, v->start + sizeof(*h), buf + first * AIO_EV_SIZE,
				   (n - first) * AIO_EV_SIZE))) {
		pr_perror("Task %d: can't read the events of the aio ring at %#lx", t->pid,
			  v->start);
		free(buf);
		return -1;
	}
	e->has_events = 1;
	e->events.data = buf;
	e->events.len = n * AIO_EV_SIZE;
	return 0;
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

static int dump_ring(struct dtask *t, const struct proc_vma *v, AioEntry *ae)
{
	AioRingEntry *e = xzalloc(sizeof(*e));
	struct aio_hdr h;

	if (!e)
		return -1;
	aio_ring_entry__init(e);
	ae->rings[ae->n_rings++] = e;
	if (read_ring(t, v, &h))
		return -1;
	e->addr = v->start;
	e->len = v->end - v->start;
	e->nr = h.nr;
	e->head = h.head;
	e->tail = h.tail;
	pr_info("Task %d: aio ring at %#lx, %u events, head %u, tail %u\n", t->pid,
		v->start, h.nr, h.head, h.tail);
	return read_events(t, v, &h, e);
}

static int aio_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	AioEntry ae = AIO_ENTRY__INIT;
	int i, n = 0, ret = -1;

	for (i = 0; i < t->maps.nr; i++)
		n += is_ring(&t->maps.vma[i]);
	if (!n)
		return 0;	/* no image: the restore makes no ring */
	ae.rings = xzalloc(n * sizeof(*ae.rings));
	if (!ae.rings)
		return -1;
	for (i = 0; i < t->maps.nr; i++)
		if (is_ring(&t->maps.vma[i]) && dump_ring(t, &t->maps.vma[i], &ae))
			goto out;
	ret = img_write(dc->dirfd, IMG_AIO, t->ns_pid, &ae.base);
out:
	free_rings(&ae);
	return ret;
}

/* --------------------------------------------------------------- restore */

struct aio_rst {
	AioEntry *e;
	int evfd;		/* in the task: what the fillers read; -1 if none is needed */
	uint64_t iocb, ptrs, evs, ts;	/* their data in the batch, shared by the rings */
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
	a->evfd = -1;
	t->img[PART_AIO] = a;
	for (i = 0; i < e->n_rings; i++) {
		t->batch_entries += 2 + 2 * chunks(e->rings[i]->head) +
				    chunks(ring_pending(e->rings[i]->nr, e->rings[i]->head,
							e->rings[i]->tail));
		t->batch_data += sizeof(aio_context_t) + 16;
	}
	t->batch_data += sizeof(struct iocb) + AIO_CHUNK * (sizeof(uint64_t) + AIO_EV_SIZE) +
			 sizeof(struct timespec) + 64;
	t->own_fds += 1;	/* the fillers' eventfd */
	return 0;
}

/* The fillers read an eventfd of the task's own, above its fds. */
static int aio_child(struct rst_ctx *rc, struct rtask *t)
{
	struct aio_rst *a = t->img[PART_AIO];
	size_t i;
	int fd;

	for (i = 0; a && i < a->e->n_rings; i++)
		if (a->e->rings[i]->tail || a->e->rings[i]->head)
			break;
	if (!a || i == a->e->n_rings)
		return 0;
	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0) {
		pr_perror("Task %d: can't make the eventfd aio rings are refilled with", t->pid);
		return -1;
	}
	a->evfd = rst_private_fd(t, fd);
	return a->evfd < 0 ? -1 : 0;
}

/* The fillers' data: one iocb that every slot of the array names. */
static int put_fillers(struct aio_rst *a, struct batch *b)
{
	struct iocb cb = {
		.aio_lio_opcode = IOCB_CMD_PREAD,
		.aio_fildes = a->evfd,
		.aio_data = 0xa10f111e,
	};
	uint64_t ptrs[AIO_CHUNK];
	struct timespec ts = { .tv_sec = 1 };
	int i;

	a->iocb = batch_put(b, &cb, sizeof(cb));
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

static int aio_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct aio_rst *a = t->img[PART_AIO];
	AioRingEntry *r;
	uint64_t slot;
	size_t i;

	if (!a)
		return 0;
	if (a->evfd >= 0 && put_fillers(a, b))
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
	return 0;
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
	.check = aio_check,
	.dump = aio_dump,
	.load = aio_load,
	.child = aio_child,
	.batch = aio_batch,
	.final = aio_final,
	.release = aio_release,
};
