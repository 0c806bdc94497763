// SPDX-License-Identifier: GPL-2.0-only
/*
 * Established TCP connections (--tcp-established), over IPv4 and IPv6
 * loopback, both ends in the task: on each, the client sent a greeting the
 * server has not read, the server sent a stream the client read only in
 * part, and the client filled its send buffer until the server's receive
 * window closed (bytes still to be sent, bytes unread). After the restore
 * every byte arrives in order (checked against the pattern), both
 * directions carry new data, the addresses and TCP_NODELAY are as they
 * were. A third connection carried 8 MiB first (its window grew), then
 * got the smallest send buffer and was filled by 64 KiB writes: one
 * write's bytes sit in its queue, far more than the buffer (the kernel
 * takes a whole write, up to half the window, into one skb), which a
 * refill in smaller writes cannot put back unless the buffer is made
 * roomy meanwhile; its size is as it was after the restore.
 */
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

#define STREAM		(96 << 10)	/* the server's stream to the client */
#define CLIENT_READ	(20 << 10)	/* what the client read of it before the dump */

struct conn {
	const char *what;
	int c, s;			/* the client's end, the server's */
	union addr cname, sname;	/* the client's address, the server's */
	size_t filled;			/* what the client queued until its buffer was full */
	size_t warm;			/* what the server read of the client's stream first */
	int sndbuf;			/* the client's SO_SNDBUF, once warm (as set, then as read) */
	size_t wsize;			/* the client's writes, filling it */
};

/* The client's writes of @k->wsize until its buffer is full (the server reads nothing). */
static size_t fill(struct conn *k)
{
	unsigned char *buf = malloc(k->wsize);
	size_t total = 0, j;
	ssize_t w;

	if (!buf)
		fail_errno("%s: fill buffer", k->what);
	if (fcntl(k->c, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	for (;;) {
		for (j = 0; j < k->wsize; j++)
			buf[j] = pattern(k->warm + total + j, 2);
		w = write(k->c, buf, k->wsize);
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0)
			fail_errno("%s: fill", k->what);
		total += w;
	}
	if (fcntl(k->c, F_SETFL, 0))
		fail_errno("O_NONBLOCK off");
	free(buf);
	return total;
}

/*
 * @k->warm bytes from the client to the server, read as they come: the
 * window grows, and with it the writes the kernel takes in one skb (up to
 * half the largest window).
 */
static void warm_up(struct conn *k)
{
	unsigned char buf[64 << 10];
	size_t sent = 0, got = 0, j;
	ssize_t w;

	if (fcntl(k->c, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	while (got < k->warm) {
		if (sent < k->warm) {
			w = min_sz(sizeof(buf), k->warm - sent);
			for (j = 0; j < (size_t)w; j++)
				buf[j] = pattern(sent + j, 2);
			w = write(k->c, buf, w);
			if (w < 0 && errno != EAGAIN)
				fail_errno("%s: warm-up write", k->what);
			sent += w > 0 ? w : 0;
		}
		w = min_sz(sent - got, 4096);
		read_check(k->s, got, w, 2, k->what);
		got += w;
	}
	if (fcntl(k->c, F_SETFL, 0))
		fail_errno("O_NONBLOCK off");
}

static void setup(struct conn *k, const char *ip, const char *what, size_t warm, int sndbuf,
		  size_t wsize)
{
	int l = sk_new(strchr(ip, ':') ? AF_INET6 : AF_INET, SOCK_STREAM);
	socklen_t len = sizeof(k->cname);
	union addr la;
	char buf[8];

	k->what = what;
	k->warm = warm;
	k->sndbuf = sndbuf;
	k->wsize = wsize;
	bind_to(l, ip, &la);
	k->c = sk_new(la.sa.sa_family, SOCK_STREAM);
	set(k->c, IPPROTO_TCP, TCP_NODELAY, 1);
	if (listen(l, 1) || connect(k->c, &la.sa, addr_len(&la)))
		fail_errno("%s: connect", what);
	k->s = accept(l, NULL, NULL);
	if (k->s < 0 || getsockname(k->c, &k->cname.sa, &len))
		fail_errno("%s: accept", what);
	len = sizeof(k->sname);
	if (getsockname(k->s, &k->sname.sa, &len))
		fail_errno("%s: getsockname", what);
	close(l);
	if (write(k->c, "hello", 5) != 5)
		fail_errno("%s: greeting", what);
	write_all(k->s, 0, STREAM, 1, what);
	read_check(k->c, 0, CLIENT_READ, 1, what);
	if (read(k->s, buf, 5) != 5 || memcmp(buf, "hello", 5))
		fail_errno("%s: greeting", what);
	warm_up(k);
	set(k->c, SOL_SOCKET, SO_SNDBUF, k->sndbuf);
	k->sndbuf = opt(k->c, SOL_SOCKET, SO_SNDBUF);
	k->filled = fill(k);
}

static void check(struct conn *k)
{
	union addr peer;
	socklen_t len = sizeof(peer);

	same_name(k->c, &k->cname, k->what);
	same_name(k->s, &k->sname, k->what);
	if (getpeername(k->c, &peer.sa, &len) || memcmp(&peer, &k->sname, len))
		fail("%s: the client is not connected to the server", k->what);
	if (opt(k->c, IPPROTO_TCP, TCP_NODELAY) != 1)
		fail("%s: TCP_NODELAY is off", k->what);
	if (opt(k->c, SOL_SOCKET, SO_SNDBUF) != k->sndbuf)
		fail("%s: the send buffer is %d, not %d", k->what, opt(k->c, SOL_SOCKET, SO_SNDBUF),
		     k->sndbuf);
	read_check(k->c, CLIENT_READ, STREAM - CLIENT_READ, 1, k->what);
	read_check(k->s, k->warm, k->filled, 2, k->what);
	write_all(k->c, k->warm + k->filled, 50000, 2, k->what);
	read_check(k->s, k->warm + k->filled, 50000, 2, k->what);
	write_all(k->s, STREAM, 50000, 1, k->what);
	read_check(k->c, STREAM, 50000, 1, k->what);
}

int main(int argc, char **argv)
{
	struct conn v4, v6, small;

	test_init(argc, argv);
	setup(&v4, "127.0.0.1", "the IPv4 connection", 0, 64 << 10, 4096);
	setup(&v6, "::1", "the IPv6 connection", 0, 64 << 10, 4096);
	/* the kernel raises SO_SNDBUF 1 to its least (about 4.5 KiB) */
	setup(&small, "127.0.0.1", "the small-buffer connection", 8 << 20, 1, 64 << 10);
	test_msg("the clients queued %zu, %zu and %zu bytes (send buffer %d)", v4.filled,
		 v6.filled, small.filled, opt(small.c, SOL_SOCKET, SO_SNDBUF));

	test_ready();
	test_waitsig();

	check(&v4);
	check(&v6);
	check(&small);
	pass();
}
