// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock (--network-lock): while a tree with a network namespace
 * of its own is frozen, and until it runs again on restore, no packet goes
 * in or out of that namespace, so that its peers see a pause and never a
 * reset from a socket that is not there (yet). Traffic on lo, inside the
 * namespace, still flows.
 *
 * nftables (the default): a table of criu's, inet family, with base
 * chains on input, forward and output whose policy is drop (a drop in
 * any base chain of a hook wins over the accepts of the tree's own
 * rules). It is made over nfnetlink in one batch, by criu itself: no
 * tool to run, and no dependency on a static libnftables, which Debian
 * does not ship. The table has NFT_TABLE_F_OWNER (Linux 5.12): the kernel
 * removes it when the netlink socket that made it closes, so a criu that
 * is killed at any point leaves no lock behind. After a complete dump of
 * a tree whose namespace outlives it (--external net), a second table
 * without an owner keeps the namespace locked until the restore.
 *
 * iptables: rules in two chains of the filter table, loaded with
 * iptables-legacy-restore and ip6tables-legacy-restore (Debian's iptables
 * package) in the namespace. The legacy x_tables, not iptables-nft: the
 * lock must not show up in the nftables ruleset the dump saves. These have
 * no owner, so a watchdog process (criu's child, waiting on a pipe) takes
 * them out again when criu dies without saying "keep".
 *
 * skip: nothing; the caller (a container runtime) locks the network.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "parts/ns-net-lock.h"

#define NFT_BUF		8192
#define LOCK_PRIO	(-300)	/* before conntrack (-200): nothing is tracked */
#define LOOPBACK_IFINDEX	1	/* lo, in every namespace */

/* ------------------------------------------------- nfnetlink messages */

struct nfb {
	char buf[NFT_BUF];
	size_t len;
	uint32_t seq;
	int nr_acks;
};

static struct nlmsghdr *nfb_msg(struct nfb *b, uint16_t type, uint16_t flags, int family)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + b->len);
	struct nfgenmsg *g = NLMSG_DATA(h);

	memset(h, 0, NLMSG_SPACE(sizeof(*g)));
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*g));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++b->seq;
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	if (type == NFNL_MSG_BATCH_BEGIN || type == NFNL_MSG_BATCH_END)
		g->res_id = htons(NFNL_SUBSYS_NFTABLES);
	if (flags & NLM_F_ACK)
		b->nr_acks++;
	return h;
}

static void nfb_end(struct nfb *b, struct nlmsghdr *h)
{
	b->len += NLMSG_ALIGN(h->nlmsg_len);
}

