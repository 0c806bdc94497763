// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses, routes, rules and neighbours: the kernel's own rtnetlink
 * dump messages, kept whole and sent back as requests on restore (what
 * ip(8)'s "save" and "restore" do, without ip). A dump message is a valid
 * RTM_NEW* request: every attribute comes back, also those this code has
 * no name for. What the kernel makes by itself is left out: routes of
 * protocol "kernel" (an address brings its own back), IPv6 temporary
 * addresses (privacy extensions make new ones). Links keep their
 * ifindex (ns-net-link.c), so the messages need no translation.
 *
 * What the dump keeps: IPv4 and IPv6 (other families are refused where
 * the namespace has any: multicast routing, MPLS); every routing table;
 * neighbours only when permanent. Routes using nexthop objects (RTA_NH_ID)
 * are refused: nexthop objects are not dumped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/ns-net-rtnl.h"

#ifndef RTA_NH_ID
#define RTA_NH_ID	30	/* Linux 5.3 */
#endif

/* ---------------------------------------------------------------- dump */

struct grab {
	const struct net_who *w;
	int type;				/* RTM_NEW* expected */
	int (*keep)(struct grab *g, struct nlmsghdr *h);	/* 1 keep, 0 skip, -1 refuse */
	ProtobufCBinaryData *msgs;
	size_t nr;
	int err;
	/* the IPv6 route whose expiry becomes RTA_EXPIRES, in seconds */
	uint32_t expires;
};

static struct rtattr *attr(struct nlmsghdr *h, size_t hdr, int type)
{
	int len = h->nlmsg_len - NLMSG_SPACE(hdr);
	struct rtattr *a = (struct rtattr *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(hdr));

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == type)
			return a;
	return NULL;
}

static const char *addr_str(int family, const struct rtattr *a, char *buf, size_t len)
{
	if (!a || (family != AF_INET && family != AF_INET6))
		return "any";
	return inet_ntop(family, RTA_DATA(a), buf, len) ?: "?";
}

static int keep_addr(struct grab *g, struct nlmsghdr *h)
{
	struct ifaddrmsg *ifa = NLMSG_DATA(h);

	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return 0;
	return !(ifa->ifa_flags & IFA_F_TEMPORARY);
}

static int keep_route(struct grab *g, struct nlmsghdr *h)
{
	struct rtmsg *rt = NLMSG_DATA(h);
	struct rta_cacheinfo *ci;
	struct rtattr *a;
	long hz;
	char b[64];

	if (rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6) {
		pr_err(NET_FMT ": a route of family %d (multicast routing or MPLS) is not "
		       "supported", NET_ARGS(g->w), rt->rtm_family);
		return -1;
	}
	if ((rt->rtm_flags & RTM_F_CLONED) || rt->rtm_protocol == RTPROT_KERNEL)
		return 0;
	if (attr(h, sizeof(*rt), RTA_NH_ID)) {
		pr_err(NET_FMT ": route to %s/%d uses a nexthop object; nexthop objects are "
		       "not supported", NET_ARGS(g->w),
		       addr_str(rt->rtm_family, attr(h, sizeof(*rt), RTA_DST), b, sizeof(b)),
		       rt->rtm_dst_len);
		return -1;
	}
	a = attr(h, sizeof(*rt), RTA_CACHEINFO);
	g->expires = 0;
	if (rt->rtm_family == AF_INET6 && a && RTA_PAYLOAD(a) >= sizeof(*ci)) {
		ci = RTA_DATA(a);
		hz = sysconf(_SC_CLK_TCK);
		/* clock ticks left; a request gives it in seconds (RTA_EXPIRES) */
		if (ci->rta_expires > 0 && hz > 0)
			g->expires = (ci->rta_expires + hz - 1) / hz;
	}
	return 1;
}

static int keep_rule(struct grab *g, struct nlmsghdr *h)
{
	struct fib_rule_hdr *fr = NLMSG_DATA(h);

	/* RTNL_FAMILY_IPMR's default rule is in every namespace with IP multicast */
	return fr->family == AF_INET || fr->family == AF_INET6;
}

static int keep_neigh(struct grab *g, struct nlmsghdr *h)
{
	struct ndmsg *nd = NLMSG_DATA(h);

	if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6)
		return 0;
	return !!(nd->ndm_state & NUD_PERMANENT);
}

