// SPDX-License-Identifier: GPL-2.0-only
/*
 * Socket pairs between a parent and its child, stream, datagram and
 * seqpacket, with data queued both ways and not read yet. After restore
 * each side reads exactly what the other had sent, datagrams and packets
 * one by one with their boundaries; the pairs still connect the two (a
 * new message goes through), and when the parent closes its end of the
 * stream the child sees EOF.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtm.h"
#include "files_lib.h"

#define STREAM_BYTES	(100 << 10)
#define NR_MSGS		5

static int st[2], dg[2], sp[2];
static unsigned char buf[STREAM_BYTES + 1], want[STREAM_BYTES];

static size_t msg_len(int seed, int i)
{
	return 1 + (test_pattern(seed, i) % 3000);
}

static void fill(unsigned char *b, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = test_pattern(seed, i) & 0xff;
}

static int send_msgs(int sk, int seed)
{
	int i;

	for (i = 0; i < NR_MSGS; i++) {
		fill(buf, msg_len(seed, i), seed + i);
		if (send(sk, buf, msg_len(seed, i), 0) != (ssize_t)msg_len(seed, i))
			return -1;
	}
	return 0;
}

/* Every message of @seed, one per recv, and nothing more. */
static const char *recv_msgs(int sk, int seed)
{
	int i;

	for (i = 0; i < NR_MSGS; i++) {
		fill(want, msg_len(seed, i), seed + i);
		if (recv(sk, buf, sizeof(buf), MSG_DONTWAIT) != (ssize_t)msg_len(seed, i) ||
		    memcmp(buf, want, msg_len(seed, i)))
			return "a message differs or lost its boundaries";
	}
	if (recv(sk, buf, sizeof(buf), MSG_DONTWAIT) != -1 || errno != EAGAIN)
		return "more messages than were queued";
	return NULL;
}

/* @len bytes of pattern @seed; with @last, nothing after them yet */
static const char *recv_stream(int sk, size_t len, int seed, int last)
{
	size_t done = 0;
	ssize_t n;

	fill(want, len, seed);
	while (done < len) {
		n = recv(sk, buf + done, len - done, MSG_DONTWAIT);
		if (n <= 0)
			return "the stream ends too early";
		done += n;
	}
	if (memcmp(buf, want, len))
		return "the stream differs";
	if (last && (recv(sk, buf, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN))
		return "more stream data than was queued";
	return NULL;
}

static void child_setup(void)
{
	close(st[0]);
	close(dg[0]);
	close(sp[0]);
	fill(buf, 1000, 11);
	if (write(st[1], buf, 1000) != 1000 || send_msgs(dg[1], 20) || send_msgs(sp[1], 30))
		_exit(2);
}

static const char *child_check(void)
{
	const char *why;

	if ((why = recv_stream(st[1], STREAM_BYTES, 10, 0)) || (why = recv_msgs(dg[1], 40)) ||
	    (why = recv_msgs(sp[1], 50)))
		return why;
	/* then the parent's new message, and EOF: it closed its end */
	if (recv(st[1], buf, 10, 0) != 3 || memcmp(buf, "new", 3) || recv(st[1], buf, 1, 0) != 0)
		return "no new message and EOF on the stream";
	if (send(dg[1], "dg", 2, 0) != 2 || send(sp[1], "sp", 2, 0) != 2)
		return "can't send to the parent";
	return NULL;
}

int main(int argc, char **argv)
{
	const char *why;
	pid_t child;

	test_init(argc, argv);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, st) || socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp))
		fail_errno("socketpair");
	child = fork_checker(child_setup, child_check);
	close(st[1]);
	close(dg[1]);
	close(sp[1]);
	fill(buf, STREAM_BYTES, 10);
	if (send(st[0], buf, STREAM_BYTES, 0) != STREAM_BYTES || send_msgs(dg[0], 40) ||
	    send_msgs(sp[0], 50))
		fail_errno("send");

	test_ready();
	test_waitsig();

	if ((why = recv_stream(st[0], 1000, 11, 1)) || (why = recv_msgs(dg[0], 20)) ||
	    (why = recv_msgs(sp[0], 30)))
		fail("parent: %s", why);
	if (send(st[0], "new", 3, 0) != 3)
		fail_errno("send new");
	close(st[0]);
	end_checker(child);
	if (recv(dg[0], buf, 10, 0) != 2 || memcmp(buf, "dg", 2) ||
	    recv(sp[0], buf, 10, 0) != 2 || memcmp(buf, "sp", 2))
		fail("nothing new from the child");
	pass();
}
