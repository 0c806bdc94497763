// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packet sockets: a raw one made for protocol 0x88b5 and bound to lo, with
 * TPACKET_V2, PACKET_AUXDATA, PACKET_ORIGDEV, a receive buffer, a classic
 * BPF filter (only frames whose payload starts with 'Z') that is locked, a
 * fanout group, a multicast and a promiscuous membership on lo (the latter
 * twice); a datagram one for protocol 0x88b6 on every interface with
 * PACKET_RESERVE, SO_MARK, SO_PRIORITY, O_NONBLOCK; one made with protocol 0
 * and never bound.
 * After the restore each has its protocol, interface, options, filter,
 * fanout group and memberships (lo's multicast list and promiscuity
 * count), and frames sent on lo reach them: the filtered one skips a frame
 * its filter drops and gets the next with its auxiliary data.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <net/if.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "zdtm.h"

#define PROTO_A		0x88b5	/* IEEE local experimental ethertypes */
#define PROTO_B		0x88b6
static const unsigned char mc_addr[6] = { 0x01, 0x00, 0x5e, 0x7f, 0x12, 0x34 };

static int popt(int sk, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, level, name, &v, &len))
		fail_errno("getsockopt(%d, %d)", level, name);
	return v;
}

static void pset(int sk, int level, int name, int v)
{
	if (setsockopt(sk, level, name, &v, sizeof(v)))
		fail_errno("setsockopt(%d, %d, %d)", level, name, v);
}

static void member(int sk, int type, int times)
{
	struct packet_mreq mr = { .mr_ifindex = 1, .mr_type = type };

	if (type == PACKET_MR_MULTICAST) {
		mr.mr_alen = sizeof(mc_addr);
		memcpy(mr.mr_address, mc_addr, sizeof(mc_addr));
	}
	while (times--)
		if (setsockopt(sk, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			fail_errno("PACKET_ADD_MEMBERSHIP type %d", type);
}

/* lo's promiscuity count (IFLA_PROMISCUITY), asked of rtnetlink */
static int lo_promiscuity(void)
{
	char buf[16 << 10];
	struct nlmsghdr *h = (void *)buf;
	struct rtattr *a;
	int nl = test_ask_lo(), len, v = -1;

	len = recv(nl, buf, sizeof(buf), 0);
	close(nl);
	if (len <= 0 || !NLMSG_OK(h, len) || h->nlmsg_type != RTM_NEWLINK)
		fail("no link answer about lo");
	len = IFLA_PAYLOAD(h);
	for (a = IFLA_RTA(NLMSG_DATA(h)); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_PROMISCUITY)
			v = *(int *)RTA_DATA(a);
	if (v < 0)
		fail("lo's answer has no IFLA_PROMISCUITY");
	return v;
}

/* whether lo's multicast list (/proc/net/dev_mcast) holds mc_addr */
static int lo_has_mc(void)
{
	char line[256], want[16];
	FILE *f = fopen("/proc/net/dev_mcast", "r");
	int found = 0;

	if (!f)
		fail_errno("/proc/net/dev_mcast");
	snprintf(want, sizeof(want), "%02x%02x%02x%02x%02x%02x", mc_addr[0], mc_addr[1],
		 mc_addr[2], mc_addr[3], mc_addr[4], mc_addr[5]);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " lo ") && strstr(line, want))
			found = 1;
	fclose(f);
	return found;
}

static void frame(int out, int proto, const char *payload)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = 1,
				  .sll_protocol = htons(proto), .sll_halen = ETH_ALEN };
	unsigned char f[ETH_HLEN + 32] = { 0 };
	size_t n = strlen(payload);

	/* to and from lo's address, 00:00:00:00:00:00 */
	*(uint16_t *)(f + 12) = htons(proto);
	memcpy(f + ETH_HLEN, payload, n);
	if (sendto(out, f, ETH_HLEN + 32, 0, (struct sockaddr *)&to, sizeof(to)) != ETH_HLEN + 32)
		fail_errno("send a frame of protocol %#x on lo", proto);
}

/* @sk (raw: the frame, with its header; dgram: the payload) gets @payload */
static void got(int sk, int raw, const char *payload, int aux)
{
	char buf[256], cbuf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct pollfd p = { .fd = sk, .events = POLLIN };
	int off = raw ? ETH_HLEN : 0;
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&p, 1, 5000) != 1)
		fail("the frame '%s' did not come", payload);
	n = recvmsg(sk, &m, 0);

	if (n < off + (ssize_t)strlen(payload) || memcmp(buf + off, payload, strlen(payload)))
		fail("a packet socket got %zd bytes, not the frame '%s'", n, payload);
	c = CMSG_FIRSTHDR(&m);
	if (aux && (!c || c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA))
		fail("the frame '%s' came without PACKET_AUXDATA", payload);
}

