// SPDX-License-Identifier: GPL-2.0-only
/*
 * Established TCP connections (--tcp-established), over IPv4 and IPv6
 * loopback, both ends in the task: on each, the client sent a greeting the
 * server has not read, the server sent a stream the client read only in
 * part, and the client filled its send buffer until the server's receive
 * window closed (bytes still to be sent, bytes unread). After the restore
 * every byte arrives in order (checked against the pattern), both
 * directions carry new data, the addresses and TCP_NODELAY are as they
 * were.
 */
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
};

/* The client's writes until its buffer is full (the server reads nothing). */
static size_t fill(int c, const char *what)
{
	unsigned char buf[4096];
	size_t total = 0, j;
	ssize_t w;

	if (fcntl(c, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	for (;;) {
		for (j = 0; j < sizeof(buf); j++)
			buf[j] = pattern(total + j, 2);
		w = write(c, buf, sizeof(buf));
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0)
			fail_errno("%s: fill", what);
		total += w;
	}
	if (fcntl(c, F_SETFL, 0))
		fail_errno("O_NONBLOCK off");
	return total;
}

static void setup(struct conn *k, const char *ip, const char *what)
{
	int l = sk_new(strchr(ip, ':') ? AF_INET6 : AF_INET, SOCK_STREAM);
	socklen_t len = sizeof(k->cname);
	union addr la;

	k->what = what;
	bind_to(l, ip, &la);
	k->c = sk_new(la.sa.sa_family, SOCK_STREAM);
	set(k->c, IPPROTO_TCP, TCP_NODELAY, 1);
	set(k->c, SOL_SOCKET, SO_SNDBUF, 64 << 10);
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
	k->filled = fill(k->c, what);
}

static void check(struct conn *k)
{
	union addr peer;
	socklen_t len = sizeof(peer);
	char buf[8];

	same_name(k->c, &k->cname, k->what);
	same_name(k->s, &k->sname, k->what);
	if (getpeername(k->c, &peer.sa, &len) || memcmp(&peer, &k->sname, len))
		fail("%s: the client is not connected to the server", k->what);
	if (opt(k->c, IPPROTO_TCP, TCP_NODELAY) != 1)
		fail("%s: TCP_NODELAY is off", k->what);
	if (read(k->s, buf, 5) != 5 || memcmp(buf, "hello", 5))
		fail("%s: the greeting is lost", k->what);
	read_check(k->c, CLIENT_READ, STREAM - CLIENT_READ, 1, k->what);
	read_check(k->s, 0, k->filled, 2, k->what);
	write_all(k->c, k->filled, 50000, 2, k->what);
	read_check(k->s, k->filled, 50000, 2, k->what);
	write_all(k->s, STREAM, 50000, 1, k->what);
	read_check(k->c, STREAM, 50000, 1, k->what);
}

int main(int argc, char **argv)
{
	struct conn v4, v6;

	test_init(argc, argv);
	setup(&v4, "127.0.0.1", "the IPv4 connection");
	setup(&v6, "::1", "the IPv6 connection");
	test_msg("the clients queued %zu and %zu bytes", v4.filled, v6.filled);

	test_ready();
	test_waitsig();

	check(&v4);
	check(&v6);
	pass();
}
