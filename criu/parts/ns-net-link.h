/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_LINK_H
#define CRIU_PARTS_NS_NET_LINK_H

#include "parts/ns-net-common.h"

int net_dump_links(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
		   int hostns, NetnsEntry *e);
/* the links made, peers outside in criu's namespace named in @peers (ifindexes) */
struct net_peers {
	int *ifindex;
	int nr;
};
int net_restore_links(const struct net_who *w, struct nl_sock *sk, struct nl_sock *host,
		      int nsfd, const NetnsEntry *e, const struct opts *o, struct net_peers *p);
/* up the links that were up; lo only when @e is NULL (an empty namespace) */
int net_links_up(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e);
/* a failed restore: the peers made in criu's namespace go again */
void net_peers_remove(struct nl_sock *host, struct net_peers *p);
/* veth peers outside: into their bridge (@up 0), then up (@up 1) */
int net_peers_up(const struct net_who *w, struct nl_sock *host, const NetnsEntry *e,
		 const struct net_peers *p, const struct opts *o, int up);
/* has the namespace links on a lower link outside (macvlan, ipvlan)? */
int net_links_lowered(const NetnsEntry *e);

#endif
