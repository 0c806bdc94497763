// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unix sockets whose socket file was deleted: a stream listener with one
 * connection accepted and one queued whose file was then removed, and a
 * new listener bound at the same path (a server that started over); a
 * datagram socket with a client connected to it and a datagram queued,
 * its file removed. After restore the old sockets keep their names and
 * connections, a new client reaches the new listener, and the datagram
 * socket's file is still gone.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"
#include "sk_unix_lib.h"

static struct sockaddr_un pa, qa;

int main(int argc, char **argv)
{
	int l1, c1, a1, c2, l2, d, x, n;
	struct stat st;

	test_init(argc, argv);
	sk_path(&pa, "del.listener");
	sk_path(&qa, "del.dgram");

	l1 = sk_make(SOCK_STREAM, &pa, NULL);
	if (listen(l1, 4))
		fail_errno("listen");
	c1 = sk_make(SOCK_STREAM, NULL, &pa);
	a1 = accept(l1, NULL, NULL);
	c2 = sk_make(SOCK_STREAM, NULL, &pa);
	if (a1 < 0 || send(c1, "c1", 2, 0) != 2 || unlink(pa.sun_path))
		fail_errno("the first listener");
	l2 = sk_make(SOCK_STREAM, &pa, NULL);
	if (listen(l2, 4))
		fail_errno("listen");
	d = sk_make(SOCK_DGRAM, &qa, NULL);
	x = sk_make(SOCK_DGRAM, NULL, &qa);
	if (send(x, "x1", 2, 0) != 2 || unlink(qa.sun_path))
		fail_errno("the datagram socket");

	test_ready();
	test_waitsig();

	if (!sk_named(l1, 0, &pa) || !sk_named(l2, 0, &pa) || !sk_named(a1, 0, &pa) || !sk_named(d, 0, &qa))
		fail("the names are not as they were");
	sk_expect(a1, "c1", "the accepted connection");
	if (send(a1, "a1", 2, 0) != 2)
		fail_errno("send");
	sk_expect(c1, "a1", "its client");
	if (!sk_pending(l1))
		fail("the queued connection of the old listener is gone");
	n = accept(l1, NULL, NULL);
	if (n < 0 || send(c2, "c2", 2, 0) != 2)
		fail_errno("the queued connection");
	sk_expect(n, "c2", "the queued connection");
	close(n);
	if (sk_pending(l2))
		fail("the new listener has a connection nobody made");
	close(sk_make(SOCK_STREAM, NULL, &pa));
	if (!sk_pending(l2) || sk_pending(l1))
		fail("a new client did not reach the new listener");
	if (stat(pa.sun_path, &st) || !S_ISSOCK(st.st_mode))
		fail("the new listener's socket file is gone");
	if (!stat(qa.sun_path, &st) || errno != ENOENT)
		fail("the datagram socket's file is back");
	sk_expect(d, "x1", "the queued datagram");
	if (send(x, "x2", 2, 0) != 2)
		fail_errno("the datagram client");
	sk_expect(d, "x2", "a new datagram");
	pass();
}
