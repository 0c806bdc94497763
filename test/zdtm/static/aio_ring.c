// SPDX-License-Identifier: GPL-2.0-only
/*
 * aio rings (io_setup) come back where they were, with the events that
 * completed and were not reaped. Each ring gets reads and writes of a
 * file, some reaped and some left in the ring; the second ring of
 * aio_rings (a bigger one) is first driven round so that what is left
 * wraps past its end. After restore: the ring is at the same address with
 * the same header (nr, head, tail), io_getevents() gives back exactly the
 * events left, in order (data, obj, res), the buffers the reads filled
 * hold the file's bytes, and new requests complete in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef AIO_RINGS
#define AIO_RINGS	1
#endif

#define BLK		4096
#define NR_BLKS		16
#define LEFT		5	/* events left in each ring */
#define AIO_MAGIC	0xa10a10a1

struct ring_hdr {
	unsigned int id, nr, head, tail, magic, compat, incompat, hdr_len;
};

struct ring {
	unsigned int nr_events;	/* asked of io_setup */
	unsigned int wrap;	/* drive it round to head + this before the test */
	aio_context_t ctx;
	struct iocb cb[LEFT + 3];
	struct io_event left[LEFT];
	struct ring_hdr hdr;
	char *buf[LEFT + 3];
};

static struct ring rings[] = {
	{ .nr_events = 128 },
	{ .nr_events = 1000, .wrap = 5 },
};

static int fd;

static long io_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(__NR_io_setup, nr, ctx);
}

static long io_submit(aio_context_t ctx, long nr, struct iocb **cbs)
{
	return syscall(__NR_io_submit, ctx, nr, cbs);
}

static long io_getevents(aio_context_t ctx, long min, long nr, struct io_event *ev,
			 struct timespec *ts)
{
	return syscall(__NR_io_getevents, ctx, min, nr, ev, ts);
}

static char pattern(int blk, int i)
{
	return (char)(blk * 31 + i * 7 + 1);
}

static void prep(struct iocb *cb, int write, char *buf, int blk, uint64_t data)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
	cb->aio_fildes = fd;
	cb->aio_buf = (uintptr_t)buf;
	cb->aio_nbytes = BLK;
	cb->aio_offset = (int64_t)blk * BLK;
	cb->aio_data = data;
}

static void submit(struct ring *r, struct iocb *cb)
{
	long ret = io_submit(r->ctx, 1, &cb);

	if (ret != 1)
		fail("io_submit: %ld %m", ret);
}

static struct ring_hdr *hdr(struct ring *r)
{
	return (struct ring_hdr *)(uintptr_t)r->ctx;
}

/* Requests and reaps reads until the tail is r->wrap before the ring's end. */
static void drive_round(struct ring *r)
{
	static char scratch[BLK];
	struct io_event ev;
	struct iocb cb;

	prep(&cb, 0, scratch, 0, 1);
	while (hdr(r)->tail != hdr(r)->nr - r->wrap) {
		submit(r, &cb);
		if (io_getevents(r->ctx, 1, 1, &ev, NULL) != 1)
			fail("io_getevents of a filler: %m");
	}
}

static void setup_ring(struct ring *r, int k)
{
	struct timespec ts = { .tv_sec = 5 };
	struct io_event ev[3];
	int i, blk;

	if (io_setup(r->nr_events, &r->ctx))
		fail_errno("io_setup(%u)", r->nr_events);
	if (r->wrap)
		drive_round(r);
	/* 3 reaped, then LEFT more left: reads, and a write of a block of its own */
	for (i = 0; i < LEFT + 3; i++) {
		blk = (k * (LEFT + 3) + i) % (NR_BLKS - 2);
		r->buf[i] = malloc(BLK);
		if (!r->buf[i])
			fail_errno("malloc");
		memset(r->buf[i], 0, BLK);
		if (i == LEFT + 1) {
			memset(r->buf[i], 'w' + k, BLK);
			blk = NR_BLKS - 2 + k;
		}
		prep(&r->cb[i], i == LEFT + 1, r->buf[i], blk, 1000 * (k + 1) + i);
		submit(r, &r->cb[i]);
		if (i == 2 && io_getevents(r->ctx, 3, 3, ev, &ts) != 3)
			fail("io_getevents of the first three: %m");
	}
	/* buffered I/O on a regular file completes in io_submit: nothing is in flight */
	if ((hdr(r)->tail + hdr(r)->nr - hdr(r)->head) % hdr(r)->nr != LEFT)
		fail("ring %d holds %u events, not %d", k,
		     (hdr(r)->tail + hdr(r)->nr - hdr(r)->head) % hdr(r)->nr, LEFT);
	for (i = 0; i < LEFT; i++)
		r->left[i] = ((struct io_event *)(hdr(r) + 1))[(hdr(r)->head + i) % hdr(r)->nr];
	r->hdr = *hdr(r);
	test_msg("ring %d at %#lx: nr %u, head %u, tail %u\n", k, (unsigned long)r->ctx,
		 r->hdr.nr, r->hdr.head, r->hdr.tail);
}

