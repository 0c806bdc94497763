// SPDX-License-Identifier: GPL-2.0-only
/*
 * Datagram unix sockets bound to paths: a receiver with datagrams queued
 * from an unbound sender and from a bound client connected to it; two
 * bound sockets connected to each other with datagrams queued both ways;
 * an unbound, unconnected one; a stream socket bound and not listening.
 * After restore every datagram is there, in order, one per recv; the
 * names and the connections are as they were.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"
#include "sk_unix_lib.h"

#define NR_EARLY	4

static struct sockaddr_un ra, sa, xa, ya, ba;

static void msg(char *buf, size_t len, const char *who, int i)
{
	snprintf(buf, len, "%s-%d-%.*s", who, i, i * 7, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

int main(int argc, char **argv)
{
	int r, s, x, y, u, b, i;
	char buf[128];

	test_init(argc, argv);
	sk_path(&ra, "dg.r");
	sk_path(&sa, "dg.s");
	sk_path(&xa, "dg.x");
	sk_path(&ya, "dg.y");
	sk_path(&ba, "st.b");

	r = sk_make(SOCK_DGRAM, &ra, NULL);
	s = sk_make(SOCK_DGRAM, &sa, &ra);
	u = sk_make(SOCK_DGRAM, NULL, NULL);
	for (i = 0; i < NR_EARLY; i++) {
		msg(buf, sizeof(buf), i % 2 ? "s" : "u", i);
		if ((i % 2 ? send(s, buf, strlen(buf), 0) :
			     sendto(u, buf, strlen(buf), 0, (void *)&ra, sizeof(ra))) < 0)
			fail_errno("send %d", i);
	}
	x = sk_make(SOCK_DGRAM, &xa, NULL);
	y = sk_make(SOCK_DGRAM, &ya, &xa);
	if (connect(x, (void *)&ya, sizeof(ya)) || send(x, "to-y", 4, 0) != 4 ||
	    send(y, "to-x", 4, 0) != 4 || send(y, "to-x2", 5, 0) != 5)
		fail_errno("the connected pair");
	b = sk_make(SOCK_STREAM, &ba, NULL);

	test_ready();
	test_waitsig();

	for (i = 0; i < NR_EARLY; i++) {
		msg(buf, sizeof(buf), i % 2 ? "s" : "u", i);
		sk_expect(r, buf, "a queued datagram");
	}
	if (recv(r, buf, sizeof(buf), MSG_DONTWAIT) != -1 || errno != EAGAIN)
		fail("more datagrams than were sent");
	if (!sk_named(r, 0, &ra) || !sk_named(s, 0, &sa) || !sk_named(s, 1, &ra) || !sk_named(x, 1, &ya) ||
	    !sk_named(y, 1, &xa) || !sk_named(b, 0, &ba))
		fail("the names are not as they were");
	if (send(s, "later", 5, 0) != 5)
		fail_errno("the connected client");
	sk_expect(r, "later", "the connected client's new datagram");
	sk_expect(y, "to-y", "y's queue");
	sk_expect(x, "to-x", "x's queue");
	sk_expect(x, "to-x2", "x's queue");
	if (sendto(u, "free", 4, 0, (void *)&ra, sizeof(ra)) != 4)
		fail_errno("the unconnected socket");
	sk_expect(r, "free", "the unconnected socket's datagram");
	/* x hears only y */
	if (sendto(u, "no", 2, 0, (void *)&xa, sizeof(xa)) != -1 || errno != EPERM)
		fail("a socket connected to y takes datagrams from others");
	if (listen(b, 1))
		fail_errno("the bound stream socket can't listen");
	pass();
}
