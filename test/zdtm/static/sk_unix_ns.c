// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bound unix sockets in namespaces of the test's own: a network namespace
 * (abstract names live there) and a mount namespace with a tmpfs of its
 * own in the work directory, which restore makes anew. A stream listener
 * bound to a path on the tmpfs with one connection accepted and one
 * queued; a datagram socket on an abstract name with datagrams queued and
 * a client connected to it. After restore each is reached by its name from
 * inside the namespaces: the abstract name is the network namespace's (not
 * the host's), the path is on the tmpfs. sk_unix_netns is the same in a
 * network namespace only, the path in the work directory.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"
#include "mnt.h"
#include "sk_unix_lib.h"

static struct sockaddr_un path_addr, abs_addr;
static socklen_t abs_len;

int main(int argc, char **argv)
{
	char cwd[256];
	int l, c1, a1, c2, d, dc, x;

	test_init(argc, argv);
	if (unshare(CLONE_NEWNET))
		skip("unshare(CLONE_NEWNET): %m");
	if (!getcwd(cwd, sizeof(cwd)) || mkdir("sub", 0755))
		fail_errno("a directory in the work directory");
#ifndef SK_UNIX_NET_ONLY
	mnt_enter_ns();
	if (mount("sk_unix_ns", "sub", "tmpfs", 0, "size=1m"))
		fail_errno("a tmpfs in the work directory");
#endif
	path_addr.sun_family = AF_UNIX;
	if (snprintf(path_addr.sun_path, sizeof(path_addr.sun_path), "%s/sub/listener", cwd) >=
	    (int)sizeof(path_addr.sun_path))
		fail("the work directory's path is too long for a socket");
	abs_addr.sun_family = AF_UNIX;
	abs_len = offsetof(struct sockaddr_un, sun_path) + 1 +
		  snprintf(abs_addr.sun_path + 1, sizeof(abs_addr.sun_path) - 1, "zdtm-sk-unix-ns");

	l = sk_must(sk_try(SOCK_STREAM, &path_addr, sizeof(path_addr), NULL, 0));
	if (listen(l, 4))
		fail_errno("listen");
	c1 = sk_must(sk_try(SOCK_STREAM, NULL, 0, &path_addr, sizeof(path_addr)));
	a1 = accept(l, NULL, NULL);
	c2 = sk_must(sk_try(SOCK_STREAM, NULL, 0, &path_addr, sizeof(path_addr)));
	if (a1 < 0 || send(c1, "hello", 5, 0) != 5)
		fail_errno("accepted");
	d = sk_must(sk_try(SOCK_DGRAM, &abs_addr, abs_len, NULL, 0));
	dc = sk_must(sk_try(SOCK_DGRAM, NULL, 0, &abs_addr, abs_len));
	if (send(dc, "one", 3, 0) != 3 || send(dc, "two", 3, 0) != 3)
		fail_errno("datagrams");

	test_ready();
	test_waitsig();

	sk_expect(a1, "hello", "the accepted connection");
	if (send(a1, "back", 4, 0) != 4)
		fail_errno("send back");
	sk_expect(c1, "back", "its client");
	if (!sk_pending(l))
		fail("the queued connection is gone");
	x = accept(l, NULL, NULL);
	if (x < 0 || send(c2, "queued", 6, 0) != 6)
		fail_errno("the queued connection");
	sk_expect(x, "queued", "the queued connection");
	close(x);
	close(sk_must(sk_try(SOCK_STREAM, NULL, 0, &path_addr, sizeof(path_addr))));

	sk_expect(d, "one", "the first datagram");
	sk_expect(d, "two", "the second datagram");
	if (send(dc, "three", 5, 0) != 5)
		fail_errno("the datagram client");
	sk_expect(d, "three", "a new datagram");
	/* the abstract name is this network namespace's */
	x = sk_must(sk_try(SOCK_DGRAM, NULL, 0, &abs_addr, abs_len));
	if (send(x, "four", 4, 0) != 4)
		fail_errno("a new client");
	sk_expect(d, "four", "a new client's datagram");
	pass();
}
