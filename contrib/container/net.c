// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container's network, over rtnetlink: a veth pair whose peer is born
 * in the container's network namespace (IFLA_NET_NS_PID), then, from
 * inside, loopback and the peer up with their addresses and a default
 * route.  Plain netlink messages: ctr needs five requests, and a launcher
 * for tests should not depend on the library the network part of criu
 * itself will use.
 *
 * The host end gets no address unless asked (--host-ip): tests give
 * addresses only inside namespaces of their own.  Deleting either end
 * deletes the pair; a network namespace that dies takes its end, and so
 * the pair, with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctr.h"

struct nlreq {
	struct nlmsghdr h;
	union {
		struct ifinfomsg ifi;
		struct ifaddrmsg ifa;
		struct rtmsg rt;
	};
	char attrs[1024];
};

static struct rtattr *tail(struct nlreq *r)
{
	return (struct rtattr *)((char *)&r->h + NLMSG_ALIGN(r->h.nlmsg_len));
}

static int add_attr(struct nlreq *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = tail(r);
	size_t total = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(RTA_LENGTH(len));

	if (total > sizeof(*r)) {
		ctr_err("netlink request too long");
		return -1;
	}
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->h.nlmsg_len = total;
	return 0;
}

static struct rtattr *nest_start(struct nlreq *r, unsigned short type)
{
	struct rtattr *a = tail(r);

	return add_attr(r, type, NULL, 0) ? NULL : a;
}

static void nest_end(struct nlreq *r, struct rtattr *a)
{
	a->rta_len = (char *)tail(r) - (char *)a;
}

static void req_init(struct nlreq *r, unsigned short type, unsigned short flags,
		     size_t body)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_len = NLMSG_LENGTH(body);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
}

/* Sends one request and returns the kernel's answer: 0 or -errno. */
static int talk(struct nlreq *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[4096];
	struct nlmsghdr *h;
	struct nlmsgerr *e;
	ssize_t n;
	int fd, ret = -EIO;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, r, r->h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type != NLMSG_ERROR)
			continue;
		e = NLMSG_DATA(h);
		ret = e->error;
		break;
	}
out:
	close(fd);
	return ret;
}

/* talk(), reporting a refusal as "WHAT: reason". */
static int request(struct nlreq *r, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	int ret = talk(r);

	if (!ret)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ctr_err("%s: %s", what, strerror(-ret));
	return -1;
}

int net_veth_create(const char *host, const char *peer, pid_t peer_pid)
{
	struct rtattr *info, *data, *pinfo;
	struct ifinfomsg *pifi;
	struct nlreq r;
	uint32_t pid = peer_pid;

	req_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	if (add_attr(&r, IFLA_IFNAME, host, strlen(host) + 1))
		return -1;
	info = nest_start(&r, IFLA_LINKINFO);
	if (!info || add_attr(&r, IFLA_INFO_KIND, "veth", 4))
		return -1;
	data = nest_start(&r, IFLA_INFO_DATA);
	pinfo = data ? nest_start(&r, VETH_INFO_PEER) : NULL;
	if (!pinfo)
		return -1;
	/* the peer's own ifinfomsg, then its attributes */
	pifi = (struct ifinfomsg *)tail(&r);
	r.h.nlmsg_len += NLMSG_ALIGN(sizeof(*pifi));
	memset(pifi, 0, sizeof(*pifi));
	if (add_attr(&r, IFLA_IFNAME, peer, strlen(peer) + 1) ||
	    add_attr(&r, IFLA_NET_NS_PID, &pid, sizeof(pid)))
		return -1;
	nest_end(&r, pinfo);
	nest_end(&r, data);
	nest_end(&r, info);
	return request(&r, "create veth %s (peer %s in the container)", host, peer);
}

static int ifindex(const char *ifname)
{
	unsigned int i = if_nametoindex(ifname);

	if (!i)
		ctr_perr("interface %s", ifname);
	return i ? (int)i : -1;
}

int net_link_up(const char *ifname)
{
	struct nlreq r;
	int idx = ifindex(ifname);

	if (idx < 0)
		return -1;
	req_init(&r, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = idx;
	r.ifi.ifi_flags = IFF_UP;
	r.ifi.ifi_change = IFF_UP;
	return request(&r, "set %s up", ifname);
}

/* "ADDR" or "ADDR/PREFIX", v4 or v6, into binary form. */
static int parse_addr(const char *text, unsigned char *addr, int *family, int *prefix)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;

	snprintf(buf, sizeof(buf), "%s", text);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	*family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(*family, buf, addr) != 1)
		goto bad;
	*prefix = *family == AF_INET ? 32 : 128;
	if (slash) {
		*prefix = strtol(slash, &end, 10);
		if (*end || *prefix < 0 || *prefix > (*family == AF_INET ? 32 : 128))
			goto bad;
	}
	return 0;
bad:
	ctr_err("bad address %s (ADDR[/PREFIX], IPv4 or IPv6)", text);
	return -1;
}

int net_addr_add(const char *ifname, const char *cidr)
{
	unsigned char addr[16];
	int family, prefix, idx;
	struct nlreq r;

	if (parse_addr(cidr, addr, &family, &prefix))
		return -1;
	idx = ifindex(ifname);
	if (idx < 0)
		return -1;
	req_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifaddrmsg));
	r.ifa.ifa_family = family;
	r.ifa.ifa_prefixlen = prefix;
	r.ifa.ifa_index = idx;
	/* v6: no duplicate address detection, the address is usable at once */
	r.ifa.ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0;
	if (add_attr(&r, IFA_LOCAL, addr, family == AF_INET ? 4 : 16) ||
	    add_attr(&r, IFA_ADDRESS, addr, family == AF_INET ? 4 : 16))
		return -1;
	return request(&r, "add address %s to %s", cidr, ifname);
}

int net_route_default(const char *gw)
{
	unsigned char addr[16];
	int family, prefix;
	struct nlreq r;

	if (parse_addr(gw, addr, &family, &prefix))
		return -1;
	req_init(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct rtmsg));
	r.rt.rtm_family = family;
	r.rt.rtm_table = RT_TABLE_MAIN;
	r.rt.rtm_protocol = RTPROT_BOOT;
	r.rt.rtm_scope = RT_SCOPE_UNIVERSE;
	r.rt.rtm_type = RTN_UNICAST;
	if (add_attr(&r, RTA_GATEWAY, addr, family == AF_INET ? 4 : 16))
		return -1;
	return request(&r, "add default route via %s", gw);
}

bool net_link_exists(const char *ifname)
{
	return if_nametoindex(ifname) != 0;
}

/* Deletes a link of this namespace; one that is gone already is fine. */
int net_link_del(const char *ifname)
{
	unsigned int idx = if_nametoindex(ifname);
	struct nlreq r;
	int ret;

	if (!idx)
		return 0;
	req_init(&r, RTM_DELLINK, 0, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = idx;
	ret = talk(&r);
	if (ret && ret != -ENODEV) {
		errno = -ret;
		ctr_perr("delete link %s", ifname);
		return -1;
	}
	return 0;
}
