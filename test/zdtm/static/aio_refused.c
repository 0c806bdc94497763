// SPDX-License-Identifier: GPL-2.0-only
/*
 * aio rings criu must refuse to dump, one per run (test_aio.py picks it
 * with an argument):
 *   full     more completed events wait to be reaped than half the ring:
 *            the restore could not be sure to queue them all again;
 *   damaged  the task wrote over its ring's magic: it is no ring criu
 *            knows how to read;
 *   inflight an IOCB_CMD_POLL of an empty pipe, in flight until the pipe
 *            has data, beside a completed read not reaped;
 *   idle     only the completed read: not refused, for a dump criu is
 *            killed in the middle of (its fillers must be gone by then).
 * Whatever the dump did, the ring is as it was afterwards: the events are
 * still there to reap, and new requests complete; the poll is still in
 * flight and completes once the pipe has data. (The dump takes free slots
 * with requests of its own to count those in flight, and takes their
 * events out again: head and tail may have moved on by as many, the
 * events between them are the same.)
 */
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define AIO_MAGIC	0xa10a10a1

struct ring_hdr {
	unsigned int id, nr, head, tail, magic, compat, incompat, hdr_len;
};

#define POLL_DATA	777

static aio_context_t ctx;
static struct ring_hdr *hdr, saved;
static int fd, left, exact, pfd[2] = { -1, -1 };
static char buf[64];
static struct iocb poll_cb;

static void submit_read(uint64_t data)
{
	struct iocb cb = {
		.aio_lio_opcode = IOCB_CMD_PREAD,
		.aio_fildes = fd,
		.aio_buf = (uintptr_t)buf,
		.aio_nbytes = sizeof(buf),
		.aio_data = data,
	};
	struct iocb *p = &cb;

	if (syscall(__NR_io_submit, ctx, 1, &p) != 1)
		fail_errno("io_submit");
}

static unsigned int pending(void)
{
	return (hdr->tail + hdr->nr - hdr->head) % hdr->nr;
}

static void submit_poll(void)
{
	struct iocb *p = &poll_cb;

	if (pipe(pfd))
		fail_errno("pipe");
	poll_cb.aio_lio_opcode = IOCB_CMD_POLL;
	poll_cb.aio_fildes = pfd[0];
	poll_cb.aio_buf = POLLIN;
	poll_cb.aio_data = POLL_DATA;
	if (syscall(__NR_io_submit, ctx, 1, &p) != 1)
		fail_errno("io_submit of a poll");
}

/* The poll is still in flight: nothing more to reap until the pipe has data. */
static void check_poll(void)
{
	struct timespec zero = { 0 }, ts = { .tv_sec = 5 };
	struct io_event ev;

	if (syscall(__NR_io_getevents, ctx, 0, 1, &ev, &zero) != 0)
		fail("an event (%llu) came before the pipe had data", ev.data);
	if (write(pfd[1], "x", 1) != 1)
		fail_errno("write to the pipe");
	if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, &ts) != 1 || ev.data != POLL_DATA ||
	    !(ev.res & POLLIN))
		fail("the poll did not complete (%llu, %#llx)", ev.data, ev.res);
}

static void check(void)
{
	struct timespec ts = { .tv_sec = 5 };
	struct io_event ev;
	int i;

	if (pending() != (saved.tail + saved.nr - saved.head) % saved.nr ||
	    hdr->magic != saved.magic || (exact && hdr->head != saved.head))
		fail("the ring's header changed: head %u tail %u magic %#x, was %u %u %#x",
		     hdr->head, hdr->tail, hdr->magic, saved.head, saved.tail, saved.magic);
	hdr->magic = AIO_MAGIC;
	for (i = 0; i < left; i++)
		if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, &ts) != 1 ||
		    ev.data != (uint64_t)i || ev.res != sizeof(buf))
			fail("event %d is missing or changed (%llu, %lld)", i, ev.data, ev.res);
	if (pfd[0] >= 0)
		check_poll();
	submit_read(4242);
	if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, &ts) != 1 || ev.data != 4242)
		fail("a new read did not complete");
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";

	test_init(argc, argv);
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		fail_errno("open");
	if (syscall(__NR_io_setup, 1, &ctx))
		fail_errno("io_setup");
	hdr = (struct ring_hdr *)(uintptr_t)ctx;
	/* refused before criu's fillers went in: head and tail did not move */
	exact = !strcmp(what, "full") || !strcmp(what, "damaged");
	if (!strcmp(what, "full")) {
		/* buffered reads of a file complete in io_submit */
		while (pending() <= (hdr->nr - 1) / 2)
			submit_read(left++);
	} else if (!strcmp(what, "damaged")) {
		submit_read(left++);
		hdr->magic = 0xdeadbeef;
	} else if (!strcmp(what, "idle")) {
		submit_read(left++);
	} else if (!strcmp(what, "inflight")) {
		submit_read(left++);
		submit_poll();
	} else {
		fail("unknown case '%s'", what);
	}
	saved = *hdr;
	test_ready();
	test_waitsig();
	check();
	pass();
}
