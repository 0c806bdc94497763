// SPDX-License-Identifier: GPL-2.0-only
/*
 * Netlink sockets: a NETLINK_ROUTE one bound to a port id of its own, in
 * group 21 (through bind()) and group 36 (past the 32 that bind() reaches),
 * with NETLINK_PKTINFO, NO_ENOBUFS, EXT_ACK, BROADCAST_ERROR,
 * LISTEN_ALL_NSID, a receive buffer, SO_PRIORITY
 * and SO_TIMESTAMP; a
 * NETLINK_KOBJECT_UEVENT one bound to another port id; an unbound generic
 * netlink datagram socket with NETLINK_CAP_ACK; two NETLINK_USERSOCK ones,
 * one connected to the other, O_NONBLOCK. After the restore each has its
 * port id, groups, peer and options; the route socket answers an
 * RTM_GETLINK dump (loopback among the links) and receives what a new
 * socket multicasts to group 21; the connected pair talks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "zdtm.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif
#define GROUP_LOW	RTNLGRP_PHONET_IFADDR	/* 21: nothing sends there here */
#define GROUP_HIGH	RTNLGRP_STATS		/* 36 */

static int nl_socket(int type, int proto, uint32_t portid, uint32_t groups)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = portid, .nl_groups = groups };
	int sk = socket(AF_NETLINK, type, proto);

	if (sk < 0)
		fail_errno("a netlink socket of protocol %d", proto);
	if ((portid || groups) && bind(sk, (struct sockaddr *)&a, sizeof(a)))
		fail_errno("bind netlink protocol %d to %u", proto, portid);
	return sk;
}

static int nl_opt(int sk, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, SOL_NETLINK, name, &v, &len))
		fail_errno("getsockopt(SOL_NETLINK, %d)", name);
	return v;
}

static void nl_set(int sk, int name, int v)
{
	if (setsockopt(sk, SOL_NETLINK, name, &v, sizeof(v)))
		fail_errno("setsockopt(SOL_NETLINK, %d)", name);
}

/* -1: this kernel can't say (getsockopt() reads it on newer ones than 6.1) */
static int listen_all_nsid(int sk)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &v, &len)) {
		if (errno != ENOPROTOOPT)
			fail_errno("getsockopt(NETLINK_LISTEN_ALL_NSID)");
		return -1;
	}
	return v;
}

static int sol_opt(int sk, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, SOL_SOCKET, name, &v, &len))
		fail_errno("getsockopt(SOL_SOCKET, %d)", name);
	return v;
}

static void same_addr(int sk, int peer, uint32_t portid, uint32_t groups, const char *what)
{
	struct sockaddr_nl a;
	socklen_t len = sizeof(a);

	if ((peer ? getpeername(sk, (struct sockaddr *)&a, &len) :
		    getsockname(sk, (struct sockaddr *)&a, &len)) ||
	    a.nl_pid != portid || a.nl_groups != groups)
		fail("%s: %s is %u/%#x, not %u/%#x", what, peer ? "peer" : "address", a.nl_pid,
		     a.nl_groups, portid, groups);
}

static void groups_are(int sk, const uint32_t *want, const char *what)
{
	uint32_t g[4] = { 0 };
	socklen_t len = sizeof(g);

	if (getsockopt(sk, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &len))
		fail_errno("%s: NETLINK_LIST_MEMBERSHIPS", what);
	if (g[0] != want[0] || g[1] != want[1])
		fail("%s: groups %#x %#x, not %#x %#x", what, g[0], g[1], want[0], want[1]);
}

/* RTM_GETLINK dump on @sk: loopback (ifindex 1) must be among the answers */
static void link_dump(int sk)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 77 },
		.i = { .ifi_family = AF_UNSPEC },
	};
	static char buf[64 << 10];
	struct nlmsghdr *h;
	int len, lo = 0, done = 0;

	if (send(sk, &req, sizeof(req), 0) != sizeof(req))
		fail_errno("send RTM_GETLINK");
	while (!done) {
		len = recv(sk, buf, sizeof(buf), 0);
		if (len <= 0)
			fail_errno("the RTM_GETLINK dump's answer");
		for (h = (void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != 77)
				fail("an answer of sequence %u, not 77", h->nlmsg_seq);
			if (h->nlmsg_type == NLMSG_DONE)
				done = 1;
			else if (h->nlmsg_type == NLMSG_ERROR)
				fail("RTM_GETLINK: error %d",
				     ((struct nlmsgerr *)NLMSG_DATA(h))->error);
			else if (h->nlmsg_type == RTM_NEWLINK &&
				 ((struct ifinfomsg *)NLMSG_DATA(h))->ifi_index == 1)
				lo = 1;
		}
	}
	if (!lo)
		fail("the RTM_GETLINK dump does not show loopback");
}

