// SPDX-License-Identifier: GPL-2.0
/*
 * Network namespaces: the tree's root may have one of its own, which every
 * task of the tree shares (a task in yet another one is refused).
 *
 * Dump: before the tree is frozen, its network is locked (ns-net-lock.c);
 * once frozen, criu enters the namespace (setns on one of its threads)
 * and reads, through rtnetlink with libnl, the links (ns-net-link.c), the
 * addresses, routes, rules and permanent neighbours (ns-net-rtnl.c), the
 * sysctls under /proc/sys/net (ns-net-sysctl.c) and the nftables ruleset
 * (ns-net-nft.c) into netns.img. With --external net[INODE]:KEY the
 * namespace is not read (a runtime gives it back on restore); with
 * --empty-ns net neither (runc configures the new one itself).
 *
 * Restore: the root is born into a new network namespace (CLONE_NEWNET
 * in its clone3, the one unshare this costs), or joins the one given with
 * --inherit-fd fd[N]:KEY first thing (early hook). Once every task exists
 * criu enters the new namespace and fills it (ns_ready hook), locked from
 * the start until the tree is let go (resume hook). A failed restore
 * removes the veth peers it made in criu's namespace; the namespace itself
 * goes with the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/external.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/ns-net-link.h"
#include "parts/ns-net-lock.h"
#include "parts/ns-net-nft.h"
#include "parts/ns-net-rtnl.h"
#include "parts/ns-net-sysctl.h"
#include "parts/part.h"

static uint64_t ns_of_fd(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* ----------------------------------------------------------------- dump */

struct net_dump {
	struct net_who w;
	int nsfd;		/* the tree's namespace */
	const char *ext_key;	/* --external net[INODE]:KEY */
	struct net_lock lock;
	NetnsEntry *e;
};

/* The legacy x_tables have rules criu could only save with iptables-save. */
static int refuse_legacy(const struct net_who *w)
{
	static const char *const files[] = { "ip_tables_names", "ip6_tables_names",
					     "arp_tables_names" };
	char path[64], *names;
	size_t i;
	int used;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "/proc/thread-self/net/%s", files[i]);
		names = read_file(AT_FDCWD, path, NULL);
		used = names && *names;
		if (used) {
			names[strcspn(names, "\n")] = '\0';
			pr_err(NET_FMT ": has legacy %s tables (%s ...); not supported, nftables "
			       "(and iptables-nft) rules are", NET_ARGS(w),
			       i == 1 ? "ip6tables" : i == 2 ? "arptables" : "iptables", names);
		}
		free(names);
		if (used)
			return -1;
	}
	return 0;
}

static int lock_tree(struct net_dump *d, const struct opts *o)
{
	int back, ret = 0;

	if (netns_enter(d->nsfd, &back))
		return -1;
	if (!d->ext_key && !(o->empty_ns & CLONE_NEWNET))
		ret = refuse_legacy(&d->w);
	if (!ret)
		ret = net_lock(&d->w, &d->lock, o->network_lock, 1);
	netns_leave(back);
	if (!ret)
		fault_point("net-locked");
	return ret;
}

static int net_pre_freeze(struct dump_ctx *dc)
{
	const struct opts *o = dc->opts;
	uint64_t ours = proc_ns_id(0, 0, "net"), its = proc_ns_id(o->pid, 0, "net");
	struct net_dump *d;
	char path[64], id[24];

	/* a task that is not there is the freeze's to name */
	if (!ours || !its || ours == its)
		return 0;
	d = xzalloc(sizeof(*d));
	if (!d)
		return -1;
	dc->shared[PART_NET] = d;
	d->w.pid = o->pid;
	d->w.ns = its;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", o->pid);
	d->nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->nsfd < 0 || ns_of_fd(d->nsfd) != its) {
		pr_perror(NET_FMT ": can't open it", NET_ARGS(&d->w));
		return -1;
	}
	snprintf(id, sizeof(id), "%lu", its);
	d->ext_key = external_lookup(o, "net", id);
	return lock_tree(d, o);
}

