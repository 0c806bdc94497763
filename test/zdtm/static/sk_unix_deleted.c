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

static struct sockaddr_un pa, qa;

static int sk_make(int type, const struct sockaddr_un *own, const struct sockaddr_un *to)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || (own && bind(sk, (const void *)own, sizeof(*own))) ||
	    (to && connect(sk, (const void *)to, sizeof(*to))))
		fail_errno("socket");
	return sk;
}

static void expect(int sk, const char *want, const char *what)
{
	char buf[64] = "";
	ssize_t n = recv(sk, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n != (ssize_t)strlen(want) || memcmp(buf, want, n))
		fail("%s: got %zd bytes (%s), not %s", what, n, buf, want);
}

static int pending(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static int named(int sk, const struct sockaddr_un *want)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);

	memset(&a, 0, sizeof(a));
	return !getsockname(sk, (void *)&a, &len) && !strcmp(a.sun_path, want->sun_path);
}

static void set_path(struct sockaddr_un *a, const char *cwd, const char *name)
{
	a->sun_family = AF_UNIX;
	if (snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", cwd, name) >=
	    (int)sizeof(a->sun_path))
		fail("the work directory's path is too long for a socket");
	unlink(a->sun_path);
}

int main(int argc, char **argv)
{
	int l1, c1, a1, c2, l2, d, x, n;
	struct stat st;
	char cwd[256];

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	set_path(&pa, cwd, "del.listener");
	set_path(&qa, cwd, "del.dgram");

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

	if (!named(l1, &pa) || !named(l2, &pa) || !named(a1, &pa) || !named(d, &qa))
		fail("the names are not as they were");
	expect(a1, "c1", "the accepted connection");
	if (send(a1, "a1", 2, 0) != 2)
		fail_errno("send");
	expect(c1, "a1", "its client");
	if (!pending(l1))
		fail("the queued connection of the old listener is gone");
	n = accept(l1, NULL, NULL);
	if (n < 0 || send(c2, "c2", 2, 0) != 2)
		fail_errno("the queued connection");
	expect(n, "c2", "the queued connection");
	close(n);
	if (pending(l2))
		fail("the new listener has a connection nobody made");
	close(sk_make(SOCK_STREAM, NULL, &pa));
	if (!pending(l2) || pending(l1))
		fail("a new client did not reach the new listener");
	if (stat(pa.sun_path, &st) || !S_ISSOCK(st.st_mode))
		fail("the new listener's socket file is gone");
	if (!stat(qa.sun_path, &st) || errno != ENOENT)
		fail("the datagram socket's file is back");
	expect(d, "x1", "the queued datagram");
	if (send(x, "x2", 2, 0) != 2)
		fail_errno("the datagram client");
	expect(d, "x2", "a new datagram");
	pass();
}