static struct nlattr *put(struct nlmsghdr *h, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static void put_str(struct nlmsghdr *h, uint16_t type, const char *s)
{
	put(h, type, s, strlen(s) + 1);
}

static void put_be32(struct nlmsghdr *h, uint16_t type, uint32_t v)
{
	v = htonl(v);
	put(h, type, &v, sizeof(v));
}

static struct nlattr *nest(struct nlmsghdr *h, uint16_t type)
{
	return put(h, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct nlmsghdr *h, struct nlattr *a)
{
	a->nla_len = (char *)h + h->nlmsg_len - (char *)a;
}

static uint16_t nft_type(int msg)
{
	return (NFNL_SUBSYS_NFTABLES << 8) | msg;
}

/* ------------------------------------------------------- the lock table */

static void add_chain(struct nfb *b, const char *table, const char *name, int hook)
{
	struct nlmsghdr *h = nfb_msg(b, nft_type(NFT_MSG_NEWCHAIN),
				     NLM_F_CREATE | NLM_F_ACK, NFPROTO_INET);
	struct nlattr *n;

	put_str(h, NFTA_CHAIN_TABLE, table);
	put_str(h, NFTA_CHAIN_NAME, name);
	n = nest(h, NFTA_CHAIN_HOOK);
	put_be32(h, NFTA_HOOK_HOOKNUM, hook);
	put_be32(h, NFTA_HOOK_PRIORITY, (uint32_t)LOCK_PRIO);
	nest_end(h, n);
	put_be32(h, NFTA_CHAIN_POLICY, NF_DROP);
	put_str(h, NFTA_CHAIN_TYPE, "filter");
	nfb_end(b, h);
}

static void add_expr_meta(struct nlmsghdr *h, int key)
{
	struct nlattr *e = nest(h, NFTA_LIST_ELEM), *d;

	put_str(h, NFTA_EXPR_NAME, "meta");
	d = nest(h, NFTA_EXPR_DATA);
	put_be32(h, NFTA_META_KEY, key);
	put_be32(h, NFTA_META_DREG, NFT_REG_1);
	nest_end(h, d);
	nest_end(h, e);
}

static void add_expr_cmp_ifindex(struct nlmsghdr *h, uint32_t ifindex)
{
	struct nlattr *e = nest(h, NFTA_LIST_ELEM), *d, *v;

	put_str(h, NFTA_EXPR_NAME, "cmp");
	d = nest(h, NFTA_EXPR_DATA);
	put_be32(h, NFTA_CMP_SREG, NFT_REG_1);
	put_be32(h, NFTA_CMP_OP, NFT_CMP_EQ);
	v = nest(h, NFTA_CMP_DATA);
	/* meta iif/oif load the index in host order */
	put(h, NFTA_DATA_VALUE, &ifindex, sizeof(ifindex));
	nest_end(h, v);
	nest_end(h, d);
	nest_end(h, e);
}

static void add_expr_accept(struct nlmsghdr *h)
{
	struct nlattr *e = nest(h, NFTA_LIST_ELEM), *d, *v, *vd;

	put_str(h, NFTA_EXPR_NAME, "immediate");
	d = nest(h, NFTA_EXPR_DATA);
	put_be32(h, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	v = nest(h, NFTA_IMMEDIATE_DATA);
	vd = nest(h, NFTA_DATA_VERDICT);
	put_be32(h, NFTA_VERDICT_CODE, NF_ACCEPT);
	nest_end(h, vd);
	nest_end(h, v);
	nest_end(h, d);
	nest_end(h, e);
}

/* "meta iif lo accept" (or oif): the namespace's own traffic goes on */
static void add_lo_rule(struct nfb *b, const char *table, const char *chain, int key)
{
	struct nlmsghdr *h = nfb_msg(b, nft_type(NFT_MSG_NEWRULE),
				     NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, NFPROTO_INET);
	struct nlattr *l;

	put_str(h, NFTA_RULE_TABLE, table);
	put_str(h, NFTA_RULE_CHAIN, chain);
	l = nest(h, NFTA_RULE_EXPRESSIONS);
	add_expr_meta(h, key);
	add_expr_cmp_ifindex(h, LOOPBACK_IFINDEX);
	add_expr_accept(h);
	nest_end(h, l);
	nfb_end(b, h);
}

static void build_lock(struct nfb *b, const char *table, uint32_t flags)
{
	struct nlmsghdr *h;

	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC));
	h = nfb_msg(b, nft_type(NFT_MSG_NEWTABLE), NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK,
		    NFPROTO_INET);
	put_str(h, NFTA_TABLE_NAME, table);
	put_be32(h, NFTA_TABLE_FLAGS, flags);
	nfb_end(b, h);
	add_chain(b, table, "input", NF_INET_LOCAL_IN);
	add_chain(b, table, "forward", NF_INET_FORWARD);
	add_chain(b, table, "output", NF_INET_LOCAL_OUT);
	add_lo_rule(b, table, "input", NFT_META_IIF);
	add_lo_rule(b, table, "output", NFT_META_OIF);
	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC));
}

/* an existing base chain of @table, its policy now accept */
static void accept_chain(struct nfb *b, const char *table, const char *name)
{
	struct nlmsghdr *h = nfb_msg(b, nft_type(NFT_MSG_NEWCHAIN), NLM_F_ACK, NFPROTO_INET);

	put_str(h, NFTA_CHAIN_TABLE, table);
	put_str(h, NFTA_CHAIN_NAME, name);
	put_be32(h, NFTA_CHAIN_POLICY, NF_ACCEPT);
	nfb_end(b, h);
}

static void build_open(struct nfb *b, const char *table)
{
	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC));
	accept_chain(b, table, "input");
	accept_chain(b, table, "forward");
	accept_chain(b, table, "output");
	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC));
}

static void build_del(struct nfb *b, const char *table)
{
	struct nlmsghdr *h;

	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC));
	h = nfb_msg(b, nft_type(NFT_MSG_DELTABLE), NLM_F_ACK, NFPROTO_INET);
	put_str(h, NFTA_TABLE_NAME, table);
	nfb_end(b, h);
	nfb_end(b, nfb_msg(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC));
}

