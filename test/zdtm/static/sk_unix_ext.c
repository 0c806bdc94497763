// SPDX-License-Identifier: GPL-2.0-only
/*
 * A datagram socket connected to a server outside the tree (a logger):
 * the server's path is the last argument (test_unix_sk.py binds it and
 * reads what comes). One datagram goes before test_ready(); after
 * restore the socket is still connected to that path (getpeername()) and
 * its next datagram reaches the server.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	struct sockaddr_un to = { .sun_family = AF_UNIX }, got;
	socklen_t len = sizeof(got);
	int sk;

	test_init(argc, argv);
	if (argc < 2 || strlen(argv[argc - 1]) >= sizeof(to.sun_path))
		fail("the server's path is the last argument");
	strcpy(to.sun_path, argv[argc - 1]);
	sk = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (sk < 0 || connect(sk, (void *)&to, sizeof(to)) || send(sk, "before", 6, 0) != 6)
		fail_errno("connect to %s", to.sun_path);

	test_ready();
	test_waitsig();

	memset(&got, 0, sizeof(got));
	if (getpeername(sk, (void *)&got, &len) || strcmp(got.sun_path, to.sun_path))
		fail("connected to %s, not %s", got.sun_path, to.sun_path);
	if (send(sk, "after", 5, 0) != 5)
		fail_errno("send after restore");
	pass();
}
