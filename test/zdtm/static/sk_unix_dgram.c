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

#define NR_EARLY	4

static struct sockaddr_un ra, sa, xa, ya, ba;

static void set_path(struct sockaddr_un *a, const char *cwd, const char *name)
{
	a->sun_family = AF_UNIX;
	if (snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", cwd, name) >=
	    (int)sizeof(a->sun_path))
		fail("the work directory's path is too long for a socket");
	unlink(a->sun_path);
}

static int sk_make(int type, const struct sockaddr_un *own, const struct sockaddr_un *to)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || (own && bind(sk, (const void *)own, sizeof(*own))) ||
	    (to && connect(sk, (const void *)to, sizeof(*to))))
		fail_errno("socket");
	return sk;
}

static void msg(char *buf, size_t len, const char *who, int i)
{
	snprintf(buf, len, "%s-%d-%.*s", who, i, i * 7, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static void expect(int sk, const char *want, const char *what)
{
	char buf[128] = "";
	ssize_t n = recv(sk, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n != (ssize_t)strlen(want) || memcmp(buf, want, n))
		fail("%s: got %zd bytes (%s), not %s", what, n, buf, want);
}

static int named(int sk, int peer, const struct sockaddr_un *want)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);

	memset(&a, 0, sizeof(a));
	if (peer ? getpeername(sk, (void *)&a, &len) : getsockname(sk, (void *)&a, &len))
		return 0;
	return !strcmp(a.sun_path, want->sun_path);
}

int main(int argc, char **argv)
{
	int r, s, x, y, u, b, i;
	char cwd[256], buf[128];

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	set_path(&ra, cwd, "dg.r");
	set_path(&sa, cwd, "dg.s");
	set_path(&xa, cwd, "dg.x");
	set_path(&ya, cwd, "dg.y");
	set_path(&ba, cwd, "st.b");

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
		expect(r, buf, "a queued datagram");
	}
	if (recv(r, buf, sizeof(buf), MSG_DONTWAIT) != -1 || errno != EAGAIN)
		fail("more datagrams than were sent");
	if (!named(r, 0, &ra) || !named(s, 0, &sa) || !named(s, 1, &ra) || !named(x, 1, &ya) ||
	    !named(y, 1, &xa) || !named(b, 0, &ba))
		fail("the names are not as they were");
	if (send(s, "later", 5, 0) != 5)
		fail_errno("the connected client");
	expect(r, "later", "the connected client's new datagram");
	expect(y, "to-y", "y's queue");
	expect(x, "to-x", "x's queue");
	expect(x, "to-x2", "x's queue");
	if (sendto(u, "free", 4, 0, (void *)&ra, sizeof(ra)) != 4)
		fail_errno("the unconnected socket");
	expect(r, "free", "the unconnected socket's datagram");
	/* x hears only y */
	if (sendto(u, "no", 2, 0, (void *)&xa, sizeof(xa)) != -1 || errno != EPERM)
		fail("a socket connected to y takes datagrams from others");
	if (listen(b, 1))
		fail_errno("the bound stream socket can't listen");
	pass();
}
