// SPDX-License-Identifier: GPL-2.0-only
/*
 * Half-closed TCP connections to a peer outside the tree (test_inet_sk.py
 * runs it with the peer's address and port, and --tcp-established):
 *  - A: the peer sent "a-data" and closed its side: A is in CLOSE_WAIT,
 *    the bytes and the FIN not read at the dump;
 *  - B: the task shut its side (SHUT_WR) and the peer acknowledged it: B
 *    is in FIN_WAIT2.
 * After the restore: A reads "a-data", then the end of the stream, then
 * writes "a-bye" and closes; B reads "b-late", which the peer sends once
 * the test says the restore is done, then the end of the stream. The
 * peer checks what it gets too.
 */
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

/* The link to the peer may come a moment after the task (the test adds it): 20 s. */
static int connect_to(const char *ip, int port)
{
	union addr a = { 0 };
	int sk, i;

	a.in.sin_family = AF_INET;
	a.in.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.in.sin_addr);
	for (i = 0; i < 2000; i++) {
		sk = sk_new(AF_INET, SOCK_STREAM);
		if (!connect(sk, &a.sa, sizeof(a.in)))
			return sk;
		close(sk);
		usleep(10000);
	}
	fail_errno("connect to %s:%d", ip, port);
	return -1;
}

/* Waits (10 s at most) until @sk is in TCP state @state. */
static void wait_state(int sk, int state, const char *what)
{
	struct tcp_info ti;
	socklen_t len;
	int i;

	for (i = 0; i < 1000; i++) {
		len = sizeof(ti);
		if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
			fail_errno("TCP_INFO");
		if (ti.tcpi_state == state)
			return;
		usleep(10000);
	}
	fail("%s: not in TCP state %d but %d", what, state, ti.tcpi_state);
}

/* Reads until the end of the stream (10 s at most); it must be @want. */
static void read_all(int sk, const char *want, const char *what)
{
	char buf[64];
	size_t off = 0;
	struct pollfd p = { .fd = sk, .events = POLLIN };
	ssize_t n;

	while (1) {
		if (poll(&p, 1, 10000) != 1)
			fail("%s: nothing came in 10 s (after '%.*s')", what, (int)off, buf);
		n = read(sk, buf + off, sizeof(buf) - 1 - off);
		if (n < 0)
			fail_errno("%s: read", what);
		if (!n)
			break;
		off += n;
	}
	buf[off] = '\0';
	if (strcmp(buf, want))
		fail("%s: read '%s', not '%s' and the end", what, buf, want);
}

int main(int argc, char **argv)
{
	const char *ip = argc > 2 ? argv[argc - 2] : "127.0.0.1";
	int port = argc > 2 ? atoi(argv[argc - 1]) : 0;
	int a, b;

	test_init(argc, argv);
	a = connect_to(ip, port);
	b = connect_to(ip, port);
	if (write(a, "A", 1) != 1 || write(b, "B", 1) != 1)
		fail_errno("say which is which");
	wait_state(a, TCP_CLOSE_WAIT, "A");
	if (shutdown(b, SHUT_WR))
		fail_errno("shutdown B");
	wait_state(b, TCP_FIN_WAIT2, "B");

	test_ready();
	test_waitsig();

	read_all(a, "a-data", "A");
	if (write(a, "a-bye", 5) != 5)
		fail_errno("write a-bye");
	close(a);
	read_all(b, "b-late", "B");
	close(b);
	pass();
}
