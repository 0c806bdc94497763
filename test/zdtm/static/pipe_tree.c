// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipes between a parent and its child with data nobody read yet: one
 * each way, the first enlarged to 256 KiB and holding more than the
 * default 64 KiB, and a FIFO (opened by path) holding data too. After
 * restore each reader gets exactly the bytes that were queued, the sizes
 * are as set, and once the writer closes its end the reader sees EOF: no
 * stray copy of a write end is left open anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"
#include "files_lib.h"

#define BIG		(200 << 10)
#define BIG_PIPE	(256 << 10)
#define SMALL		777
#define FIFO_DATA	4321

static int down[2], up[2], fifo_r, fifo_w;
static char fifo[64];

static void fill(unsigned char *buf, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = test_pattern(seed, i) & 0xff;
}

/*
 * Reads exactly @len bytes of pattern @seed from @fd, then expects EOF
 * (@eof 1) or nothing more (0); -1: more data follows.
 */
static const char *drain(int fd, size_t len, int seed, int eof)
{
	static unsigned char want[BIG], got[BIG + 1];
	size_t done = 0;
	ssize_t n;

	fill(want, len, seed);
	while (done < len) {
		n = read(fd, got + done, len - done);
		if (n <= 0)
			return "the data ends too early";
		done += n;
	}
	if (done != len || memcmp(want, got, len))
		return "the data differs";
	if (eof < 0)
		return NULL;	/* more follows */
	n = read(fd, got, 1);
	if (eof && n != 0)
		return "no EOF after the data: a write end is still open somewhere";
	if (!eof && (n != -1 || errno != EAGAIN))
		return "more data than was queued";
	return NULL;
}

static void child_setup(void)
{
	static unsigned char buf[SMALL];

	close(down[1]);
	close(up[0]);
	close(fifo_w);
	fill(buf, SMALL, 2);
	if (write(up[1], buf, SMALL) != SMALL)
		_exit(2);
}

static const char *child_check(void)
{
	static unsigned char buf[SMALL];
	const char *why;

	if (fcntl(down[0], F_GETPIPE_SZ) != BIG_PIPE)
		return "the big pipe has another size";
	why = drain(down[0], BIG, 1, 1);
	if (why)
		return why;
	fcntl(fifo_r, F_SETFL, O_NONBLOCK);
	why = drain(fifo_r, FIFO_DATA, 3, 0);
	if (why)
		return why;
	/* and the other way, more to come after what was queued */
	fill(buf, SMALL, 4);
	if (write(up[1], buf, SMALL) != SMALL)
		return "write up";
	return NULL;
}

int main(int argc, char **argv)
{
	static unsigned char buf[BIG];
	const char *why;
	pid_t child;

	test_init(argc, argv);
	snprintf(fifo, sizeof(fifo), "%s.fifo", test_name);
	unlink(fifo);
	if (pipe(down) || pipe(up) || mkfifo(fifo, 0600))
		fail_errno("pipe");
	fifo_r = open(fifo, O_RDONLY | O_NONBLOCK);
	fifo_w = open(fifo, O_WRONLY);
	if (fifo_r < 0 || fifo_w < 0 || fcntl(fifo_r, F_SETFL, 0))
		fail_errno("fifo");
	if (fcntl(down[1], F_SETPIPE_SZ, BIG_PIPE) != BIG_PIPE)
		fail_errno("F_SETPIPE_SZ");
	child = fork_checker(child_setup, child_check);
	close(down[0]);
	close(up[1]);
	close(fifo_r);
	fill(buf, BIG, 1);
	if (write(down[1], buf, BIG) != BIG)
		fail_errno("write down");
	fill(buf, FIFO_DATA, 3);
	if (write(fifo_w, buf, FIFO_DATA) != FIFO_DATA)
		fail_errno("write fifo");

	test_ready();
	test_waitsig();

	/* the child reads to EOF: the tree's only write end goes first */
	close(down[1]);
	end_checker(child);
	why = drain(up[0], SMALL, 2, -1);
	if (!why)
		why = drain(up[0], SMALL, 4, 1);
	if (why)
		fail("pipe from the child: %s", why);
	close(fifo_w);
	unlink(fifo);
	pass();
}
