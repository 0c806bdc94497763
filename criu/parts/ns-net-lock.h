/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_LOCK_H
#define CRIU_PARTS_NS_NET_LOCK_H

#include "parts/ns-net-common.h"

#define NET_LOCK_TABLE		"criu_lock"	/* while criu runs (NFT_TABLE_F_OWNER) */
#define NET_LOCK_KEPT		"criu_lock_kept"	/* after a dump, until the restore */
/* is @name (of family @family) one of criu's lock tables? */
int net_lock_table(const char *family, const char *name);

struct net_lock {
	int method;		/* NETLOCK_* */
	int sk;			/* nftables: the socket that owns the table */
	pid_t watchdog;		/* iptables: unlocks when criu dies */
	int wd_pipe;
	int held;
	int opened;		/* nftables: the chains accept already */
};
/*
 * lock the namespace this thread is in; @watchdog: iptables rules are
 * undone by a process of their own if criu dies (only where no restore
 * waits for every child of criu's)
 */
int net_lock(const struct net_who *w, struct net_lock *l, int method, int watchdog);
/* unlock: releases what net_lock() made */
void net_unlock(const struct net_who *w, struct net_lock *l);
/* nftables: let traffic through now, at no cost; net_unlock() takes the table later */
int net_open(const struct net_who *w, struct net_lock *l);
/* after a complete dump: the namespace outlives the tree, keep it locked without criu */
int net_lock_keep(const struct net_who *w, struct net_lock *l);
/*
 * on restore: the lock a dump kept goes (@open_only: lets traffic through,
 * the table stays, as net_open()); 1: there was one, 0: none, -1 logged
 */
int net_lock_drop_kept(const struct net_who *w, int method, int open_only);
/* nftables: does the namespace have tables other than criu's? -1 logged */
int net_nft_has_tables(const struct net_who *w);

#endif