static int grab_one(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct grab *g = arg;
	ProtobufCBinaryData *n;
	struct rtattr *a;
	size_t len;
	int k;

	if (g->err || h->nlmsg_type != g->type)
		return NL_OK;
	k = g->keep(g, h);
	if (k <= 0) {
		g->err = k;
		return NL_OK;
	}
	len = NLMSG_ALIGN(h->nlmsg_len) + (g->expires ? RTA_SPACE(sizeof(uint32_t)) : 0);
	n = xrealloc(g->msgs, (g->nr + 1) * sizeof(*n));
	if (!n || !(n[g->nr].data = xzalloc(len))) {
		g->msgs = n ?: g->msgs;
		g->err = -1;
		return NL_OK;
	}
	g->msgs = n;
	memcpy(n[g->nr].data, h, h->nlmsg_len);
	h = (struct nlmsghdr *)n[g->nr].data;
	/* this socket's business, not the object's */
	h->nlmsg_flags = h->nlmsg_seq = h->nlmsg_pid = 0;
	if (g->expires) {
		a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
		a->rta_type = RTA_EXPIRES;
		a->rta_len = RTA_LENGTH(sizeof(uint32_t));
		memcpy(RTA_DATA(a), &g->expires, sizeof(uint32_t));
		h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_SPACE(sizeof(uint32_t));
	}
	n[g->nr++].len = h->nlmsg_len;
	return NL_OK;
}

static int grab(struct grab *g, struct nl_sock *sk, int get, const char *what)
{
	struct nl_cb *cb = nl_cb_clone(nl_socket_get_cb(sk));
	int err;

	if (!cb)
		return -1;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, grab_one, g);
	err = nl_rtgen_request(sk, get, AF_UNSPEC, NLM_F_DUMP);
	if (!err)
		err = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (err < 0) {
		pr_err(NET_FMT ": can't list its %s: %s", NET_ARGS(g->w), what,
		       nl_geterror(err));
		return -1;
	}
	return g->err;
}

static int dump_kind(const struct net_who *w, struct nl_sock *sk, int get, int type,
		     int (*keep)(struct grab *, struct nlmsghdr *), const char *what,
		     ProtobufCBinaryData **out, size_t *nr)
{
	struct grab g = { .w = w, .type = type, .keep = keep };
	int ret = grab(&g, sk, get, what);

	*out = g.msgs;
	*nr = g.nr;
	if (!ret)
		pr_info(NET_FMT ": %zu %s", NET_ARGS(w), g.nr, what);
	return ret;
}

int net_dump_rtnl(const struct net_who *w, struct nl_sock *sk, NetnsEntry *e)
{
	if (dump_kind(w, sk, RTM_GETADDR, RTM_NEWADDR, keep_addr, "addresses", &e->addrs,
		      &e->n_addrs) ||
	    dump_kind(w, sk, RTM_GETROUTE, RTM_NEWROUTE, keep_route, "routes", &e->routes,
		      &e->n_routes) ||
	    dump_kind(w, sk, RTM_GETRULE, RTM_NEWRULE, keep_rule, "rules", &e->rules,
		      &e->n_rules) ||
	    dump_kind(w, sk, RTM_GETNEIGH, RTM_NEWNEIGH, keep_neigh, "permanent neighbours",
		      &e->neighs, &e->n_neighs))
		return -1;
	return 0;
}

static void free_msgs(ProtobufCBinaryData **m, size_t *nr)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		free((*m)[i].data);
	free(*m);
	*m = NULL;
	*nr = 0;
}

void net_free_rtnl(NetnsEntry *e)
{
	free_msgs(&e->addrs, &e->n_addrs);
	free_msgs(&e->routes, &e->n_routes);
	free_msgs(&e->rules, &e->n_rules);
	free_msgs(&e->neighs, &e->n_neighs);
}

/* ------------------------------------------------------------- restore */

struct current {
	ProtobufCBinaryData *msgs;
	size_t nr;
};

static int current(const struct net_who *w, struct nl_sock *sk, int get, int type,
		   struct current *c, const char *what);
static int same_addr(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b);

/* An image's message, checked, sent as @type with @flags; 0 or -errno. */
static int send_as(struct nl_sock *sk, const ProtobufCBinaryData *m, int want, int type,
		   int flags)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->data;
	struct nl_msg *msg;

	if (m->len < NLMSG_HDRLEN || h->nlmsg_len != m->len || h->nlmsg_type != want)
		return -EBADMSG;
	msg = nlmsg_convert(h);
	if (!msg)
		return -ENOMEM;
	nlmsg_hdr(msg)->nlmsg_type = type;
	nlmsg_hdr(msg)->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	/* the dump's sequence number and port are not this socket's */
	nlmsg_hdr(msg)->nlmsg_seq = NL_AUTO_SEQ;
	nlmsg_hdr(msg)->nlmsg_pid = NL_AUTO_PORT;
	return net_talk(sk, msg);
}

