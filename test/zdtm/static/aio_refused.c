// SPDX-License-Identifier: GPL-2.0-only
/*
 * aio rings criu must refuse to dump, one per run (test_aio.py picks it
 * with an argument):
 *   full     more completed events wait to be reaped than half the ring:
 *            the restore could not be sure to queue them all again;
 *   damaged  the task wrote over its ring's magic: it is no ring criu
 *            knows how to read.
 * Whatever the dump did, the ring is as it was afterwards: the events are
 * still there to reap, and new requests complete.
 */
#include <fcntl.h>
#include <linux/aio_abi.h>
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

static aio_context_t ctx;
static struct ring_hdr *hdr, saved;
static int fd, left;
static char buf[64];

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

static void check(void)
{
	struct timespec ts = { .tv_sec = 5 };
	struct io_event ev;
	int i;

	if (hdr->head != saved.head || hdr->tail != saved.tail || hdr->magic != saved.magic)
		fail("the ring's header changed: head %u tail %u magic %#x, was %u %u %#x",
		     hdr->head, hdr->tail, hdr->magic, saved.head, saved.tail, saved.magic);
	hdr->magic = AIO_MAGIC;
	for (i = 0; i < left; i++)
		if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, &ts) != 1 ||
		    ev.data != (uint64_t)i || ev.res != sizeof(buf))
			fail("event %d is missing or changed (%llu, %lld)", i, ev.data, ev.res);
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
	if (!strcmp(what, "full")) {
		/* buffered reads of a file complete in io_submit */
		while (pending() <= (hdr->nr - 1) / 2)
			submit_read(left++);
	} else if (!strcmp(what, "damaged")) {
		submit_read(left++);
		hdr->magic = 0xdeadbeef;
	} else {
		fail("unknown case '%s'", what);
	}
	saved = *hdr;
	test_ready();
	test_waitsig();
	check();
	pass();
}
