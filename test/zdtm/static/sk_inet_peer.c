// SPDX-License-Identifier: GPL-2.0-only
/*
 * A TCP connection to a peer outside the tree (test_inet_sk.py runs it,
 * with the peer's address and port as arguments, and --tcp-established):
 * before the dump the task sends 100 KiB of stream 3 and reads 50 of the
 * 80 KiB of stream 4 the peer sent (30 stay unread); after the restore it
 * reads the rest, sends 100 KiB more, and reads the 50 KiB the peer sends
 * once it got them all. The peer checks every byte it got too.
 */
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

#define K	1024

/* The peer's link may come a moment after the task (the test adds it): tries for 20 s. */
static int connect_peer(const union addr *peer)
{
	int sk, i;

	for (i = 0; i < 2000; i++) {
		sk = sk_new(peer->sa.sa_family, SOCK_STREAM);
		if (!connect(sk, &peer->sa, addr_len(peer)))
			return sk;
		close(sk);
		usleep(10000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	union addr peer = { 0 };
	const char *ip = argc > 2 ? argv[argc - 2] : "";
	int port = argc > 2 ? atoi(argv[argc - 1]) : 0, sk;

	test_init(argc, argv);
	if (strchr(ip, ':')) {
		peer.in6.sin6_family = AF_INET6;
		peer.in6.sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &peer.in6.sin6_addr);
	} else {
		peer.in.sin_family = AF_INET;
		peer.in.sin_port = htons(port);
		if (inet_pton(AF_INET, ip, &peer.in.sin_addr) != 1)
			fail("usage: sk_inet_peer IP PORT (not %s)", ip);
	}
	sk = connect_peer(&peer);
	if (sk < 0)
		fail_errno("connect to the peer %s:%d", ip, port);
	write_all(sk, 0, 100 * K, 3, "to the peer");
	read_check(sk, 0, 50 * K, 4, "from the peer");

	test_ready();
	test_waitsig();

	read_check(sk, 50 * K, 30 * K, 4, "from the peer, the rest");
	write_all(sk, 100 * K, 100 * K, 3, "to the peer, after the restore");
	read_check(sk, 80 * K, 50 * K, 4, "from the peer, after the restore");
	close(sk);
	pass();
}
