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
#include "sk_unix_lib.h"

static struct sockaddr_un la, ra;
static int l, r, c1, c2, dg;

static void child_setup(void)
{
	c1 = sk_try(SOCK_STREAM, NULL, 0, &la, sizeof(la));
	c2 = sk_try(SOCK_STREAM, NULL, 0, &la, sizeof(la));
	dg = sk_try(SOCK_DGRAM, NULL, 0, &ra, sizeof(ra));
	if (c1 < 0 || c2 < 0 || dg < 0 || send(c1, "c1", 2, 0) != 2 || send(dg, "dg1", 3, 0) != 3)
		_exit(2);
}

static const char *child_check(void)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (!sk_got(c1, "to-c1"))
		return "the accepted connection lost the parent's data";
	if (getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) || !v)
		return "the child's listener fd does not listen";
	if (send(c2, "late", 4, 0) != 4 || send(dg, "dg2", 3, 0) != 3)
		return "can't send to the parent";
	return NULL;
}

int main(int argc, char **argv)
{
	pid_t child;
	int a1, x;

	test_init(argc, argv);
	sk_path(&la, "tasks.listener");
	sk_path(&ra, "tasks.dgram");
	l = sk_make(SOCK_STREAM, &la, NULL);
	r = sk_make(SOCK_DGRAM, &ra, NULL);
	if (listen(l, 4))
		fail_errno("listener");
	child = fork_checker(child_setup, child_check);
	a1 = accept(l, NULL, NULL);
	if (a1 < 0 || send(a1, "to-c1", 5, 0) != 5)
		fail_errno("accept");

	test_ready();
	test_waitsig();

	if (!sk_got(a1, "c1") || !sk_got(r, "dg1"))
		fail("the parent's sockets lost the child's data");
	end_checker(child);
	if (!sk_pending(l))
		fail("the queued connection is gone");
	x = accept(l, NULL, NULL);
	if (x < 0 || !sk_got(x, "late") || !sk_got(r, "dg2"))
		fail("nothing new from the child");
	pass();
}
