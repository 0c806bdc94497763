// SPDX-License-Identifier: GPL-2.0
/*
 * Links of the tree's network namespace, through libnl-route: dumped
 * field by field (netns.proto, net_link) and made again by kind, with
 * their ifindex (routes, neighbours and the tree's sockets name links by
 * it), name, MAC, MTU, queue length, alias, group and flags. They are
 * made down and brought up once their addresses are back.
 *
 * - loopback: the namespace has it; only configured.
 * - dummy: made in the namespace.
 * - veth with both ends inside: made as a pair in the namespace.
 * - veth with the peer outside: made from criu's namespace with the
 *   inside end sent into the tree's (IFLA_NET_NS_FD), so its peer is born
 *   in criu's namespace; named by --external veth[IFNAME]:OUT[@BRIDGE]
 *   (and put in BRIDGE), else by the kernel. A failed restore removes it.
 * - macvlan, ipvlan: on a lower link of criu's namespace, the one of the
 *   dump's name or --external macvlan[IFNAME]:LOWER.
 * Any other kind is refused at the dump, by name.
 */
#include <errno.h>
#include <linux/if.h>
#include <linux/net_namespace.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/link/ipvlan.h>
#include <netlink/route/link/macvlan.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/rtnl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/external.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/ns-net-link.h"

/* the flags a request may set; UP is set last, RUNNING and the like are the kernel's */
#define LINK_FLAGS	(IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST | \
			 IFF_DEBUG | IFF_DYNAMIC)
#define LOOPBACK_IFINDEX	1

/* ----------------------------------------------------------------- dump */

static int bytes_of(struct nl_addr *a, ProtobufCBinaryData *b, protobuf_c_boolean *has)
{
	if (!a || !nl_addr_get_len(a))
		return 0;
	b->data = xmalloc(nl_addr_get_len(a));
	if (!b->data)
		return -1;
	memcpy(b->data, nl_addr_get_binary_addr(a), nl_addr_get_len(a));
	b->len = nl_addr_get_len(a);
	*has = 1;
	return 0;
}

static int nsid_answer(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[NETNSA_MAX + 1];

	if (nlmsg_parse(nlmsg_hdr(msg), sizeof(struct rtgenmsg), tb, NETNSA_MAX, NULL) == 0 &&
	    tb[NETNSA_NSID])
		*(int *)arg = (int32_t)nla_get_u32(tb[NETNSA_NSID]);
	return NL_OK;
}

/* The id the tree's namespace has for namespace @fd (criu's), or -1. */
static int nsid_of(struct nl_sock *sk, int fd)
{
	struct rtgenmsg g = { .rtgen_family = AF_UNSPEC };
	struct nl_cb *cb = nl_cb_clone(nl_socket_get_cb(sk));
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_GETNSID, NLM_F_REQUEST);
	int id = -1;

	if (!cb || !msg || nlmsg_append(msg, &g, sizeof(g), NLMSG_ALIGNTO) ||
	    nla_put_u32(msg, NETNSA_FD, fd))
		goto out;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, nsid_answer, &id);
	/* the answer, then the ack: both read, or the next request gets the ack */
	if (nl_send_auto(sk, msg) >= 0 && nl_recvmsgs(sk, cb) >= 0)
		nl_wait_for_ack(sk);
out:
	nlmsg_free(msg);
	if (cb)
		nl_cb_put(cb);
	return id;
}

static char *name_of(struct nl_sock *sk, int ifindex)
{
	struct rtnl_link *l;
	char *name;

	if (ifindex <= 0 || rtnl_link_get_kernel(sk, ifindex, NULL, &l))
		return NULL;
	name = xstrdup(rtnl_link_get_name(l));
	rtnl_link_put(l);
	return name;
}

/* A veth's peer: inside (its ifindex), or in criu's namespace (its name, bridge). */
static int dump_veth(struct rtnl_link *link, struct nl_sock *host, int criu_nsid, NetLink *l)
{
	struct rtnl_link *peer;
	int32_t nsid;

	l->has_peer_ifindex = 1;
	if (rtnl_link_get_link_netnsid(link, &nsid)) {
		l->peer_ifindex = rtnl_link_get_link(link);
		return 0;
	}
	if (nsid != criu_nsid || criu_nsid < 0 ||
	    rtnl_link_get_kernel(host, rtnl_link_get_link(link), NULL, &peer))
		return 0;
	if (rtnl_link_get_link(peer) == (int)l->ifindex) {
		l->peer_name = xstrdup(rtnl_link_get_name(peer));
		l->peer_master = name_of(host, rtnl_link_get_master(peer));
		l->has_peer_mtu = 1;
		l->peer_mtu = rtnl_link_get_mtu(peer);
	}
	rtnl_link_put(peer);
	return 0;
}

