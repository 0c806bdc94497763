// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open files criu must refuse to dump, one per run (test_files_errors.py
 * picks it with an argument): a TCP connection (both ends ours), a TCP
 * listener with a connection queued but not accepted, a UDP socket with a
 * datagram waiting, a raw IP socket with a packet waiting, a unix socket
 * listening on a relative path, one whose socket file was replaced, a
 * connection not accepted yet on which the client sent data, a netlink
 * socket with the kernel's answer not read yet, a packet socket with a
 * receive ring mapped in part, one with an eBPF filter, one with a frame unread,
 * one of the obsolete type SOCK_PACKET, a socket
 * pair with a file descriptor in flight (SCM_RIGHTS), a socket pair whose
 * other end a process outside the tree holds, and an epoll watching an fd
 * the task has closed while the file stays registered (only a process
 * outside the tree keeps it open).
 * Whatever the dump did, the state is still there afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "zdtm.h"

static int fd = -1, held = -1;

/* a raw ICMP socket that got its own echo request (and the reply) */
static int raw_queued(void)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	/* type 8 (echo), code 0, checksum of the rest, id and sequence 0 */
	unsigned char echo[8] = { 8, 0, 0xf7, 0xff };
	struct pollfd p;
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);

	if (s < 0 || sendto(s, echo, sizeof(echo), 0, (void *)&lo, sizeof(lo)) != sizeof(echo))
		fail_errno("a raw socket's echo request");
	p = (struct pollfd){ .fd = s, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1)
		fail("the raw socket got nothing");
	return s;
}

/* a packet socket with a receive ring mapped in part (a whole one is saved) */
static int packet_ring(void)
{
	struct tpacket_req r = { .tp_block_size = 4096, .tp_block_nr = 2,
				 .tp_frame_size = 2048, .tp_frame_nr = 4 };
	int v = TPACKET_V2, s = socket(AF_PACKET, SOCK_RAW, 0);
	char *ring;

	if (s < 0 || setsockopt(s, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(s, SOL_PACKET, PACKET_RX_RING, &r, sizeof(r)))
		fail_errno("a packet socket with a ring");
	/* the kernel maps a ring only whole: its second block goes after */
	ring = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, s, 0);
	if (ring == MAP_FAILED || munmap(ring + 4096, 4096))
		fail_errno("a packet socket's ring mapped in part");
	return s;
}

/* a packet socket with an eBPF program as its filter (returns 0: drop all) */
static int packet_ebpf(void)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER, .insn_cnt = 2,
				.insns = (uintptr_t)prog, .license = (uintptr_t)"GPL" };
	int s = socket(AF_PACKET, SOCK_RAW, 0), p;

	p = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (s < 0 || p < 0 || setsockopt(s, SOL_SOCKET, SO_ATTACH_BPF, &p, sizeof(p)))
		fail_errno("a packet socket with an eBPF filter");
	close(p);
	return s;
}

/* a packet socket on lo that got a frame of its ethertype */
static int packet_unread(void)
{
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(0x88b5),
				  .sll_ifindex = 1, .sll_halen = 6 };
	unsigned char frame[60] = { [12] = 0x88, [13] = 0xb5 };
	int s = socket(AF_PACKET, SOCK_RAW, htons(0x88b5));
	struct pollfd p = { .fd = s, .events = POLLIN };

	if (s < 0 || bind(s, (void *)&lo, sizeof(lo)) ||
	    sendto(s, frame, sizeof(frame), 0, (void *)&lo, sizeof(lo)) != sizeof(frame))
		fail_errno("a packet socket's frame on lo");
	if (poll(&p, 1, 5000) != 1)
		fail("the packet socket got nothing");
	return s;
}

/* a route socket that asked for loopback's link and left the answer unread */
static int netlink_unread(void)
{
	int s = test_ask_lo();
	char c;

	if (recv(s, &c, 1, MSG_PEEK) != 1)
		fail_errno("no answer to the netlink request");
	return s;
}

/* A grandchild outside the tree holds sk[1] until we are gone. */
static void peer_outside(int sk[2])
{
	held = test_hold_outside(sk[1], sk[0]);
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
 * left.
 */
static int inet_refused(const char *what)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(in);
	int s = socket(AF_INET, SOCK_STREAM, 0), c;

	if (s < 0 || bind(s, (void *)&in, sizeof(in)) || getsockname(s, (void *)&in, &len))
		fail_errno("%s", what);
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
	if (!strncmp(what, "tcp-", 4)) {
		fd = inet_refused(what);
	} else if (!strcmp(what, "raw-queued")) {
		fd = raw_queued();
	} else if (!strcmp(what, "netlink-unread")) {
		fd = netlink_unread();
	} else if (!strcmp(what, "packet-obsolete")) {
		fd = socket(AF_PACKET, SOCK_PACKET, 0);
		if (fd < 0)
			fail_errno("a SOCK_PACKET socket");
	} else if (!strcmp(what, "packet-ebpf")) {
		fd = packet_ebpf();
	} else if (!strcmp(what, "packet-unread")) {
		fd = packet_unread();
	} else if (!strcmp(what, "packet-ring")) {
		fd = packet_ring();
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
