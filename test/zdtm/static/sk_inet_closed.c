// SPDX-License-Identifier: GPL-2.0-only
/*
 * --tcp-close: a TCP connection over loopback, both ends in the task, with
 * data unread, and its listener. After the restore both ends are closed
 * sockets (not connected: no peer, reads and writes fail as on a
 * connection that is gone), while the listener still accepts.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

static void is_closed(int sk, const char *what)
{
	union addr peer;
	socklen_t len = sizeof(peer);
	char b;

	if (!getpeername(sk, &peer.sa, &len) || errno != ENOTCONN)
		fail("%s: still has a peer", what);
	if (read(sk, &b, 1) > 0)
		fail("%s: reads data", what);
	if (write(sk, "x", 1) >= 0)
		fail("%s: writes", what);
}

int main(int argc, char **argv)
{
	int l, c, s, c2, s2;
	union addr la;

	test_init(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	l = sk_new(AF_INET, SOCK_STREAM);
	bind_to(l, "127.0.0.1", &la);
	c = sk_new(AF_INET, SOCK_STREAM);
	if (listen(l, 4) || connect(c, &la.sa, addr_len(&la)))
		fail_errno("connect");
	s = accept(l, NULL, NULL);
	if (s < 0 || write(c, "unread", 6) != 6)
		fail_errno("accept");

	test_ready();
	test_waitsig();

	is_closed(c, "the client's end");
	is_closed(s, "the server's end");
	c2 = sk_new(AF_INET, SOCK_STREAM);
	if (connect(c2, &la.sa, addr_len(&la)) || (s2 = accept(l, NULL, NULL)) < 0 ||
	    write(c2, "ok", 2) != 2 || read(s2, &la, 2) != 2)
		fail_errno("the listener after the restore");
	pass();
}