static int dump_lowered(const struct net_who *w, struct rtnl_link *link, struct nl_sock *host,
			int criu_nsid, NetLink *l)
{
	uint16_t mode;
	int32_t nsid;

	if (rtnl_link_get_link_netnsid(link, &nsid)) {
		pr_err(NET_FMT ": %s %s sits on a link of the same namespace; not supported",
		       NET_ARGS(w), l->kind, l->name);
		return -1;
	}
	if (nsid == criu_nsid && criu_nsid >= 0)
		l->lower = name_of(host, rtnl_link_get_link(link));
	l->has_mode = 1;
	if (!strcmp(l->kind, "macvlan")) {
		l->mode = rtnl_link_macvlan_get_mode(link);
		l->has_mode_flags = 1;
		l->mode_flags = rtnl_link_macvlan_get_flags(link);
	} else if (!rtnl_link_ipvlan_get_mode(link, &mode)) {
		l->mode = mode;
	}
	return 0;
}

static const char *kind_of(struct rtnl_link *link)
{
	const char *t = rtnl_link_get_type(link);

	if (rtnl_link_get_flags(link) & IFF_LOOPBACK)
		return "loopback";
	if (t && (!strcmp(t, "veth") || !strcmp(t, "dummy") || !strcmp(t, "macvlan") ||
		  !strcmp(t, "ipvlan")))
		return t;
	return NULL;
}

static int dump_link(const struct net_who *w, struct rtnl_link *link, struct nl_sock *host,
		     int criu_nsid, NetLink *l)
{
	const char *kind = kind_of(link), *alias;

	net_link__init(l);
	l->ifindex = rtnl_link_get_ifindex(link);
	l->name = xstrdup(rtnl_link_get_name(link));
	if (!kind) {
		pr_err(NET_FMT ": link %s (%s) is not supported, only loopback, veth, dummy, "
		       "macvlan and ipvlan links are; --empty-ns net or --external "
		       "net[%lu]:KEY leave the namespace to the caller", NET_ARGS(w),
		       l->name ?: "?", rtnl_link_get_type(link) ?: "no kind", w->ns);
		return -1;
	}
	l->kind = xstrdup(kind);
	l->flags = rtnl_link_get_flags(link);
	l->mtu = rtnl_link_get_mtu(link);
	l->has_txqlen = 1;
	l->txqlen = rtnl_link_get_txqlen(link);
	l->has_group = 1;
	l->group = rtnl_link_get_group(link);
	alias = rtnl_link_get_ifalias(link);
	if (alias && *alias)
		l->alias = xstrdup(alias);
	if (!l->name || !l->kind ||
	    bytes_of(rtnl_link_get_addr(link), &l->address, &l->has_address) ||
	    bytes_of(rtnl_link_get_broadcast(link), &l->broadcast, &l->has_broadcast))
		return -1;
	if (!strcmp(kind, "veth"))
		return dump_veth(link, host, criu_nsid, l);
	if (!strcmp(kind, "macvlan") || !strcmp(kind, "ipvlan"))
		return dump_lowered(w, link, host, criu_nsid, l);
	return 0;
}

int net_dump_links(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
		   int hostns, NetnsEntry *e)
{
	int criu_nsid = nsid_of(sk, hostns), err, ret = 0, n;
	struct nl_cache *cache;
	struct nl_object *o;

	err = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (err) {
		pr_err(NET_FMT ": can't list its links: %s", NET_ARGS(w), nl_geterror(err));
		return -1;
	}
	n = nl_cache_nitems(cache);
	e->links = xzalloc(n * sizeof(*e->links) + 1);
	if (!e->links)
		ret = -1;
	for (o = nl_cache_get_first(cache); o && !ret; o = nl_cache_get_next(o)) {
		NetLink *l = xzalloc(sizeof(*l));

		if (!l) {
			ret = -1;
			break;
		}
		e->links[e->n_links++] = l;
		ret = dump_link(w, (struct rtnl_link *)o, host, criu_nsid, l);
		if (!ret)
			pr_info(NET_FMT ": link %d %s (%s)%s%s", NET_ARGS(w), l->ifindex, l->name,
				l->kind, l->peer_name ? ", peer outside " : "",
				l->peer_name ?: "");
	}
	nl_cache_free(cache);
	return ret;
}

/* -------------------------------------------------------------- restore */

static struct nl_addr *addr_of(const ProtobufCBinaryData *b)
{
	return nl_addr_build(AF_UNSPEC, b->data, b->len);
}

