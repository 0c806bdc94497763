// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bound unix sockets across two tasks: the parent's stream listener, on a
 * path, is held by the child too; the child's first connection was
 * accepted by the parent (data queued both ways), its second waits in the
 * queue; the child's datagram socket is connected to the parent's bound
 * one, with a datagram queued. After restore both ends talk again, the
 * child still holds the listener, and the parent accepts the queued
 * connection.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"
#include "files_lib.h"

static struct sockaddr_un la, ra;
static int l, r, c1, c2, dg;

static int sk_make(int type, const struct sockaddr_un *own, const struct sockaddr_un *to)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || (own && bind(sk, (const void *)own, sizeof(*own))) ||
	    (to && connect(sk, (const void *)to, sizeof(*to))))
		return -1;
	return sk;
}

static int got(int sk, const char *want)
{
	char buf[64] = "";
	ssize_t n = recv(sk, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	return n == (ssize_t)strlen(want) && !memcmp(buf, want, n);
}

static void child_setup(void)
{
	c1 = sk_make(SOCK_STREAM, NULL, &la);
	c2 = sk_make(SOCK_STREAM, NULL, &la);
	dg = sk_make(SOCK_DGRAM, NULL, &ra);
	if (c1 < 0 || c2 < 0 || dg < 0 || send(c1, "c1", 2, 0) != 2 || send(dg, "dg1", 3, 0) != 3)
		_exit(2);
}

static const char *child_check(void)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (!got(c1, "to-c1"))
		return "the accepted connection lost the parent's data";
	if (getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) || !v)
		return "the child's listener fd does not listen";
	if (send(c2, "late", 4, 0) != 4 || send(dg, "dg2", 3, 0) != 3)
		return "can't send to the parent";
	return NULL;
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
	struct pollfd p;
	char cwd[256];
	pid_t child;
	int a1, x;

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	set_path(&la, cwd, "tasks.listener");
	set_path(&ra, cwd, "tasks.dgram");
	l = sk_make(SOCK_STREAM, &la, NULL);
	r = sk_make(SOCK_DGRAM, &ra, NULL);
	if (l < 0 || r < 0 || listen(l, 4))
		fail_errno("listener");
	child = fork_checker(child_setup, child_check);
	a1 = accept(l, NULL, NULL);
	if (a1 < 0 || send(a1, "to-c1", 5, 0) != 5)
		fail_errno("accept");

	test_ready();
	test_waitsig();

	if (!got(a1, "c1") || !got(r, "dg1"))
		fail("the parent's sockets lost the child's data");
	end_checker(child);
	p = (struct pollfd){ .fd = l, .events = POLLIN };
	if (poll(&p, 1, 0) != 1)
		fail("the queued connection is gone");
	x = accept(l, NULL, NULL);
	if (x < 0 || !got(x, "late") || !got(r, "dg2"))
		fail("nothing new from the child");
	pass();
}