static const char *err_str(int err)
{
	return err == -EBADMSG ? "a damaged message in the image" : strerror(-err);
}

static void describe(const ProtobufCBinaryData *m, char *buf, size_t len)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->data;
	char a[64];

	if (m->len < NLMSG_SPACE(sizeof(struct rtmsg))) {
		snprintf(buf, len, "?");
	} else if (h->nlmsg_type == RTM_NEWADDR) {
		struct ifaddrmsg *ifa = NLMSG_DATA(h);
		struct rtattr *l = attr(h, sizeof(*ifa), IFA_LOCAL);

		snprintf(buf, len, "address %s/%d on link %d",
			 addr_str(ifa->ifa_family, l ?: attr(h, sizeof(*ifa), IFA_ADDRESS), a,
				  sizeof(a)), ifa->ifa_prefixlen, ifa->ifa_index);
	} else if (h->nlmsg_type == RTM_NEWROUTE) {
		struct rtmsg *rt = NLMSG_DATA(h);
		struct rtattr *t = attr(h, sizeof(*rt), RTA_TABLE);

		snprintf(buf, len, "route to %s/%d in table %u",
			 addr_str(rt->rtm_family, attr(h, sizeof(*rt), RTA_DST), a, sizeof(a)),
			 rt->rtm_dst_len, t ? *(uint32_t *)RTA_DATA(t) : rt->rtm_table);
	} else if (h->nlmsg_type == RTM_NEWRULE) {
		struct fib_rule_hdr *fr = NLMSG_DATA(h);
		struct rtattr *p = attr(h, sizeof(*fr), FRA_PRIORITY);

		snprintf(buf, len, "IPv%d rule of priority %u", fr->family == AF_INET ? 4 : 6,
			 p ? *(uint32_t *)RTA_DATA(p) : 0);
	} else {
		struct ndmsg *nd = NLMSG_DATA(h);

		snprintf(buf, len, "neighbour %s on link %d",
			 addr_str(nd->ndm_family, attr(h, sizeof(*nd), NDA_DST), a, sizeof(a)),
			 nd->ndm_ifindex);
	}
}

static int replay(const struct net_who *w, struct nl_sock *sk, const ProtobufCBinaryData *m,
		  int want, int flags)
{
	char what[160];
	int err = send_as(sk, m, want, want, flags);

	/* without EXCL the kernel says so itself; with it, there is a kernel's own */
	if (!err || (err == -EEXIST && want == RTM_NEWADDR))
		return 0;
	describe(m, what, sizeof(what));
	pr_err(NET_FMT ": can't restore its %s: %s", NET_ARGS(w), what, err_str(err));
	return -1;
}

/* ------------------------------------------- what the new namespace has */

static int keep_any(struct grab *g, struct nlmsghdr *h)
{
	struct rtgenmsg *r = NLMSG_DATA(h);

	return r->rtgen_family == AF_INET || r->rtgen_family == AF_INET6;
}

static int current(const struct net_who *w, struct nl_sock *sk, int get, int type,
		   struct current *c, const char *what)
{
	struct grab g = { .w = w, .type = type, .keep = keep_any };
	int ret = grab(&g, sk, get, what);

	c->msgs = g.msgs;
	c->nr = g.nr;
	return ret;
}

/* An address is (link, family, prefix length, local address) */
static int same_addr(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
	struct nlmsghdr *ha = (struct nlmsghdr *)a->data, *hb = (struct nlmsghdr *)b->data;
	struct ifaddrmsg *x = NLMSG_DATA(ha), *y = NLMSG_DATA(hb);
	struct rtattr *la, *lb;

	if (a->len < NLMSG_SPACE(sizeof(*x)) || b->len < NLMSG_SPACE(sizeof(*y)) ||
	    x->ifa_index != y->ifa_index || x->ifa_family != y->ifa_family ||
	    x->ifa_prefixlen != y->ifa_prefixlen)
		return 0;
	la = attr(ha, sizeof(*x), IFA_LOCAL) ?: attr(ha, sizeof(*x), IFA_ADDRESS);
	lb = attr(hb, sizeof(*y), IFA_LOCAL) ?: attr(hb, sizeof(*y), IFA_ADDRESS);
	return la && lb && RTA_PAYLOAD(la) == RTA_PAYLOAD(lb) &&
	       !memcmp(RTA_DATA(la), RTA_DATA(lb), RTA_PAYLOAD(la));
}