/* What any kind of link is made with. */
static int fill(struct rtnl_link *link, const NetLink *l)
{
	struct nl_addr *a;

	rtnl_link_set_name(link, l->name);
	rtnl_link_set_ifindex(link, l->ifindex);
	rtnl_link_set_mtu(link, l->mtu);
	if (l->has_txqlen)
		rtnl_link_set_txqlen(link, l->txqlen);
	if (l->has_group)
		rtnl_link_set_group(link, l->group);
	if (l->has_address && l->address.len) {
		a = addr_of(&l->address);
		if (!a)
			return -1;
		rtnl_link_set_addr(link, a);
		nl_addr_put(a);
	}
	return 0;
}

static const NetLink *link_by_index(const NetnsEntry *e, uint32_t ifindex)
{
	size_t i;

	for (i = 0; i < e->n_links; i++)
		if (e->links[i]->ifindex == ifindex)
			return e->links[i];
	return NULL;
}

/*
 * A macvlan or ipvlan can't go up while another one on the same lower link
 * has its address. After a dump on this host that other one is the dumped
 * namespace's copy: the kernel frees a dead namespace from a workqueue, a
 * little after its last task is gone, so the clash ends by itself. Wait for
 * it (a bounded time), then say what clashes.
 */
#define LOWER_CLASH_WAIT_MS 5000

static int change_link(struct nl_sock *sk, struct rtnl_link *c, const NetLink *l, int up)
{
	struct timespec step = { 0, 10 * 1000 * 1000 };
	int waited, err;

	for (waited = 0;; waited += 10) {
		err = rtnl_link_change(sk, c, c, 0);
		if (err != -NLE_EXIST || !up || waited >= LOWER_CLASH_WAIT_MS ||
		    (strcmp(l->kind, "macvlan") && strcmp(l->kind, "ipvlan")))
			break;
		if (!waited)
			pr_info("link %s: its address is busy on the lower link; "
				"waiting for a dead namespace to go", l->name);
		nanosleep(&step, NULL);
	}
	return err;
}

/* After the making: flags but UP, alias. */
static int configure(const struct net_who *w, struct nl_sock *sk, const NetLink *l, int up)
{
	struct rtnl_link *c = rtnl_link_alloc();
	int err;

	if (!c)
		return -1;
	rtnl_link_set_ifindex(c, l->ifindex);
	rtnl_link_set_flags(c, (l->flags & LINK_FLAGS) | (up ? IFF_UP : 0));
	rtnl_link_unset_flags(c, LINK_FLAGS & ~l->flags);
	if (!up) {
		rtnl_link_set_mtu(c, l->mtu);
		if (l->alias)
			rtnl_link_set_ifalias(c, l->alias);
	}
	err = change_link(sk, c, l, up);
	rtnl_link_put(c);
	if (err) {
		pr_err(NET_FMT ": can't %s link %s: %s", NET_ARGS(w),
		       up ? "bring up" : "configure", l->name, nl_geterror(err));
		return -1;
	}
	return 0;
}

static int make_dummy(const struct net_who *w, struct nl_sock *sk, const NetLink *l)
{
	struct rtnl_link *link = rtnl_link_alloc();
	int err = -1;

	if (link && !rtnl_link_set_type(link, "dummy") && !fill(link, l))
		err = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(link);
	if (err) {
		pr_err(NET_FMT ": can't make dummy link %s: %s", NET_ARGS(w), l->name,
		       err < 0 ? nl_geterror(err) : "out of memory");
		return -1;
	}
	return 0;
}

/* Both ends inside: made once, from the end with the lower ifindex. */
static int make_veth_pair(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e,
			  const NetLink *l)
{
	const NetLink *pl = link_by_index(e, l->peer_ifindex);
	struct rtnl_link *link, *peer;
	int err = -1;

	if (!pl || strcmp(pl->kind, "veth") || pl->peer_ifindex != l->ifindex) {
		pr_err(NET_FMT ": veth %s: its peer %u is not in the image", NET_ARGS(w),
		       l->name, l->peer_ifindex);
		return -1;
	}
	if (pl->ifindex < l->ifindex)
		return 0;
	link = rtnl_link_veth_alloc();
	if (!link)
		return -1;
	peer = rtnl_link_veth_get_peer(link);
	if (!fill(link, l) && !fill(peer, pl))
		err = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(peer);
	rtnl_link_veth_release(link);
	if (err) {
		pr_err(NET_FMT ": can't make veth pair %s, %s: %s", NET_ARGS(w), l->name,
		       pl->name, err < 0 ? nl_geterror(err) : "out of memory");
		return -1;
	}
	return 0;
}

