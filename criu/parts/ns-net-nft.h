/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_NFT_H
#define CRIU_PARTS_NS_NET_NFT_H

#include "parts/ns-net-common.h"

/* the ruleset, criu's lock tables left out */
int net_dump_nft(const struct net_who *w, NetnsEntry *e);
int net_restore_nft(const struct net_who *w, const NetnsEntry *e);

#endif