/* a new socket multicasts to GROUP_LOW: @sk gets it, with the group (PKTINFO) */
static void group_event(int sk)
{
	struct {
		struct nlmsghdr h;
		char data[8];
	} msg = { .h = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_MIN_TYPE + 0x40 },
		  .data = "zdtm-nl" };
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = 1U << (GROUP_LOW - 1) };
	char buf[256], cbuf[CMSG_SPACE(sizeof(struct nl_pktinfo))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int out = nl_socket(SOCK_RAW, NETLINK_ROUTE, 0, 0);
	ssize_t n;

	if (sendto(out, &msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(msg))
		fail_errno("multicast to group %d", GROUP_LOW);
	n = recvmsg(sk, &m, 0);
	if (n != sizeof(msg) || memcmp(buf + sizeof(msg.h), msg.data, sizeof(msg.data)))
		fail("the route socket got %zd bytes, not the group's message", n);
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_NETLINK || c->cmsg_type != NETLINK_PKTINFO ||
	    ((struct nl_pktinfo *)CMSG_DATA(c))->group != GROUP_LOW)
		fail("the group's message came without NETLINK_PKTINFO of group %d", GROUP_LOW);
	close(out);
}

static void talk(int from, int to, const char *msg)
{
	char buf[64];
	ssize_t n;

	if (send(from, msg, strlen(msg), 0) != (ssize_t)strlen(msg))
		fail_errno("send %s", msg);
	n = recv(to, buf, sizeof(buf), 0);
	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n))
		fail("got %zd bytes, not %s", n, msg);
}

int main(int argc, char **argv)
{
	uint32_t base = 0x5a000000 | ((uint32_t)getpid() << 4), want[2] = { 0 };
	uint32_t high = GROUP_HIGH, none[2] = { 0 };
	int route, uevent, gen, ua, uc, rcvbuf;
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = base + 1 };
	struct timeval tv = { 5, 0 };

	test_init(argc, argv);
	route = nl_socket(SOCK_RAW, NETLINK_ROUTE, base, 1U << (GROUP_LOW - 1));
	if (setsockopt(route, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &high, sizeof(high)))
		fail_errno("join group %d", GROUP_HIGH);
	nl_set(route, NETLINK_PKTINFO, 1);
	nl_set(route, NETLINK_NO_ENOBUFS, 1);
	nl_set(route, NETLINK_EXT_ACK, 1);
	nl_set(route, NETLINK_BROADCAST_ERROR, 1);
	nl_set(route, NETLINK_LISTEN_ALL_NSID, 1);
	if (setsockopt(route, SOL_SOCKET, SO_PRIORITY, &(int){ 4 }, sizeof(int)) ||
	    setsockopt(route, SOL_SOCKET, SO_TIMESTAMP, &(int){ 1 }, sizeof(int)))
		fail_errno("SO_PRIORITY, SO_TIMESTAMP");
	rcvbuf = 300000;
	if (setsockopt(route, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		fail_errno("SO_RCVBUFFORCE");
	rcvbuf = sol_opt(route, SO_RCVBUF);
	want[0] = 1U << (GROUP_LOW - 1);
	want[1] = 1U << (GROUP_HIGH - 33);
	uevent = nl_socket(SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, base + 2, 0);
	gen = nl_socket(SOCK_DGRAM, NETLINK_GENERIC, 0, 0);
	nl_set(gen, NETLINK_CAP_ACK, 1);
	ua = nl_socket(SOCK_RAW, NETLINK_USERSOCK, base + 1, 0);
	uc = nl_socket(SOCK_RAW, NETLINK_USERSOCK, base + 3, 0);
	if (connect(uc, (struct sockaddr *)&a, sizeof(a)))
		fail_errno("connect the user socket");
	if (fcntl(uc, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");

	test_ready();
	test_waitsig();

	same_addr(route, 0, base, want[0], "the route socket");
	groups_are(route, want, "the route socket");
	same_addr(uevent, 0, base + 2, 0, "the uevent socket");
	same_addr(gen, 0, 0, 0, "the unbound generic socket");
	groups_are(gen, none, "the unbound generic socket");
	same_addr(ua, 0, base + 1, 0, "the user socket");
	same_addr(uc, 0, base + 3, 0, "the connected user socket");
	same_addr(uc, 1, base + 1, 0, "the connected user socket");
	if (nl_opt(route, NETLINK_PKTINFO) != 1 || nl_opt(route, NETLINK_NO_ENOBUFS) != 1 ||
	    nl_opt(route, NETLINK_BROADCAST_ERROR) != 1 || listen_all_nsid(route) == 0 ||
	    listen_all_nsid(gen) == 1 ||
	    nl_opt(route, NETLINK_EXT_ACK) != 1 || nl_opt(route, NETLINK_CAP_ACK) != 0 ||
	    nl_opt(gen, NETLINK_CAP_ACK) != 1 || nl_opt(gen, NETLINK_PKTINFO) != 0 ||
	    sol_opt(route, SO_RCVBUF) != rcvbuf || sol_opt(route, SO_PROTOCOL) != NETLINK_ROUTE ||
	    sol_opt(route, SO_PRIORITY) != 4 || sol_opt(route, SO_TIMESTAMP) != 1 ||
	    sol_opt(uevent, SO_TIMESTAMP) != 0 ||
	    sol_opt(uevent, SO_PROTOCOL) != NETLINK_KOBJECT_UEVENT ||
	    sol_opt(uevent, SO_TYPE) != SOCK_DGRAM || sol_opt(gen, SO_PROTOCOL) != NETLINK_GENERIC)
		fail("an option or protocol is not as it was");
	if (!(fcntl(uc, F_GETFL) & O_NONBLOCK) || (fcntl(route, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	if (setsockopt(route, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(ua, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		fail_errno("SO_RCVTIMEO");
	link_dump(route);
	group_event(route);
	talk(uc, ua, "to the peer");
	pass();
}