static int note_peer(struct net_peers *p, int ifindex)
{
	int *n = xpush(p->ifindex, p->nr);

	if (!n)
		return -1;
	*n = ifindex;
	return 0;
}

/* --external veth[IFNAME]:OUT[@BRIDGE]: OUT into @name, BRIDGE into @bridge */
static void outside_name(const struct opts *o, const NetLink *l, char *name, char *bridge)
{
	const char *v = external_lookup(o, "veth", l->name), *at;

	name[0] = bridge[0] = '\0';
	if (!v)
		return;
	at = strchr(v, '@');
	snprintf(name, IFNAMSIZ, "%.*s", (int)(at ? at - v : (long)strlen(v)), v);
	if (at)
		snprintf(bridge, IFNAMSIZ, "%s", at + 1);
}

static int make_veth_out(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
			 int nsfd, const NetLink *l, const struct opts *o, struct net_peers *p)
{
	char name[IFNAMSIZ], bridge[IFNAMSIZ];
	struct rtnl_link *link, *peer, *in;
	int err = -1, peer_idx;

	outside_name(o, l, name, bridge);
	if (!name[0] && l->peer_name)
		pr_info(NET_FMT ": veth %s: its peer was %s in criu's namespace at the dump; the "
			"kernel names it now (--external veth[%s]:%s would)", NET_ARGS(w), l->name,
			l->peer_name, l->name, l->peer_name);
	link = rtnl_link_veth_alloc();
	if (!link)
		return -1;
	peer = rtnl_link_veth_get_peer(link);
	if (!fill(link, l)) {
		rtnl_link_set_ns_fd(link, nsfd);
		if (name[0])
			rtnl_link_set_name(peer, name);
		rtnl_link_set_mtu(peer, l->has_peer_mtu ? l->peer_mtu : l->mtu);
		err = rtnl_link_add(host, link, NLM_F_CREATE | NLM_F_EXCL);
	}
	rtnl_link_put(peer);
	rtnl_link_veth_release(link);
	if (err) {
		pr_err(NET_FMT ": can't make veth %s with its peer %s in criu's namespace: %s",
		       NET_ARGS(w), l->name, name[0] ? name : "(the kernel's name)",
		       err < 0 ? nl_geterror(err) : "out of memory");
		return -1;
	}
	if (rtnl_link_get_kernel(sk, l->ifindex, NULL, &in)) {
		pr_err(NET_FMT ": veth %s vanished once made", NET_ARGS(w), l->name);
		return -1;
	}
	peer_idx = rtnl_link_get_link(in);
	rtnl_link_put(in);
	return note_peer(p, peer_idx);
}

static int make_lowered(const struct net_who *w, struct nl_sock *host, int nsfd,
			const NetLink *l, const struct opts *o)
{
	const char *lower = external_lookup(o, "macvlan", l->name) ?: l->lower;
	struct rtnl_link *link, *low;
	int err = -1;

	if (!lower) {
		pr_err(NET_FMT ": %s %s: its lower link is unknown; name it with --external "
		       "macvlan[%s]:LINK", NET_ARGS(w), l->kind, l->name, l->name);
		return -1;
	}
	if (rtnl_link_get_kernel(host, 0, lower, &low)) {
		pr_err(NET_FMT ": %s %s: no lower link %s in criu's namespace", NET_ARGS(w),
		       l->kind, l->name, lower);
		return -1;
	}
	link = !strcmp(l->kind, "macvlan") ? rtnl_link_macvlan_alloc() : rtnl_link_ipvlan_alloc();
	if (link && !fill(link, l)) {
		rtnl_link_set_link(link, rtnl_link_get_ifindex(low));
		rtnl_link_set_ns_fd(link, nsfd);
		if (!strcmp(l->kind, "macvlan")) {
			rtnl_link_macvlan_set_mode(link, l->mode);
			rtnl_link_macvlan_set_flags(link, l->mode_flags);
		} else {
			rtnl_link_ipvlan_set_mode(link, l->mode);
		}
		err = rtnl_link_add(host, link, NLM_F_CREATE | NLM_F_EXCL);
	}
	rtnl_link_put(link);
	rtnl_link_put(low);
	if (err) {
		pr_err(NET_FMT ": can't make %s %s on %s: %s", NET_ARGS(w), l->kind, l->name,
		       lower, err < 0 ? nl_geterror(err) : "out of memory");
		return -1;
	}
	return 0;
}

