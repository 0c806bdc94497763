// SPDX-License-Identifier: GPL-2.0-only
/*
 * Listening unix sockets with connections accepted and queued: a stream
 * listener bound to a path (the socket file with mode 0640) with backlog 5,
 * one connection accepted with data queued both ways and two queued, not
 * accepted, one of whose clients bound a path of its own; a seqpacket
 * listener on an abstract name with one accepted and one queued. After
 * restore the names are the same, the accepted pairs still connect with
 * their data, accept() gives the queued ones in their order, and a new
 * client reaches each listener by its name.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"
#include "sk_unix_lib.h"

static struct sockaddr_un path_addr, client_addr, abs_addr;
static socklen_t abs_len;

static int listener(int type, const struct sockaddr_un *sa, socklen_t len, int backlog)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || bind(sk, (const struct sockaddr *)sa, len) || listen(sk, backlog))
		fail_errno("listener");
	return sk;
}

static int client(int type, const struct sockaddr_un *to, socklen_t len,
		  const struct sockaddr_un *own)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || (own && bind(sk, (const struct sockaddr *)own, sizeof(*own))) ||
	    connect(sk, (const struct sockaddr *)to, len))
		fail_errno("client");
	return sk;
}

static int same_addr(int sk, int peer, const struct sockaddr_un *want, socklen_t wlen)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);

	memset(&sa, 0, sizeof(sa));
	if ((peer ? getpeername(sk, (struct sockaddr *)&sa, &len) :
		    getsockname(sk, (struct sockaddr *)&sa, &len)))
		return 0;
	if (want->sun_path[0])
		return !strcmp(sa.sun_path, want->sun_path);
	return len == wlen && !memcmp(&sa, want, len);
}

/* @from's next message, read on @to, is @msg. */
static void check_link(int from, int to, const char *msg, const char *what)
{
	char buf[64] = "";
	ssize_t n;

	if (send(from, msg, strlen(msg), 0) != (ssize_t)strlen(msg))
		fail_errno("%s: send", what);
	n = recv(to, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n))
		fail("%s: got %zd bytes (%s), not %s", what, n, buf, msg);
}

/* A queued connection, without waiting for one that isn't there. */
static int accept_now(int sk, const char *what)
{
	int x;

	if (!sk_pending(sk))
		fail("%s: nothing to accept", what);
	x = accept(sk, NULL, NULL);
	if (x < 0)
		fail_errno("%s: accept", what);
	return x;
}

int main(int argc, char **argv)
{
	int sl, c1, a1, c2, c3, pl, pc1, pa1, pc2, x, v;
	socklen_t len = sizeof(v);
	struct stat st;
	char buf[64];

	test_init(argc, argv);
	sk_path(&path_addr, "sk_unix_listen.sock");
	sk_path(&client_addr, "sk_unix_listen.client");
	abs_addr.sun_family = AF_UNIX;
	abs_len = offsetof(struct sockaddr_un, sun_path) + 1 +
		  snprintf(abs_addr.sun_path + 1, sizeof(abs_addr.sun_path) - 1,
			   "zdtm-sk-unix-listen-%d", getpid());

	sl = listener(SOCK_STREAM, &path_addr, sizeof(path_addr), 5);
	if (chmod(path_addr.sun_path, 0640))
		fail_errno("chmod");
	c1 = client(SOCK_STREAM, &path_addr, sizeof(path_addr), NULL);
	a1 = accept(sl, NULL, NULL);
	if (a1 < 0 || write(c1, "to-server", 9) != 9 || write(a1, "to-client", 9) != 9)
		fail_errno("accepted stream");
	c2 = client(SOCK_STREAM, &path_addr, sizeof(path_addr), &client_addr);
	c3 = client(SOCK_STREAM, &path_addr, sizeof(path_addr), NULL);

	pl = listener(SOCK_SEQPACKET, &abs_addr, abs_len, 3);
	pc1 = client(SOCK_SEQPACKET, &abs_addr, abs_len, NULL);
	pa1 = accept(pl, NULL, NULL);
	if (pa1 < 0 || send(pc1, "packet", 6, 0) != 6)
		fail_errno("accepted seqpacket");
	pc2 = client(SOCK_SEQPACKET, &abs_addr, abs_len, NULL);

	test_ready();
	test_waitsig();

	if (getsockopt(sl, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) || !v)
		fail("the stream listener does not listen");
	if (!same_addr(sl, 0, &path_addr, sizeof(path_addr)) ||
	    !same_addr(a1, 0, &path_addr, sizeof(path_addr)) ||
	    !same_addr(c1, 1, &path_addr, sizeof(path_addr)) ||
	    !same_addr(c2, 0, &client_addr, sizeof(client_addr)))
		fail("the stream sockets' names are not as they were");
	if (stat(path_addr.sun_path, &st) || !S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != 0640)
		fail("the socket file is not a socket of mode 0640 (%o)", st.st_mode);
	if (read(a1, buf, sizeof(buf)) != 9 || memcmp(buf, "to-server", 9) ||
	    read(c1, buf, sizeof(buf)) != 9 || memcmp(buf, "to-client", 9))
		fail("the accepted stream lost its data");
	check_link(c1, a1, "again", "the accepted stream");
	x = accept_now(sl, "the first queued stream");
	check_link(c2, x, "second", "the first queued connection");
	close(x);
	x = accept_now(sl, "the second queued stream");
	check_link(c3, x, "third", "the second queued connection");
	close(x);
	x = client(SOCK_STREAM, &path_addr, sizeof(path_addr), NULL);
	close(x);

	if (!same_addr(pl, 0, &abs_addr, abs_len) || !same_addr(pa1, 0, &abs_addr, abs_len))
		fail("the seqpacket sockets' names are not as they were");
	if (recv(pa1, buf, sizeof(buf), MSG_DONTWAIT) != 6 || memcmp(buf, "packet", 6))
		fail("the accepted seqpacket socket lost its packet");
	check_link(pa1, pc1, "back", "the accepted seqpacket pair");
	x = accept_now(pl, "the queued seqpacket");
	check_link(pc2, x, "queued", "the queued seqpacket connection");
	close(x);
	x = client(SOCK_SEQPACKET, &abs_addr, abs_len, NULL);
	close(x);
	pass();
}
