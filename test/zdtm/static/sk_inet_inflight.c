// SPDX-License-Identifier: GPL-2.0-only
/*
 * A listening TCP socket with a connection queued and not accepted at the
 * dump (test_inet_sk.py makes it, from outside the tree, once the port is
 * in the file "port"): --skip-in-flight saves the listener without it.
 * After the restore the listener takes a new connection (the test makes
 * it and sends "after"): the one accept() returns is that one, and it
 * reads "after" there; the old one is gone, reset.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

int main(int argc, char **argv)
{
	union addr a;
	char buf[16] = "";
	struct pollfd p;
	int l, c, one = 1;
	FILE *f;

	test_init(argc, argv);
	l = sk_new(AF_INET, SOCK_STREAM);
	if (setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		fail_errno("SO_REUSEADDR");
	bind_to(l, "127.0.0.1", &a);
	if (listen(l, 4))
		fail_errno("listen");
	f = fopen("port", "w");
	if (!f || fprintf(f, "%d\n", ntohs(a.in.sin_port)) < 0 || fclose(f))
		fail_errno("write the port");

	test_ready();
	test_waitsig();

	p.fd = l;
	p.events = POLLIN;
	if (poll(&p, 1, 10000) != 1)
		fail("no connection to accept after the restore");
	c = accept(l, NULL, NULL);
	if (c < 0)
		fail_errno("accept");
	p.fd = c;
	if (poll(&p, 1, 10000) != 1 || read(c, buf, sizeof(buf) - 1) <= 0)
		fail("nothing to read on the accepted connection");
	if (strncmp(buf, "after", 5))
		fail("the accepted connection is not the new one: it read '%s'", buf);
	close(c);
	close(l);
	pass();
}