/*
 * Once the links are up: what the kernel added by itself (lo's 127.0.0.1
 * and ::1, IPv6 link-local addresses) and the dump did not have goes.
 */
static int drop_extra_addrs(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	struct current c;
	size_t i, j;
	int ret = 0, err;
	char what[160];

	if (current(w, sk, RTM_GETADDR, RTM_NEWADDR, &c, "addresses"))
		return -1;
	for (i = 0; i < c.nr && !ret; i++) {
		for (j = 0; j < e->n_addrs; j++)
			if (same_addr(&c.msgs[i], &e->addrs[j]))
				break;
		if (j < e->n_addrs)
			continue;
		err = send_as(sk, &c.msgs[i], RTM_NEWADDR, RTM_DELADDR, 0);
		describe(&c.msgs[i], what, sizeof(what));
		if (err && err != -ENOENT) {
			pr_err(NET_FMT ": can't remove the %s the kernel made: %s", NET_ARGS(w),
			       what, err_str(err));
			ret = -1;
		} else {
			pr_debug(NET_FMT ": removed the %s the kernel made", NET_ARGS(w), what);
		}
	}
	free_msgs(&c.msgs, &c.nr);
	return ret;
}

/*
 * Once the links are up, with what the kernel gave them (lo's 127.0.0.1
 * and ::1, IPv6 link-local addresses): those of the dump that are there
 * already are left alone (adding one again would add routes of its
 * prefix, which the kernel's own have not), the others are added. An
 * address the kernel adds meanwhile (a link-local one once the carrier
 * is seen, which linkwatch reports late) is no error either.
 */
int net_restore_addrs(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	struct current c;
	size_t i, j;
	int ret = 0;

	if (current(w, sk, RTM_GETADDR, RTM_NEWADDR, &c, "addresses"))
		return -1;
	for (i = 0; i < e->n_addrs && !ret; i++) {
		for (j = 0; j < c.nr; j++)
			if (same_addr(&c.msgs[j], &e->addrs[i]))
				break;
		if (j == c.nr)
			ret = replay(w, sk, &e->addrs[i], RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	}
	free_msgs(&c.msgs, &c.nr);
	return ret;
}

/*
 * Routes whose gateway is reached through another route of the dump need
 * it first: the kernel refuses an unreachable gateway. Rounds until no
 * route is left or none went in.
 */
static int restore_route_set(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	char *done = xzalloc(e->n_routes + 1);
	size_t i, left = e->n_routes, before;
	int err = 0;

	if (!done)
		return -1;
	do {
		before = left;
		for (i = 0; i < e->n_routes; i++) {
			if (done[i])
				continue;
			err = send_as(sk, &e->routes[i], RTM_NEWROUTE, RTM_NEWROUTE,
				      NLM_F_CREATE | NLM_F_EXCL);
			if (!err || err == -EEXIST) {
				done[i] = 1;
				left--;
			}
		}
	} while (left && left < before);
	for (i = 0; i < e->n_routes && left; i++)
		if (!done[i]) {
			replay(w, sk, &e->routes[i], RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
			break;
		}
	free(done);
	return left ? -1 : 0;
}

/* The new namespace's default rules go, the dumped ones (defaults included) come. */
static int restore_rules(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	struct current c;
	size_t i;
	int err;

	if (current(w, sk, RTM_GETRULE, RTM_NEWRULE, &c, "rules"))
		return -1;
	for (i = 0; i < c.nr; i++) {
		err = send_as(sk, &c.msgs[i], RTM_NEWRULE, RTM_DELRULE, 0);
		if (err && err != -ENOENT) {
			pr_err(NET_FMT ": can't remove a default rule: %s", NET_ARGS(w),
			       err_str(err));
			free_msgs(&c.msgs, &c.nr);
			return -1;
		}
	}
	free_msgs(&c.msgs, &c.nr);
	for (i = 0; i < e->n_rules; i++)
		if (replay(w, sk, &e->rules[i], RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL))
			return -1;
	return 0;
}

/* Once the links are up: addresses the kernel added go, routes, rules, neighbours come. */
int net_restore_routes(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	size_t i;

	if (drop_extra_addrs(w, sk, e) || restore_route_set(w, sk, e) || restore_rules(w, sk, e))
		return -1;
	for (i = 0; i < e->n_neighs; i++)
		if (replay(w, sk, &e->neighs[i], RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE))
			return -1;
	return 0;
}
