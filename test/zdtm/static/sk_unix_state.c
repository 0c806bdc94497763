// SPDX-License-Identifier: GPL-2.0-only
/*
 * The state of socket pairs beyond their data: a stream whose peer was
 * closed after it sent (the data, then EOF), a seqpacket pair shut down
 * one way (EPIPE on one side, EOF on the other, the message queued before
 * still there), a datagram socket with a peek offset in the middle of its
 * queue, a receive buffer size, SO_PASSCRED and O_NONBLOCK.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	int a[2], b[2], c[2], v, rcvbuf;
	socklen_t len = sizeof(v);
	char buf[64];

	test_init(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, b) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, c))
		fail_errno("socketpair");
	if (write(a[1], "hello", 5) != 5 || close(a[1]))
		fail_errno("a");
	if (send(b[1], "queued", 6, 0) != 6 || shutdown(b[0], SHUT_WR))
		fail_errno("b");
	v = 0;
	rcvbuf = 50000;
	if (send(c[1], "abc", 3, 0) != 3 || send(c[1], "defg", 4, 0) != 4 ||
	    setsockopt(c[0], SOL_SOCKET, SO_PEEK_OFF, &v, sizeof(v)) ||
	    recv(c[0], buf, sizeof(buf), MSG_PEEK) != 3 ||
	    setsockopt(c[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    setsockopt(c[1], SOL_SOCKET, SO_PASSCRED, (int[]){ 1 }, sizeof(int)))
		fail_errno("c");
	getsockopt(c[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);

	test_ready();
	test_waitsig();

	if (read(a[0], buf, sizeof(buf)) != 5 || memcmp(buf, "hello", 5) ||
	    read(a[0], buf, sizeof(buf)) != 0)
		fail("the stream whose peer is closed: no data then EOF");
	if (send(b[0], "x", 1, MSG_DONTWAIT) != -1 || errno != EPIPE)
		fail("the seqpacket socket shut down for writing can write");
	if (recv(b[1], buf, sizeof(buf), MSG_DONTWAIT) != 0)
		fail("its peer does not see EOF");
	if (recv(b[0], buf, sizeof(buf), 0) != 6 || memcmp(buf, "queued", 6))
		fail("the seqpacket message is lost");
	if (send(b[1], "more", 4, 0) != 4)
		fail_errno("the seqpacket socket can't send the other way");
	len = sizeof(v);
	if (getsockopt(c[0], SOL_SOCKET, SO_PEEK_OFF, &v, &len) || v != 3)
		fail("the peek offset is %d, not 3", v);
	if (recv(c[0], buf, sizeof(buf), MSG_PEEK) != 4 || memcmp(buf, "defg", 4))
		fail("a peek does not start at the peek offset");
	len = sizeof(v);
	if (getsockopt(c[0], SOL_SOCKET, SO_RCVBUF, &v, &len) || v != rcvbuf)
		fail("SO_RCVBUF is %d, not %d", v, rcvbuf);
	len = sizeof(v);
	if (getsockopt(c[1], SOL_SOCKET, SO_PASSCRED, &v, &len) || !v)
		fail("SO_PASSCRED is off");
	if (!(fcntl(c[0], F_GETFL) & O_NONBLOCK) || (fcntl(a[0], F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	if (recv(c[0], buf, sizeof(buf), 0) != 3 || recv(c[0], buf, sizeof(buf), 0) != 4 ||
	    recv(c[0], buf, sizeof(buf), 0) != -1 || errno != EAGAIN)
		fail("the datagrams are not as they were");
	if (send(c[1], "z", 1, 0) != 1 || recv(c[0], buf, sizeof(buf), 0) != 1)
		fail("the datagram pair does not connect any more");
	pass();
}
