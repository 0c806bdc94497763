/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_NS_NET_COMMON_H
#define CRIU_PARTS_NS_NET_COMMON_H

/*
 * The network namespace part's pieces (Documentation/namespaces.md), each
 * with its header, one way down: ns-net.c the part itself; ns-net-link.c
 * links, ns-net-rtnl.c addresses, routes, rules and neighbours,
 * ns-net-sysctl.c /proc/sys/net, ns-net-nft.c the nftables ruleset (over ns-net-lock.c, to know its
 * tables), ns-net-lock.c the network lock; all over
 * this file's ns-net-common.c. Everything here runs in criu, on a thread that
 * entered the tree's namespace (netns_enter()); @host is an rtnetlink
 * socket of criu's own namespace, @sk one of the tree's.
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

/* an rtnetlink socket of the namespace this thread is in; NULL logged */
struct nl_sock *net_rtnl_open(void);
/* send @msg (freed) and wait for the answer: 0 or -errno */
struct nl_msg;
int net_talk(struct nl_sock *sk, struct nl_msg *msg);
/* move this thread into the namespace @nsfd; @back gets its own. -1 logged */
int netns_enter(int nsfd, int *back);
/* and back into @back (closed); dies rather than stay in the wrong one */
void netns_leave(int back);

/*
 * run @argv (a tool of the host) in this thread's namespace,
 * @in its stdin, its stdout into *@out; -1 logged (a debug line if @quiet)
 */
int net_run_tool(const struct net_who *w, char *const argv[], const char *in,
		 char **out, int quiet);

#endif