static int read_netns(struct net_dump *d, const struct opts *o)
{
	struct nl_sock *host = net_rtnl_open(), *sk = NULL;
	int back, hostns, ret = -1;

	hostns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (!host || hostns < 0 || netns_enter(d->nsfd, &back))
		goto out;
	sk = net_rtnl_open();
	if (sk && !net_dump_links(&d->w, sk, host, hostns, d->e) &&
	    !net_dump_rtnl(&d->w, sk, d->e) && !net_dump_sysctls(&d->w, d->e) &&
	    !net_dump_nft(&d->w, d->e))
		ret = 0;
	netns_leave(back);
out:
	if (hostns >= 0)
		close(hostns);
	if (sk)
		nl_socket_free(sk);
	if (host)
		nl_socket_free(host);
	return ret;
}

static int collect(struct net_dump *d, const struct opts *o)
{
	d->e = xzalloc(sizeof(*d->e));
	if (!d->e)
		return -1;
	netns_entry__init(d->e);
	d->e->has_ns_id = 1;
	d->e->ns_id = d->w.ns;
	if (d->ext_key) {
		d->e->ext_key = (char *)d->ext_key;
		pr_info(NET_FMT ": external, key %s", NET_ARGS(&d->w), d->ext_key);
		return 0;
	}
	if (o->empty_ns & CLONE_NEWNET) {
		d->e->has_empty = d->e->empty = 1;
		pr_info(NET_FMT ": not dumped (--empty-ns net)", NET_ARGS(&d->w));
		return 0;
	}
	return read_netns(d, o);
}

static int check_thread(struct dump_ctx *dc, struct dtask *t, pid_t tid)
{
	struct net_dump *d = dc->shared[PART_NET];
	uint64_t want = d ? d->w.ns : proc_ns_id(0, 0, "net");
	uint64_t its = proc_ns_id(t->pid, tid, "net");

	if (!want || !its)
		return -1;
	if (its == want)
		return 0;
	if (!t->parent)
		pr_err("Task %d changed its network namespace during the dump (net:[%lu], "
		       "was net:[%lu])", t->pid, its, want);
	else if (tid == t->pid)
		pr_err("Task %d is in network namespace net:[%lu], not the tree's "
		       "net:[%lu]; a task in a network namespace of its own below the root is "
		       "not supported", t->pid, its, want);
	else
		pr_err("Task %d: thread %d is in network namespace net:[%lu], not the "
		       "tree's net:[%lu]; not supported", t->pid, tid, its, want);
	return -1;
}

static int net_check(struct dump_ctx *dc, struct dtask *t)
{
	struct net_dump *d = dc->shared[PART_NET];
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (check_thread(dc, t, t->th[i].tid))
			return -1;
	if (!t->parent && d && !d->e)
		return collect(d, dc->opts);
	return 0;
}

static void free_entry(NetnsEntry *e, int owns_key)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n_links; i++) {
		NetLink *l = e->links[i];

		if (!l)
			continue;
		free(l->name);
		free(l->kind);
		free(l->alias);
		free(l->address.data);
		free(l->broadcast.data);
		free(l->peer_name);
		free(l->peer_master);
		free(l->lower);
		free(l);
	}
	free(e->links);
	net_free_rtnl(e);
	net_free_sysctls(e);
	free(e->nft);
	if (owns_key)
		free(e->ext_key);
	free(e);
}

static int net_dump_tree(struct dump_ctx *dc)
{
	struct net_dump *d = dc->shared[PART_NET];
	int ret;

	if (!d || !d->e)
		return 0;
	ret = img_write(dc->dirfd, IMG_NETNS, 0, &d->e->base);
	free_entry(d->e, 0);
	d->e = NULL;
	return ret;
}