int main(int argc, char **argv)
{
	/* accept frames whose payload starts with 'Z', drop the others */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_HLEN),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'Z', 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = 4, .filter = code };
	struct sock_filter back[8];
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO_A),
				  .sll_ifindex = 1 }, ll;
	int a, b, none, out, rcvbuf, fanout, promisc;
	struct timeval tv = { 5, 0 };
	socklen_t len;

	test_init(argc, argv);
	a = socket(AF_PACKET, SOCK_RAW, htons(PROTO_A));
	b = socket(AF_PACKET, SOCK_DGRAM, htons(PROTO_B));
	none = socket(AF_PACKET, SOCK_RAW, 0);
	if (a < 0 || b < 0 || none < 0)
		fail_errno("a packet socket");
	if (bind(a, (struct sockaddr *)&lo, sizeof(lo)))
		fail_errno("bind to lo");
	pset(a, SOL_PACKET, PACKET_VERSION, TPACKET_V2);
	pset(a, SOL_PACKET, PACKET_AUXDATA, 1);
	pset(a, SOL_PACKET, PACKET_ORIGDEV, 1);
	pset(a, SOL_SOCKET, SO_RCVBUFFORCE, 123456);
	if (setsockopt(a, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		fail_errno("SO_ATTACH_FILTER");
	pset(a, SOL_SOCKET, SO_LOCK_FILTER, 1);
	pset(a, SOL_PACKET, PACKET_FANOUT, (getpid() & 0xffff) | PACKET_FANOUT_HASH << 16);
	member(a, PACKET_MR_MULTICAST, 1);
	member(a, PACKET_MR_PROMISC, 2);
	pset(b, SOL_PACKET, PACKET_RESERVE, 64);
	pset(b, SOL_SOCKET, SO_MARK, 9);
	pset(b, SOL_SOCKET, SO_PRIORITY, 3);
	if (fcntl(b, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	rcvbuf = popt(a, SOL_SOCKET, SO_RCVBUF);
	fanout = popt(a, SOL_PACKET, PACKET_FANOUT);
	promisc = lo_promiscuity();
	if (!lo_has_mc())
		fail("lo's multicast list does not show the membership");

	test_ready();
	test_waitsig();

	len = sizeof(ll);
	if (getsockname(a, (struct sockaddr *)&ll, &len) || ll.sll_ifindex != 1 ||
	    ll.sll_protocol != htons(PROTO_A))
		fail("the raw socket is not bound to lo, protocol %#x", PROTO_A);
	len = sizeof(ll);
	if (getsockname(b, (struct sockaddr *)&ll, &len) || ll.sll_ifindex != 0 ||
	    ll.sll_protocol != htons(PROTO_B))
		fail("the datagram socket is not on every interface, protocol %#x", PROTO_B);
	len = sizeof(ll);
	if (getsockname(none, (struct sockaddr *)&ll, &len) || ll.sll_protocol ||
	    popt(none, SOL_SOCKET, SO_TYPE) != SOCK_RAW)
		fail("the socket of protocol 0 is not as it was");
	if (popt(a, SOL_PACKET, PACKET_VERSION) != TPACKET_V2 ||
	    popt(a, SOL_PACKET, PACKET_AUXDATA) != 1 || popt(a, SOL_PACKET, PACKET_ORIGDEV) != 1 ||
	    popt(a, SOL_SOCKET, SO_RCVBUF) != rcvbuf || popt(a, SOL_SOCKET, SO_LOCK_FILTER) != 1 ||
	    popt(a, SOL_PACKET, PACKET_FANOUT) != fanout ||
	    popt(b, SOL_PACKET, PACKET_RESERVE) != 64 || popt(b, SOL_SOCKET, SO_TYPE) != SOCK_DGRAM ||
	    popt(b, SOL_PACKET, PACKET_AUXDATA) != 0 || popt(b, SOL_SOCKET, SO_MARK) != 9 ||
	    popt(b, SOL_SOCKET, SO_PRIORITY) != 3 || popt(a, SOL_SOCKET, SO_MARK) != 0)
		fail("an option is not as it was");
	if (!(fcntl(b, F_GETFL) & O_NONBLOCK) || (fcntl(a, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	len = 8;
	if (getsockopt(a, SOL_SOCKET, SO_GET_FILTER, back, &len) || len != 4 ||
	    memcmp(back, code, sizeof(code)))
		fail("the filter is not as it was (%u instructions)", len);
	if (lo_promiscuity() != promisc)
		fail("lo's promiscuity is %d, not %d", lo_promiscuity(), promisc);
	if (!lo_has_mc())
		fail("lo's multicast list lost the membership");
	if (setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		fail_errno("SO_RCVTIMEO");
	out = socket(AF_PACKET, SOCK_RAW, 0);
	if (out < 0)
		fail_errno("a socket to send with");
	frame(out, PROTO_A, "Y: the filter drops it");
	frame(out, PROTO_A, "Z: the filter keeps it");
	got(a, 1, "Z: the filter keeps it", 1);
	frame(out, PROTO_B, "to the datagram socket");
	got(b, 0, "to the datagram socket", 0);
	pass();
}
