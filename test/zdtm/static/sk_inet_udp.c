// SPDX-License-Identifier: GPL-2.0-only
/*
 * UDP sockets, IPv4 and IPv6: one never bound, one bound to 127.0.0.1, one
 * connected to it (and shut down for reading), one bound to [::1] with
 * IPV6_V6ONLY, a dual-stack one on [::] that a v4 datagram reaches, and
 * their options (SO_REUSEADDR, SO_RCVBUF, SO_MARK, SO_PRIORITY, IP_TOS,
 * IPV6_TCLASS, SO_TIMESTAMP, SO_BINDTODEVICE, O_NONBLOCK). After the
 * restore each has its addresses and options, and datagrams go both ways.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

/* @from sends @msg to @to (NULL: its peer); @at must get it */
static void datagram(int from, const union addr *to, int at, const char *msg, const char *what)
{
	socklen_t len = to ? (to->sa.sa_family == AF_INET6 ? sizeof(to->in6) : sizeof(to->in)) : 0;
	char buf[64];
	ssize_t n;

	if (sendto(from, msg, strlen(msg), 0, to ? &to->sa : NULL, len) != (ssize_t)strlen(msg))
		fail_errno("%s: send", what);
	n = recv(at, buf, sizeof(buf), 0);
	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n))
		fail("%s: got %zd bytes, not %s", what, n, msg);
}

int main(int argc, char **argv)
{
	union addr a4, c4, a6, ad, peer, any4 = { .in = { .sin_family = AF_INET } };
	int unbound, bound, conn, v6, dual, out4, out6, rcvbuf, tos;
	socklen_t len = sizeof(peer);
	struct timeval tv = { 5, 0 };
	char dev[IFNAMSIZ] = "";
	struct pollfd p;

	test_init(argc, argv);
	unbound = sk_new(AF_INET, SOCK_DGRAM);
	bound = sk_new(AF_INET, SOCK_DGRAM);
	conn = sk_new(AF_INET, SOCK_DGRAM);
	v6 = sk_new(AF_INET6, SOCK_DGRAM);
	dual = sk_new(AF_INET6, SOCK_DGRAM);
	set(unbound, SOL_SOCKET, SO_PRIORITY, 5);
	set(bound, SOL_SOCKET, SO_REUSEADDR, 1);
	set(bound, SOL_SOCKET, SO_RCVBUF, 40000);
	set(bound, SOL_SOCKET, SO_TIMESTAMP, 1);
	set(bound, IPPROTO_IP, IP_TOS, 0x10);
	set(bound, SOL_SOCKET, SO_MARK, 77);
	if (setsockopt(bound, SOL_SOCKET, SO_BINDTODEVICE, "lo", 2))
		fail_errno("SO_BINDTODEVICE");
	bind_to(bound, "127.0.0.1", &a4);
	bind_to(conn, "127.0.0.1", &c4);
	if (connect(conn, &a4.sa, sizeof(a4.in)) || shutdown(conn, SHUT_RD))
		fail_errno("connect");
	set(v6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	set(v6, IPPROTO_IPV6, IPV6_TCLASS, 0x20);
	bind_to(v6, "::1", &a6);
	set(dual, IPPROTO_IPV6, IPV6_V6ONLY, 0);
	bind_to(dual, "::", &ad);
	if (fcntl(dual, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	rcvbuf = opt(bound, SOL_SOCKET, SO_RCVBUF);
	tos = opt(bound, IPPROTO_IP, IP_TOS);

	test_ready();
	test_waitsig();

	same_name(bound, &a4, "the v4 socket");
	same_name(conn, &c4, "the connected socket");
	same_name(v6, &a6, "the v6 socket");
	same_name(dual, &ad, "the dual-stack socket");
	same_name(unbound, &any4, "the unbound socket");
	if (getpeername(conn, &peer.sa, &len) || memcmp(&peer, &a4, sizeof(a4.in)))
		fail("the connected socket is not connected to the bound one");
	if (opt(unbound, SOL_SOCKET, SO_PRIORITY) != 5 ||
	    opt(bound, SOL_SOCKET, SO_REUSEADDR) != 1 ||
	    opt(bound, SOL_SOCKET, SO_RCVBUF) != rcvbuf ||
	    opt(bound, SOL_SOCKET, SO_TIMESTAMP) != 1 ||
	    opt(bound, IPPROTO_IP, IP_TOS) != tos || opt(bound, SOL_SOCKET, SO_MARK) != 77 ||
	    opt(v6, IPPROTO_IPV6, IPV6_V6ONLY) != 1 || opt(v6, IPPROTO_IPV6, IPV6_TCLASS) != 0x20 ||
	    opt(dual, IPPROTO_IPV6, IPV6_V6ONLY) != 0)
		fail("an option is not as it was");
	len = sizeof(dev);
	if (getsockopt(bound, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) || strcmp(dev, "lo"))
		fail("SO_BINDTODEVICE is '%s', not lo", dev);
	if (!(fcntl(dual, F_GETFL) & O_NONBLOCK) || (fcntl(bound, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	p = (struct pollfd){ .fd = conn, .events = POLLRDHUP };
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLRDHUP))
		fail("the connected socket is not shut down for reading");
	p = (struct pollfd){ .fd = bound, .events = POLLRDHUP };
	if (poll(&p, 1, 0) != 0)
		fail("the bound socket is shut down");
	if (setsockopt(bound, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(v6, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		fail_errno("SO_RCVTIMEO");
	datagram(conn, NULL, bound, "connected", "the connected socket to its peer");
	out4 = sk_new(AF_INET, SOCK_DGRAM);
	out6 = sk_new(AF_INET6, SOCK_DGRAM);
	datagram(out4, &a4, bound, "to v4", "a new socket to the v4 one");
	datagram(unbound, &a4, bound, "unbound", "the unbound socket to the v4 one");
	datagram(out6, &a6, v6, "to v6", "a new socket to the v6 one");
	to_v4_loopback(&ad);
	if (sendto(out4, "dual", 4, 0, &ad.sa, sizeof(ad.in)) != 4)
		fail_errno("send to the dual-stack socket");
	p = (struct pollfd){ .fd = dual, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1 || recv(dual, &tos, sizeof(tos), 0) != 4)
		fail("the dual-stack socket got nothing from IPv4");
	pass();
}
