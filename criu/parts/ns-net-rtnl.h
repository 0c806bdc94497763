/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_RTNL_H
#define CRIU_PARTS_NS_NET_RTNL_H

#include "parts/ns-net-common.h"

/* the kernel's dump messages, filtered (see netns.proto) */
int net_dump_rtnl(const struct net_who *w, struct nl_sock *sk, NetnsEntry *e);
int net_restore_addrs(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e);
int net_restore_routes(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e);
void net_free_rtnl(NetnsEntry *e);

#endif
