/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NET_H
#define CRIU_PARTS_NET_H

/*
 * The network namespace part's pieces (Documentation/namespaces.md):
 * net.c the part itself, net-link.c links, net-rtnl.c addresses, routes,
 * rules and neighbours, net-sysctl.c /proc/sys/net, net-nft.c the
 * nftables ruleset, net-lock.c the network lock. Everything here runs in
 * criu, on a thread that entered the tree's namespace (netns_enter());
 * @host is an rtnetlink socket of criu's own namespace, @sk one of the
 * tree's.
 */
#include <stdint.h>
#include <sys/types.h>

#include "core/opts.h"
#include "netns.pb-c.h"

struct nl_sock;

/* Whose namespace, for the error lines: "Task 41: network namespace net:[4026532190]" */
struct net_who {
	pid_t pid;
	uint64_t ns;
};

#define NET_FMT		"Task %d: network namespace net:[%lu]"
#define NET_ARGS(w)	(w)->pid, (w)->ns

/* net.c: an rtnetlink socket of the namespace this thread is in; NULL logged */
struct nl_sock *net_rtnl_open(void);
/* net.c: send @msg (freed) and wait for the answer: 0 or -errno */
struct nl_msg;
int net_talk(struct nl_sock *sk, struct nl_msg *msg);
/* net.c: move this thread into the namespace @nsfd; @back gets its own. -1 logged */
int netns_enter(int nsfd, int *back);
/* net.c: and back into @back (closed); dies rather than stay in the wrong one */
void netns_leave(int back);

/* net-link.c */
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

/* net-rtnl.c: the kernel's dump messages, filtered (see netns.proto) */
int net_dump_rtnl(const struct net_who *w, struct nl_sock *sk, NetnsEntry *e);
int net_restore_addrs(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e);
int net_restore_routes(const struct net_who *w, struct nl_sock *sk, const NetnsEntry *e);
void net_free_rtnl(NetnsEntry *e);

/* net-sysctl.c */
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

/* net-nft.c: the ruleset, criu's lock tables left out */
int net_dump_nft(const struct net_who *w, NetnsEntry *e);
int net_restore_nft(const struct net_who *w, const NetnsEntry *e);
/*
 * net-nft.c: run @argv (a tool of the host) in this thread's namespace,
 * @in its stdin, its stdout into *@out; -1 logged (a debug line if @quiet)
 */
int net_run_tool(const struct net_who *w, char *const argv[], const char *in,
		 char **out, int quiet);

/* net-lock.c */
#define NET_LOCK_TABLE		"criu_lock"	/* while criu runs (NFT_TABLE_F_OWNER) */
#define NET_LOCK_KEPT		"criu_lock_kept"	/* after a dump, until the restore */
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
/* is @name (of family @family) one of criu's lock tables? */
int net_lock_table(const char *family, const char *name);

#endif
