// SPDX-License-Identifier: GPL-2.0-only
/*
 * Netlink, packet and raw sockets shared by two tasks (criu, or the tree's
 * root in a tree of its own namespaces, makes them before the fork): a
 * NETLINK_ROUTE socket on a port id of its own in group 21, a packet socket
 * for ethertype 0x88b7 bound to lo, a raw ICMP socket bound to 127.0.0.1
 * (ICMP_FILTER dropping every type),
 * all made by the parent before it forked. After the restore the child
 * asks rtnetlink about lo through the shared netlink socket and sends a
 * frame through the packet socket; the parent finds both sockets where they
 * were and receives the frame.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "zdtm.h"
#include "files_lib.h"

#define PROTO		0x88b7
#define GROUP		RTNLGRP_PHONET_IFADDR

static int nl, pk, raw;
static uint32_t portid;

static const char *child_check(void)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 99 },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = 1 },
	};
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO),
				  .sll_ifindex = 1, .sll_halen = ETH_ALEN };
	unsigned char frame[ETH_HLEN + 16] = { [12] = PROTO >> 8, [13] = PROTO & 0xff };
	struct pollfd p = { .fd = nl, .events = POLLIN };
	char buf[8192];
	struct nlmsghdr *h = (void *)buf;
	ssize_t n;

	if (send(nl, &req, sizeof(req), 0) != sizeof(req))
		return "the shared netlink socket can't send";
	if (poll(&p, 1, 5000) != 1)
		return "rtnetlink did not answer on the shared socket";
	n = recv(nl, buf, sizeof(buf), 0);
	if (n <= 0 || !NLMSG_OK(h, n) || h->nlmsg_seq != 99 || h->nlmsg_type != RTM_NEWLINK ||
	    h->nlmsg_pid != portid)
		return "rtnetlink's answer on the shared socket is not lo's link to our port id";
	memcpy(frame + ETH_HLEN, "from the child", 14);
	if (sendto(pk, frame, sizeof(frame), 0, (struct sockaddr *)&lo, sizeof(lo)) !=
	    sizeof(frame))
		return "the shared packet socket can't send on lo";
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1U << (GROUP - 1) };
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO),
				  .sll_ifindex = 1 }, ll;
	struct sockaddr_in lo4 = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) }, a4;
	unsigned char buf[256];
	uint32_t drop_all = ~0U;
	struct pollfd p;
	socklen_t len;
	pid_t child;

	test_init(argc, argv);
	portid = 0x5b000000 | ((uint32_t)getpid() << 4);
	a.nl_pid = portid;
	nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	pk = socket(AF_PACKET, SOCK_RAW, htons(PROTO));
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (nl < 0 || pk < 0 || raw < 0)
		fail_errno("a socket");
	if (bind(nl, (struct sockaddr *)&a, sizeof(a)) ||
	    bind(pk, (struct sockaddr *)&lo, sizeof(lo)) ||
	    bind(raw, (struct sockaddr *)&lo4, sizeof(lo4)))
		fail_errno("bind");
	/* ICMP to 127.0.0.1 from anyone else must not queue here: every type dropped */
	if (setsockopt(raw, SOL_RAW, 1 /* ICMP_FILTER */, &drop_all, sizeof(drop_all)))
		fail_errno("ICMP_FILTER");
	child = fork_checker(NULL, child_check);

	test_ready();
	test_waitsig();

	len = sizeof(a);
	if (getsockname(nl, (struct sockaddr *)&a, &len) || a.nl_pid != portid ||
	    a.nl_groups != 1U << (GROUP - 1))
		fail("the shared netlink socket is %u/%#x, not %u", a.nl_pid, a.nl_groups, portid);
	len = sizeof(ll);
	if (getsockname(pk, (struct sockaddr *)&ll, &len) || ll.sll_ifindex != 1 ||
	    ll.sll_protocol != htons(PROTO))
		fail("the shared packet socket is not bound to lo");
	len = sizeof(a4);
	if (getsockname(raw, (struct sockaddr *)&a4, &len) ||
	    a4.sin_addr.s_addr != lo4.sin_addr.s_addr)
		fail("the shared raw socket is not bound to 127.0.0.1");
	len = sizeof(drop_all);
	drop_all = 0;
	if (getsockopt(raw, SOL_RAW, 1, &drop_all, &len) || drop_all != ~0U)
		fail("the shared raw socket's ICMP_FILTER is %#x", drop_all);
	end_checker(child);
	p = (struct pollfd){ .fd = pk, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1 || recv(pk, buf, sizeof(buf), 0) < ETH_HLEN + 14 ||
	    memcmp(buf + ETH_HLEN, "from the child", 14))
		fail("the child's frame did not come to the shared packet socket");
	pass();
}