static void net_after_dump(struct dump_ctx *dc, int runs)
{
	struct net_dump *d = dc->shared[PART_NET];
	int back;

	if (!d)
		return;
	/* a namespace that outlives the killed tree stays locked until the restore */
	if (!runs && d->ext_key)
		net_lock_keep(&d->w, &d->lock);
	/* open first: the tree goes on at once, whatever removing the table takes */
	if (d->lock.held && !netns_enter(d->nsfd, &back)) {
		if (runs)
			net_open(&d->w, &d->lock);
		net_unlock(&d->w, &d->lock);
		netns_leave(back);
	}
	free_entry(d->e, 0);
	if (d->nsfd >= 0)
		close(d->nsfd);
	free(d);
	dc->shared[PART_NET] = NULL;
}

/* -------------------------------------------------------------- restore */

struct net_rst {
	NetnsEntry *e;
	struct net_who w;
	pid_t root;		/* the images' pid of the tree's root */
	int ext_fd;		/* --inherit-fd: the namespace to join */
	int nsfd;		/* the tree's, once it exists */
	struct net_lock lock;
	/* the lock of a namespace criu makes: its veth peers outside stay down */
	int peers_held;
	struct net_peers peers;
	struct nl_sock *host;	/* criu's namespace: the peers made there */
};

static int join_external(struct rst_ctx *rc, struct net_rst *r)
{
	const char *key = r->e->ext_key;
	int fd = inherit_fd_lookup(rc->opts, key);

	if (fd < 0) {
		pr_err("The tree's network namespace was external (key %s): give it with "
		       "--inherit-fd fd[N]:%s", key, key);
		return -1;
	}
	if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) {
		pr_err("--inherit-fd fd[%d]:%s is not a network namespace", fd, key);
		return -1;
	}
	r->ext_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->ext_fd < 0) {
		pr_perror("Can't use --inherit-fd fd[%d]:%s", fd, key);
		return -1;
	}
	rc->joined_ns |= CLONE_NEWNET;
	pr_info("The tree joins network namespace net:[%lu] (key %s)", ns_of_fd(fd), key);
	return 0;
}

