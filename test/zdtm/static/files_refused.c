// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open files criu must refuse to dump, one per run (test_files_errors.py
 * picks it with an argument): a TCP connection (both ends ours), a TCP
 * listener with a connection queued but not accepted, a UDP socket with a
 * datagram waiting, a raw IP socket, a unix socket
 * listening on a relative path, one whose socket file was replaced, a
 * connection not accepted yet on which the client sent data, a socket
 * pair with a file descriptor in flight (SCM_RIGHTS), a socket pair whose
 * other end a process outside the tree holds, and an epoll watching an fd
 * the task has closed while the file stays registered (only a process
 * outside the tree keeps it open).
 * Whatever the dump did, the state is still there afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static int fd = -1, held = -1;

/* A grandchild outside the tree holds sk[1] until we are gone (its pipe says so). */
static void peer_outside(int sk[2])
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		if (fork() == 0) {
			close(p[1]);
			close(sk[0]);
			/* reparented to the runner, a subreaper: outside our tree */
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(sk[1]);
	held = p[1];
}

static void send_fd(int sk, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { "f", 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sk, &m, 0) != 1)
		fail_errno("sendmsg SCM_RIGHTS");
}

/* A unix socket of @type bound to @un (and listening when @backlog >= 0). */
static int unix_bound(const struct sockaddr_un *un, int type, int backlog)
{
	int s = socket(AF_UNIX, type, 0);

	if (s < 0 || bind(s, (const void *)un, sizeof(*un)) || (backlog >= 0 && listen(s, backlog)))
		fail_errno("unix");
	return s;
}

/*
 * tcp-established: a loopback connection (the client's end returned, the
 * server's kept); tcp-unaccepted: a listener whose client connected and
 * left; udp-queued: a bound UDP socket with a datagram of its own unread.
 */
static int inet_refused(const char *what)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(in);
	int udp = !strcmp(what, "udp-queued");
	int s = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0), c;

	if (s < 0 || bind(s, (void *)&in, sizeof(in)) || getsockname(s, (void *)&in, &len))
		fail_errno("%s", what);
	if (udp) {
		if (sendto(s, "unread", 6, 0, (void *)&in, sizeof(in)) != 6)
			fail_errno("%s", what);
		return s;
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || listen(s, 4) || connect(c, (void *)&in, sizeof(in)))
		fail_errno("%s", what);
	if (!strcmp(what, "tcp-unaccepted")) {
		close(c);
		return s;
	}
	held = accept(s, NULL, NULL);
	if (held < 0)
		fail_errno("accept");
	close(s);
	return c;
}

int main(int argc, char **argv)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	const char *what = argc > 1 ? argv[argc - 1] : "";
	int sk[2], ep, p[2];
	char cwd[256];

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	snprintf(un.sun_path, sizeof(un.sun_path), "%s.sock", test_name);
	if (strcmp(what, "unix-relative") &&
	    snprintf(un.sun_path, sizeof(un.sun_path), "%s/%s.sock", cwd, test_name) >=
	    (int)sizeof(un.sun_path))
		fail("the work directory's path is too long for a socket");
	unlink(un.sun_path);
	if (!strncmp(what, "tcp-", 4) || !strcmp(what, "udp-queued")) {
		fd = inet_refused(what);
	} else if (!strcmp(what, "raw-ip")) {
		fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
		if (fd < 0)
			fail_errno("a raw socket");
	} else if (!strcmp(what, "unix-relative")) {
		fd = unix_bound(&un, SOCK_STREAM, 4);
	} else if (!strcmp(what, "unix-replaced")) {
		fd = unix_bound(&un, SOCK_DGRAM, -1);
		if (unlink(un.sun_path) || mkdir(un.sun_path, 0700))
			fail_errno("a directory where the socket file was");
	} else if (!strcmp(what, "unix-unaccepted-data")) {
		held = unix_bound(&un, SOCK_STREAM, 4);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (void *)&un, sizeof(un)) || write(fd, "early", 5) != 5)
			fail_errno("client");
	} else if (!strcmp(what, "unix-scm")) {
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sk))
			fail_errno("socketpair");
		send_fd(sk[1], sk[1]);
		fd = sk[0];
	} else if (!strcmp(what, "unix-outside")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sk))
			fail_errno("socketpair");
		peer_outside(sk);
		fd = sk[0];
	} else if (!strcmp(what, "epoll-closed")) {
		struct epoll_event ev = { .events = EPOLLIN };

		int out[2];

		ep = epoll_create1(0);
		if (ep < 0 || pipe(p) || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
			fail_errno("epoll");
		/* the watched file stays open only in a process outside the tree */
		out[0] = dup(p[1]);
		out[1] = p[0];
		peer_outside(out);
		fd = p[1];
	} else {
		fail("what to hold? %s", what);
	}

	test_ready();
	test_waitsig();

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		fail("the fd is gone");
	unlink(un.sun_path);
	rmdir(un.sun_path);
	pass();
}
