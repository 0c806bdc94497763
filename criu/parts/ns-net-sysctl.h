/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_SYSCTL_H
#define CRIU_PARTS_NS_NET_SYSCTL_H

#include "parts/ns-net-common.h"

int net_dump_sysctls(const struct net_who *w, NetnsEntry *e);
enum net_sysctl_phase {
	NET_SYSCTL_NS,		/* the namespace's own, all/ and default/: before links */
	NET_SYSCTL_LINKS,	/* each link's conf and neigh: once the links exist */
};
int net_restore_sysctls(const struct net_who *w, const NetnsEntry *e,
			enum net_sysctl_phase phase);
/* IPv6 duplicate address detection off while addresses come back, then as dumped */
int net_dad_off(const struct net_who *w, char **saved);
int net_dad_restore(const struct net_who *w, char *saved);
void net_free_sysctls(NetnsEntry *e);

#endif