static int net_load_tree(struct rst_ctx *rc)
{
	struct net_rst *r;
	NetnsEntry *e;
	int ret;

	ret = img_read(rc->dirfd, IMG_NETNS, 0, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	r = xzalloc(sizeof(*r));
	if (!r) {
		img_free(IMG_NETNS, e);
		return -1;
	}
	rc->shared[PART_NET] = r;
	r->e = e;
	r->ext_fd = r->nsfd = -1;
	r->lock.sk = r->lock.wd_pipe = -1;
	if (e->ext_key)
		return join_external(rc, r);
	rc->root_flags |= CLONE_NEWNET;
	return 0;
}

static int net_load(struct rst_ctx *rc, struct rtask *t)
{
	struct net_rst *r = rc->shared[PART_NET];

	/* the driver loads the root first */
	if (r && !r->root)
		r->root = t->pid;
	return 0;
}

static int net_prefork(struct rst_ctx *rc)
{
	struct net_rst *r = rc->shared[PART_NET];

	if (!r || r->ext_fd < 0)
		return 0;
	r->ext_fd = rst_inherit_fd(rc, r->ext_fd);
	return r->ext_fd < 0 ? -1 : 0;
}

/* The root joins the external namespace before it forks: its children are born there. */
static int net_early(struct rst_ctx *rc, struct rtask *t)
{
	struct net_rst *r = rc->shared[PART_NET];

	if (!r || r->ext_fd < 0 || t->pid != r->root)
		return 0;
	if (setns(r->ext_fd, CLONE_NEWNET)) {
		pr_perror("Task %d: can't join the network namespace given as %s", t->pid,
			  r->e->ext_key);
		return -1;
	}
	return 0;
}

/* The steps of a restore, timed for the log: the namespace's share of a restore. */
enum fill_step {
	FILL_SYSCTL_NS, FILL_LINKS, FILL_SYSCTL_LINKS, FILL_NFT, FILL_UP, FILL_ADDRS,
	FILL_ROUTES, FILL_NR,
};

static const char *const fill_names[FILL_NR] = {
	"sysctls", "links", "link sysctls", "nftables", "up", "addresses", "routes",
};

static int fill_step(struct net_rst *r, struct nl_sock *sk, const struct opts *o,
		     enum fill_step step, char **dad)
{
	switch (step) {
	case FILL_SYSCTL_NS:
		return net_restore_sysctls(&r->w, r->e, NET_SYSCTL_NS);
	case FILL_LINKS:
		return net_restore_links(&r->w, sk, r->host, r->nsfd, r->e, o, &r->peers);
	case FILL_SYSCTL_LINKS:
		return net_restore_sysctls(&r->w, r->e, NET_SYSCTL_LINKS) ||
		       net_dad_off(&r->w, dad);
	case FILL_ADDRS:
		return net_restore_addrs(&r->w, sk, r->e);
	case FILL_NFT:
		return net_restore_nft(&r->w, r->e);
	case FILL_UP:
		return net_links_up(&r->w, sk, r->e) ||
		       net_peers_up(&r->w, r->host, r->e, &r->peers, o, 0) ||
		       (!r->peers_held && net_peers_up(&r->w, r->host, r->e, &r->peers, o, 1));
	case FILL_ROUTES:
		return net_restore_routes(&r->w, sk, r->e);
	default:
		return -1;
	}
}

/* Everything of the dump, in order: see Documentation/namespaces.md. */
static int fill_netns(struct net_rst *r, const struct opts *o)
{
	struct nl_sock *sk = net_rtnl_open();
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), t, ns[FILL_NR];
	char *dad = NULL, line[256];
	int i, len = 0, ret = -1;

	if (!sk)
		return -1;
	for (i = 0; i < FILL_NR; i++) {
		if (fill_step(r, sk, o, i, &dad))
			goto out;
		t = clock_ns(CLOCK_MONOTONIC);
		ns[i] = t - t0;
		t0 = t;
	}
	ret = net_dad_restore(&r->w, dad);
	dad = NULL;
	for (i = 0; i < FILL_NR; i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s %.1f", i ? ", " : "",
				fill_names[i], ns[i] / 1e6);
	pr_info(NET_FMT ": ms per step: %s", NET_ARGS(&r->w), line);
out:
	free(dad);
	nl_socket_free(sk);
	return ret;
}

/*
 * A namespace criu makes is reached only through the links criu makes in
 * it: the outside ends of its veths stay down until the tree runs, which
 * locks it at no cost (a lock table's removal waits for the kernel,
 * ns-net-lock.c). A link on a lower link outside (macvlan, ipvlan) can't be
 * held so: then, and in a namespace criu joins, the lock of --network-lock.
 * Links a runtime adds at setup-namespaces are the runtime's to lock.
 */
static int setup_netns(struct net_rst *r, const struct opts *o)
{
	int fill = !r->e->ext_key && !(o->empty_ns & CLONE_NEWNET) && !r->e->empty;
	struct nl_sock *sk;
	int ret;

	r->peers_held = !r->e->ext_key && o->network_lock != NETLOCK_SKIP &&
			!(fill && net_links_lowered(r->e));
	/* iptables can't tell the dump's lock from its own: it goes first */
	if (r->e->ext_key && o->network_lock == NETLOCK_IPTABLES &&
	    net_lock_drop_kept(&r->w, o->network_lock, 0) < 0)
		return -1;
	if (!r->peers_held && net_lock(&r->w, &r->lock, o->network_lock, 0))
		return -1;
	if (r->e->ext_key)
		return 0;
	if (fill)
		return fill_netns(r, o);
	sk = net_rtnl_open();
	ret = sk ? net_links_up(&r->w, sk, NULL) : -1;
	if (sk)
		nl_socket_free(sk);
	return ret;
}