static void check_left(struct ring *r, int k)
{
	struct timespec zero = { 0 };
	struct io_event ev[LEFT + 1];
	long n;
	int i;

	if (hdr(r)->magic != AIO_MAGIC || hdr(r)->nr != r->hdr.nr ||
	    hdr(r)->head != r->hdr.head || hdr(r)->tail != r->hdr.tail)
		fail("ring %d: header nr %u head %u tail %u magic %#x, was %u %u %u", k,
		     hdr(r)->nr, hdr(r)->head, hdr(r)->tail, hdr(r)->magic, r->hdr.nr,
		     r->hdr.head, r->hdr.tail);
	n = io_getevents(r->ctx, 0, LEFT + 1, ev, &zero);
	if (n != LEFT)
		fail("ring %d: io_getevents gave %ld events (%m), not %d", k, n, LEFT);
	for (i = 0; i < LEFT; i++)
		if (ev[i].data != r->left[i].data || ev[i].obj != r->left[i].obj ||
		    ev[i].res != r->left[i].res || ev[i].res2 != r->left[i].res2)
			fail("ring %d: event %d is %llu/%#llx/%lld, was %llu/%#llx/%lld", k, i,
			     ev[i].data, ev[i].obj, ev[i].res, r->left[i].data,
			     r->left[i].obj, r->left[i].res);
	for (i = 0; i < LEFT + 3; i++) {
		int blk = r->cb[i].aio_offset / BLK, j;

		if (r->cb[i].aio_lio_opcode != IOCB_CMD_PREAD)
			continue;
		for (j = 0; j < BLK; j++)
			if (r->buf[i][j] != pattern(blk, j))
				fail("ring %d: read %d has %#x at %d", k, i, r->buf[i][j], j);
	}
}

/* The ring still takes requests: a read of the block ring @k wrote. */
static void check_new(struct ring *r, int k)
{
	struct timespec ts = { .tv_sec = 5 };
	char buf[BLK], want[BLK];
	struct io_event ev;
	struct iocb cb;

	prep(&cb, 0, buf, NR_BLKS - 2 + k, 4242);
	submit(r, &cb);
	if (io_getevents(r->ctx, 1, 1, &ev, &ts) != 1)
		fail("ring %d: no event for a new read: %m", k);
	memset(want, 'w' + k, BLK);
	if (ev.data != 4242 || ev.res != BLK || memcmp(buf, want, BLK))
		fail("ring %d: the new read gave %llu/%lld", k, ev.data, ev.res);
	if (syscall(__NR_io_destroy, r->ctx))
		fail_errno("io_destroy of ring %d", k);
}

int main(int argc, char **argv)
{
	char blk[BLK];
	int i, j;

	test_init(argc, argv);
	fd = open("aio_ring.data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fail_errno("open");
	for (i = 0; i < NR_BLKS; i++) {
		for (j = 0; j < BLK; j++)
			blk[j] = pattern(i, j);
		if (write(fd, blk, BLK) != BLK)
			fail_errno("write");
	}
	for (i = 0; i < AIO_RINGS; i++)
		setup_ring(&rings[i], i);

	test_ready();
	test_waitsig();

	for (i = 0; i < AIO_RINGS; i++)
		check_left(&rings[i], i);
	for (i = 0; i < AIO_RINGS; i++)
		check_new(&rings[i], i);
	pass();
}