/* A netfilter socket of this thread's namespace; -1 logged. */
static int nft_socket(const struct net_who *w)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 10 };
	int sk;

	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (sk < 0 || bind(sk, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(sk, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		pr_perror(NET_FMT ": can't open a netfilter socket", NET_ARGS(w));
		if (sk >= 0)
			close(sk);
		return -1;
	}
	return sk;
}

/* Sends a batch and reads every ack: 0, or -errno of the first refusal. */
static int nfb_send(int sk, struct nfb *b)
{
	char rbuf[NFT_BUF];
	struct nlmsghdr *h;
	ssize_t n;
	int acks = 0, err;

	if (send(sk, b->buf, b->len, 0) != (ssize_t)b->len)
		return -errno;
	while (acks < b->nr_acks) {
		n = recv(sk, rbuf, sizeof(rbuf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (err)
				return err;
			acks++;
		}
	}
	return 0;
}

static int nft_lock_table(const struct net_who *w, int sk, const char *table, uint32_t flags)
{
	struct nfb *b = xzalloc(sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	build_lock(b, table, flags);
	err = nfb_send(sk, b);
	free(b);
	return err;
}

static int nft_del_table(int sk, const char *table, int open_only)
{
	struct nfb *b = xzalloc(sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	if (open_only)
		build_open(b, table);
	else
		build_del(b, table);
	err = nfb_send(sk, b);
	free(b);
	return err;
}

static int nft_lock(const struct net_who *w, struct net_lock *l)
{
	int err;

	l->sk = nft_socket(w);
	if (l->sk < 0)
		return -1;
	err = nft_lock_table(w, l->sk, NET_LOCK_TABLE, NFT_TABLE_F_OWNER);
	if (err == -EOPNOTSUPP || err == -EINVAL) {
		/* before Linux 5.12: a lock that outlives a killed criu */
		pr_warn(NET_FMT ": the kernel has no nftables table owners; a criu killed "
			"now leaves table inet %s behind", NET_ARGS(w), NET_LOCK_TABLE);
		err = nft_lock_table(w, l->sk, NET_LOCK_TABLE, 0);
	}
	if (err) {
		pr_err(NET_FMT ": can't lock the network with nftables table inet %s: %s%s",
		       NET_ARGS(w), NET_LOCK_TABLE, strerror(-err), err == -EEXIST ?
		       " (another criu holds it)" : "");
		close(l->sk);
		l->sk = -1;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ iptables */

static const char ipt_lock[] =
	"*filter\n"
	":criu-lock-in - [0:0]\n"
	":criu-lock-out - [0:0]\n"
	"-A criu-lock-in ! -i lo -j DROP\n"
	"-A criu-lock-out ! -o lo -j DROP\n"
	"-I INPUT 1 -j criu-lock-in\n"
	"-I FORWARD 1 -j DROP\n"
	"-I OUTPUT 1 -j criu-lock-out\n"
	"COMMIT\n";

static const char ipt_unlock[] =
	"*filter\n"
	"-D INPUT -j criu-lock-in\n"
	"-D FORWARD -j DROP\n"
	"-D OUTPUT -j criu-lock-out\n"
	"-F criu-lock-in\n"
	"-F criu-lock-out\n"
	"-X criu-lock-in\n"
	"-X criu-lock-out\n"
	"COMMIT\n";

static int ipt_run(const struct net_who *w, const char *script, int quiet)
{
	char *v4[] = { "iptables-legacy-restore", "-w", "--noflush", NULL };
	char *v6[] = { "ip6tables-legacy-restore", "-w", "--noflush", NULL };
	int a = net_run_tool(w, v4, script, NULL, quiet);
	int b = net_run_tool(w, v6, script, NULL, quiet);

	return a || b ? -1 : 0;
}

/*
 * Born in the locked namespace, it waits for criu to say 'K' (keep the
 * lock) or to close the pipe (unlock); criu killed closes it too.
 */
static void watchdog(const struct net_who *w, int rfd)
{
	char c = 0;
	ssize_t n;

	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'K')
		_exit(0);
	_exit(ipt_run(w, ipt_unlock, 0) ? 1 : 0);
}

static int ipt_lock_take(const struct net_who *w, struct net_lock *l, int wd)
{
	int p[2];

	if (ipt_run(w, ipt_lock, 0)) {
		pr_err(NET_FMT ": can't lock the network with iptables", NET_ARGS(w));
		ipt_run(w, ipt_unlock, 1);
		return -1;
	}
	if (!wd)
		return 0;
	if (pipe2(p, O_CLOEXEC)) {
		pr_perror(NET_FMT ": can't make the lock's watchdog pipe", NET_ARGS(w));
		ipt_run(w, ipt_unlock, 0);
		return -1;
	}
	l->watchdog = fork();
	if (l->watchdog < 0) {
		pr_perror(NET_FMT ": can't start the lock's watchdog", NET_ARGS(w));
		close(p[0]);
		close(p[1]);
		ipt_run(w, ipt_unlock, 0);
		return -1;
	}
	if (!l->watchdog) {
		close(p[1]);
		watchdog(w, p[0]);
	}
	close(p[0]);
	l->wd_pipe = p[1];
	return 0;
}

/* The watchdog unlocks (nothing said) or keeps the rules ('K'), and exits. */
static int ipt_release(const struct net_who *w, struct net_lock *l, int keep)
{
	int status;

	if (!l->watchdog)
		return keep ? 0 : ipt_run(w, ipt_unlock, 0);
	if (keep && write(l->wd_pipe, "K", 1) != 1)
		pr_perror(NET_FMT ": can't tell the lock's watchdog to keep it", NET_ARGS(w));
	close(l->wd_pipe);
	l->wd_pipe = -1;
	while (waitpid(l->watchdog, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror(NET_FMT ": can't wait for the lock's watchdog", NET_ARGS(w));
			return -1;
		}
	l->watchdog = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pr_err(NET_FMT ": the iptables lock's watchdog failed to unlock", NET_ARGS(w));
		return -1;
	}
	return 0;
}

/* --------------------------------------------------------------- API */

int net_lock(const struct net_who *w, struct net_lock *l, int method, int watchdog)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int ret = 0;

	memset(l, 0, sizeof(*l));
	l->method = method;
	l->sk = l->wd_pipe = -1;
	if (method == NETLOCK_SKIP)
		return 0;
	if (method == NETLOCK_NFTABLES)
		ret = nft_lock(w, l);
	else
		ret = ipt_lock_take(w, l, watchdog);
	if (ret)
		return -1;
	l->held = 1;
	pr_info(NET_FMT ": network locked (%s) in %.2f ms", NET_ARGS(w),
		method == NETLOCK_NFTABLES ? "nftables" : "iptables",
		(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	return 0;
}

/*
 * Taking the table away waits for the kernel (an RCU grace period: 5 to
 * 30 ms on this busy machine); switching its chains to accept does not
 * (40 us): net_open() lets the traffic through at once, before the tree
 * runs, and the table goes once it runs (net_unlock()).
 */
int net_open(const struct net_who *w, struct net_lock *l)
{
	int err;

	if (!l->held || l->method != NETLOCK_NFTABLES || l->opened)
		return 0;
	err = nft_del_table(l->sk, NET_LOCK_TABLE, 1);
	if (err) {
		pr_err(NET_FMT ": can't unlock the network (table inet %s): %s", NET_ARGS(w),
		       NET_LOCK_TABLE, strerror(-err));
		return -1;
	}
	l->opened = 1;
	pr_info(NET_FMT ": network open", NET_ARGS(w));
	return 0;
}

void net_unlock(const struct net_who *w, struct net_lock *l)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int err;

	if (!l->held)
		return;
	l->held = 0;
	if (l->method == NETLOCK_IPTABLES) {
		ipt_release(w, l, 0);
	} else {
		/* closing the socket would do, but not before the call returns */
		err = nft_del_table(l->sk, NET_LOCK_TABLE, 0);
		if (err)
			pr_warn(NET_FMT ": can't delete table inet %s (%s); it goes with criu",
				NET_ARGS(w), NET_LOCK_TABLE, strerror(-err));
		close(l->sk);
		l->sk = -1;
	}
	pr_info(NET_FMT ": network unlocked in %.2f ms", NET_ARGS(w),
		(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
}

/* Called in the namespace: the same lock again, without an owner. */
int net_lock_keep(const struct net_who *w, struct net_lock *l)
{
	int err;

	if (!l->held)
		return 0;
	if (l->method == NETLOCK_IPTABLES) {
		l->held = 0;
		return ipt_release(w, l, 1);
	}
	err = nft_lock_table(w, l->sk, NET_LOCK_KEPT, 0);
	if (err && err != -EEXIST) {
		pr_err(NET_FMT ": can't keep the network locked after the dump (table inet "
		       "%s): %s", NET_ARGS(w), NET_LOCK_KEPT, strerror(-err));
		return -1;
	}
	pr_info(NET_FMT ": stays locked (table inet %s) until the restore", NET_ARGS(w),
		NET_LOCK_KEPT);
	return 0;
}

int net_lock_drop_kept(const struct net_who *w, int method, int open_only)
{
	int sk, err;

	if (method == NETLOCK_SKIP)
		return 0;
	if (method == NETLOCK_IPTABLES)
		/* no way to ask without a tool: unlock, whether locked or not */
		return ipt_run(w, ipt_unlock, 1) ? 0 : 1;
	sk = nft_socket(w);
	if (sk < 0)
		return -1;
	err = nft_del_table(sk, NET_LOCK_KEPT, open_only);
	close(sk);
	if (err == -ENOENT)
		return 0;
	if (err) {
		pr_err(NET_FMT ": can't %s the dump's lock, table inet %s: %s", NET_ARGS(w),
		       open_only ? "open" : "delete", NET_LOCK_KEPT, strerror(-err));
		return -1;
	}
	pr_info(NET_FMT ": the dump's lock (table inet %s) is %s", NET_ARGS(w),
		NET_LOCK_KEPT, open_only ? "open" : "gone");
	return 1;
}

int net_lock_table(const char *family, const char *name)
{
	return !strcmp(family, "inet") &&
	       (!strcmp(name, NET_LOCK_TABLE) || !strcmp(name, NET_LOCK_KEPT));
}

/* ----------------------------------------------- what tables are there */

static int tables_in(const char *buf, ssize_t n, int *others, int *done)
{
	const struct nlmsghdr *h;
	const struct nlattr *a;
	const char *name;
	int len;

	for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_DONE) {
			*done = 1;
			return 0;
		}
		if (h->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		if (h->nlmsg_type != nft_type(NFT_MSG_NEWTABLE))
			continue;
		name = NULL;
		len = h->nlmsg_len - NLMSG_SPACE(sizeof(struct nfgenmsg));
		a = (const struct nlattr *)((const char *)NLMSG_DATA(h) +
					    NLMSG_ALIGN(sizeof(struct nfgenmsg)));
		for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
		     len -= NLA_ALIGN(a->nla_len),
		     a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))
			if ((a->nla_type & NLA_TYPE_MASK) == NFTA_TABLE_NAME)
				name = (const char *)a + NLA_HDRLEN;
		if (!name || ((struct nfgenmsg *)NLMSG_DATA(h))->nfgen_family != NFPROTO_INET ||
		    (strcmp(name, NET_LOCK_TABLE) && strcmp(name, NET_LOCK_KEPT)))
			(*others)++;
	}
	return 0;
}

int net_nft_has_tables(const struct net_who *w)
{
	struct nfb *b = xzalloc(sizeof(*b));
	int sk, err = 0, others = 0, done = 0;
	char rbuf[NFT_BUF];
	ssize_t n;

	if (!b)
		return -1;
	sk = nft_socket(w);
	if (sk < 0) {
		free(b);
		return -1;
	}
	nfb_end(b, nfb_msg(b, nft_type(NFT_MSG_GETTABLE), NLM_F_DUMP, NFPROTO_UNSPEC));
	if (send(sk, b->buf, b->len, 0) != (ssize_t)b->len)
		err = -errno;
	while (!err && !done) {
		n = recv(sk, rbuf, sizeof(rbuf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		err = n <= 0 ? (n < 0 ? -errno : -EPIPE) : tables_in(rbuf, n, &others, &done);
	}
	close(sk);
	free(b);
	if (err) {
		pr_err(NET_FMT ": can't list the nftables tables: %s", NET_ARGS(w),
		       strerror(-err));
		return -1;
	}
	return others > 0;
}