static int net_ns_ready(struct rst_ctx *rc, struct rtask *root)
{
	struct net_rst *r = rc->shared[PART_NET];
	char path[64];
	int back, ret;

	if (!r)
		return 0;
	if (r->ext_fd >= 0) {
		r->nsfd = fcntl(r->ext_fd, F_DUPFD_CLOEXEC, 0);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", root->host_pid);
		r->nsfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	r->w.pid = root->pid;
	r->w.ns = r->nsfd >= 0 ? ns_of_fd(r->nsfd) : 0;
	if (r->nsfd < 0) {
		pr_perror("Task %d: can't open its network namespace", root->pid);
		return -1;
	}
	r->host = net_rtnl_open();
	if (!r->host || netns_enter(r->nsfd, &back))
		return -1;
	ret = setup_netns(r, rc->opts);
	netns_leave(back);
	if (!ret)
		fault_point("net-filled");
	if (!ret)
		pr_info(NET_FMT ": %s, locked until the tree runs (%s)", NET_ARGS(&r->w),
			r->e->ext_key ? "joined" : "restored", r->peers_held ?
			"its links outside held down" : "--network-lock");
	return ret;
}

/*
 * Right before the tree runs: the traffic goes through (the peers outside
 * up, or the chains of the locks accept); the tables themselves go once
 * it runs (resumed), as taking them away waits for the kernel.
 */
static int net_resume(struct rst_ctx *rc, struct rtask *root)
{
	struct net_rst *r = rc->shared[PART_NET];
	int method = rc->opts->network_lock, back, ret = 0;

	if (!r)
		return 0;
	if (r->peers_held)
		return net_peers_up(&r->w, r->host, r->e, &r->peers, rc->opts, 1);
	if (netns_enter(r->nsfd, &back))
		return -1;
	if (r->e->ext_key && method != NETLOCK_IPTABLES)
		ret = net_lock_drop_kept(&r->w, method, 1) < 0 ? -1 : 0;
	if (!ret && method == NETLOCK_NFTABLES)
		ret = net_open(&r->w, &r->lock);
	else if (!ret)
		net_unlock(&r->w, &r->lock);
	netns_leave(back);
	return ret;
}

/*
 * The tree runs: the locks' tables go, the dump's kept one first (that
 * waits for the kernel, which delays criu's exit, not the tree).
 */
static void net_resumed(struct rst_ctx *rc, struct rtask *root)
{
	struct net_rst *r = rc->shared[PART_NET];
	int back;

	if (!r || r->peers_held || netns_enter(r->nsfd, &back))
		return;
	if (r->e->ext_key && rc->opts->network_lock == NETLOCK_NFTABLES)
		net_lock_drop_kept(&r->w, NETLOCK_NFTABLES, 0);
	net_unlock(&r->w, &r->lock);
	netns_leave(back);
}

static void net_release_tree(struct rst_ctx *rc)
{
	struct net_rst *r = rc->shared[PART_NET];
	int back;

	if (!r)
		return;
	if (!rc->released)
		net_peers_remove(r->host, &r->peers);
	free(r->peers.ifindex);
	if (r->lock.held && r->nsfd >= 0 && !netns_enter(r->nsfd, &back)) {
		net_unlock(&r->w, &r->lock);
		netns_leave(back);
	}
	if (r->host)
		nl_socket_free(r->host);
	if (r->nsfd >= 0)
		close(r->nsfd);
	img_free(IMG_NETNS, r->e);
	free(r);
	rc->shared[PART_NET] = NULL;
}

const struct part part_net = {
	.name = "net",
	.id = PART_NET,
	.pre_freeze = net_pre_freeze,
	.after_dump = net_after_dump,
	.check = net_check,
	.dump_tree = net_dump_tree,
	.load_tree = net_load_tree,
	.load = net_load,
	.prefork = net_prefork,
	.early = net_early,
	.ns_ready = net_ns_ready,
	.resume = net_resume,
	.resumed = net_resumed,
	.release_tree = net_release_tree,
};
