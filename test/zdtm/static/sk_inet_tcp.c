// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP sockets that are not connections: one never bound (with its
 * keepalive, TCP_NODELAY, SO_LINGER and buffer options), one bound and not
 * listening, a listener on 127.0.0.1 with SO_REUSEADDR whose port still
 * has a closed connection in TIME_WAIT (the restore must set the option
 * before it binds), one on [::1] (IPV6_V6ONLY), and a dual-stack listener
 * on [::] with TCP_CONGESTION reno. After the
 * restore each is where it was with its options, and every listener
 * accepts a new connection that carries data both ways.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

/* A new client connects to @lsk at @to; they exchange a message each way. */
static void serve_one(int lsk, const union addr *to, const char *what)
{
	struct pollfd p = { .fd = lsk, .events = POLLIN };
	int c, s;
	char buf[16];

	c = sk_new(to->sa.sa_family, SOCK_STREAM);
	if (connect(c, &to->sa, addr_len(to)))
		fail_errno("%s: connect", what);
	if (poll(&p, 1, 5000) != 1)
		fail("%s: no connection to accept", what);
	s = accept(lsk, NULL, NULL);
	if (s < 0 || write(c, "ping", 4) != 4 || read(s, buf, sizeof(buf)) != 4 ||
	    memcmp(buf, "ping", 4) || write(s, "pong", 4) != 4 ||
	    read(c, buf, sizeof(buf)) != 4 || memcmp(buf, "pong", 4))
		fail("%s: the accepted connection does not carry data", what);
	close(s);
	close(c);
}

/* A connection to @lsk, closed by the server first: its port keeps it in TIME_WAIT. */
static void time_wait(int lsk, const union addr *to)
{
	int c = sk_new(to->sa.sa_family, SOCK_STREAM), s;
	char b;

	if (connect(c, &to->sa, addr_len(to)))
		fail_errno("connect");
	s = accept(lsk, NULL, NULL);
	if (s < 0 || close(s) || read(c, &b, 1) != 0 || close(c))
		fail_errno("a closed connection");
}

int main(int argc, char **argv)
{
	union addr any = { .in = { .sin_family = AF_INET } }, b4, l4, l6, ld;
	int unbound, bound, lis4, lis6, dual, sndbuf, rcvbuf;
	struct linger lg = { 1, 7 }, lg2;
	socklen_t len;
	char cc[16] = "";

	test_init(argc, argv);
	unbound = sk_new(AF_INET, SOCK_STREAM);
	set(unbound, IPPROTO_TCP, TCP_NODELAY, 1);
	set(unbound, SOL_SOCKET, SO_KEEPALIVE, 1);
	set(unbound, IPPROTO_TCP, TCP_KEEPIDLE, 111);
	set(unbound, IPPROTO_TCP, TCP_KEEPINTVL, 22);
	set(unbound, IPPROTO_TCP, TCP_KEEPCNT, 3);
	set(unbound, SOL_SOCKET, SO_SNDBUF, 30000);
	set(unbound, SOL_SOCKET, SO_RCVBUF, 50000);
	if (setsockopt(unbound, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		fail_errno("SO_LINGER");
	sndbuf = opt(unbound, SOL_SOCKET, SO_SNDBUF);
	rcvbuf = opt(unbound, SOL_SOCKET, SO_RCVBUF);
	bound = sk_new(AF_INET, SOCK_STREAM);
	bind_to(bound, "127.0.0.1", &b4);
	lis4 = sk_new(AF_INET, SOCK_STREAM);
	set(lis4, SOL_SOCKET, SO_REUSEADDR, 1);
	bind_to(lis4, "127.0.0.1", &l4);
	if (listen(lis4, 7))
		fail_errno("listen");
	time_wait(lis4, &l4);
	lis6 = sk_new(AF_INET6, SOCK_STREAM);
	set(lis6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	bind_to(lis6, "::1", &l6);
	dual = sk_new(AF_INET6, SOCK_STREAM);
	set(dual, IPPROTO_IPV6, IPV6_V6ONLY, 0);
	if (setsockopt(dual, IPPROTO_TCP, TCP_CONGESTION, "reno", 4))
		fail_errno("TCP_CONGESTION");
	bind_to(dual, "::", &ld);
	if (listen(lis6, 3) || listen(dual, 128))
		fail_errno("listen");

	test_ready();
	test_waitsig();

	same_name(unbound, &any, "the unbound socket");
	same_name(bound, &b4, "the bound socket");
	same_name(lis4, &l4, "the v4 listener");
	same_name(lis6, &l6, "the v6 listener");
	same_name(dual, &ld, "the dual-stack listener");
	if (opt(unbound, IPPROTO_TCP, TCP_NODELAY) != 1 ||
	    opt(unbound, SOL_SOCKET, SO_KEEPALIVE) != 1 ||
	    opt(unbound, IPPROTO_TCP, TCP_KEEPIDLE) != 111 ||
	    opt(unbound, IPPROTO_TCP, TCP_KEEPINTVL) != 22 ||
	    opt(unbound, IPPROTO_TCP, TCP_KEEPCNT) != 3 ||
	    opt(unbound, SOL_SOCKET, SO_SNDBUF) != sndbuf ||
	    opt(unbound, SOL_SOCKET, SO_RCVBUF) != rcvbuf)
		fail("an option of the unbound socket is not as it was");
	len = sizeof(lg2);
	if (getsockopt(unbound, SOL_SOCKET, SO_LINGER, &lg2, &len) || !lg2.l_onoff ||
	    lg2.l_linger != 7)
		fail("SO_LINGER is not as it was");
	if (opt(lis4, SOL_SOCKET, SO_ACCEPTCONN) != 1 || opt(bound, SOL_SOCKET, SO_ACCEPTCONN) ||
	    opt(lis4, SOL_SOCKET, SO_REUSEADDR) != 1 || opt(dual, SOL_SOCKET, SO_REUSEADDR) != 0 ||
	    opt(lis6, IPPROTO_IPV6, IPV6_V6ONLY) != 1 || opt(dual, IPPROTO_IPV6, IPV6_V6ONLY))
		fail("a listener is not as it was");
	len = sizeof(cc) - 1;
	if (getsockopt(dual, IPPROTO_TCP, TCP_CONGESTION, cc, &len) || strcmp(cc, "reno"))
		fail("TCP_CONGESTION is %s, not reno", cc);
	serve_one(lis4, &l4, "the v4 listener");
	serve_one(lis6, &l6, "the v6 listener");
	serve_one(dual, &ld, "the dual-stack listener over IPv6");
	to_v4_loopback(&ld);
	serve_one(dual, &ld, "the dual-stack listener over IPv4");
	if (listen(bound, 1))
		fail_errno("the bound socket can't listen");
	serve_one(bound, &b4, "the bound socket, listening now");
	pass();
}