static int make_link(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
		     int nsfd, const NetnsEntry *e, const NetLink *l, const struct opts *o,
		     struct net_peers *p)
{
	if (!strcmp(l->kind, "loopback")) {
		if (l->ifindex != LOOPBACK_IFINDEX) {
			pr_err(NET_FMT ": loopback %s has ifindex %u, not %d", NET_ARGS(w),
			       l->name, l->ifindex, LOOPBACK_IFINDEX);
			return -1;
		}
		return 0;
	}
	if (!strcmp(l->kind, "dummy"))
		return make_dummy(w, sk, l);
	if (!strcmp(l->kind, "veth"))
		return l->peer_ifindex ? make_veth_pair(w, sk, e, l) :
					 make_veth_out(w, sk, host, nsfd, l, o, p);
	if (!strcmp(l->kind, "macvlan") || !strcmp(l->kind, "ipvlan"))
		return make_lowered(w, host, nsfd, l, o);
	pr_err(NET_FMT ": link %s of kind %s in the image is not supported", NET_ARGS(w),
	       l->name, l->kind);
	return -1;
}

int net_restore_links(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
		      int nsfd, const NetnsEntry *e, const struct opts *o, struct net_peers *p)
{
	size_t i;

	for (i = 0; i < e->n_links; i++)
		if (make_link(w, sk, host, nsfd, e, e->links[i], o, p))
			return -1;
	for (i = 0; i < e->n_links; i++)
		if (configure(w, sk, e->links[i], 0))
			return -1;
	return 0;
}

int net_links_up(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e)
{
	NetLink lo = NET_LINK__INIT;
	size_t i;

	if (!e) {
		lo.ifindex = LOOPBACK_IFINDEX;
		lo.name = "lo";
		lo.flags = IFF_UP;
		return configure(w, sk, &lo, 1);
	}
	for (i = 0; i < e->n_links; i++)
		if ((e->links[i]->flags & IFF_UP) && configure(w, sk, e->links[i], 1))
			return -1;
	return 0;
}

/*
 * Outside ends: into their bridge (@up 0: made, still down), then up where
 * the inside had a carrier, that is where they were up (@up 1).
 */
int net_peers_up(const struct net_who *w, struct nl_sock *host, const NetnsEntry *e,
		 const struct net_peers *p, const struct opts *o, int up)
{
	char name[IFNAMSIZ], bridge[IFNAMSIZ];
	struct rtnl_link *c, *br = NULL;
	size_t i;
	int k = 0, err;

	for (i = 0; i < e->n_links; i++) {
		const NetLink *l = e->links[i];

		if (strcmp(l->kind, "veth") || l->peer_ifindex || k >= p->nr)
			continue;
		outside_name(o, l, name, bridge);
		if (up ? !(l->flags & IFF_LOWER_UP) : !bridge[0]) {
			k++;
			continue;
		}
		c = rtnl_link_alloc();
		if (!c)
			return -1;
		rtnl_link_set_ifindex(c, p->ifindex[k++]);
		err = 0;
		if (up)
			rtnl_link_set_flags(c, IFF_UP);
		else if (!(err = rtnl_link_get_kernel(host, 0, bridge, &br)))
			rtnl_link_set_master(c, rtnl_link_get_ifindex(br));
		if (!err)
			err = rtnl_link_change(host, c, c, 0);
		rtnl_link_put(c);
		if (br)
			rtnl_link_put(br);
		br = NULL;
		if (err) {
			pr_err(NET_FMT ": can't %s the peer of veth %s outside%s%s: %s",
			       NET_ARGS(w), up ? "bring up" : "attach", l->name,
			       bridge[0] ? " to bridge " : "", bridge, nl_geterror(err));
			return -1;
		}
	}
	return 0;
}

/* A link whose outside end can't be kept down: its traffic needs the nftables lock. */
int net_links_lowered(const NetnsEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_links; i++)
		if (!strcmp(e->links[i]->kind, "macvlan") || !strcmp(e->links[i]->kind, "ipvlan"))
			return 1;
	return 0;
}

void net_peers_remove(struct nl_sock *host, struct net_peers *p)
{
	struct rtnl_link *l;
	int i;

	for (i = 0; host && i < p->nr; i++) {
		/* gone with the namespace already, or not a veth of ours any more */
		if (rtnl_link_get_kernel(host, p->ifindex[i], NULL, &l))
			continue;
		if (rtnl_link_is_veth(l) && rtnl_link_delete(host, l) == 0)
			pr_info("Removed veth %s of the failed restore", rtnl_link_get_name(l));
		rtnl_link_put(l);
	}
	free(p->ifindex);
	p->ifindex = NULL;
	p->nr = 0;
}
