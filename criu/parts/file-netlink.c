// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink sockets (AF_NETLINK): a kind of open file for the fd table
 * (file.c).
 *
 * Dump: criu takes its own reference to the socket (pidfd_getfd()) and
 * reads its protocol, address (the port id; 0 when it was never bound),
 * peer (connect()) and options with getsockname(), getpeername() and
 * getsockopt(); the multicast groups it joined with
 * NETLINK_LIST_MEMBERSHIPS (every group, not only the first 32 that the
 * address shows); and asks netlink_diag (NETLINK_SOCK_DIAG in the task's
 * network namespace) whether it is connected, what waits in its receive
 * queue and whether a dump it asked for is still running. A socket with
 * messages not read yet, or in the middle of a dump, is refused with one
 * line: the messages are answers and events of the kernel that nothing can
 * put back into the queue of a new socket (the kernel sends them, and a
 * user-space sender would show another port id), and dropping them would
 * lose an answer the task waits for.
 *
 * Restore, in the task (or, shared, where file.c opens it) inside the
 * tree's network namespace: socket(), buffers and options, bind() to the
 * same port id, the groups (NETLINK_ADD_MEMBERSHIP, one per group: bind()
 * reaches only the first 32), connect(). A port id is unique in a network
 * namespace: when another socket holds it the restore fails, naming it.
 * Binding to another one would let the task run, but a peer that knows
 * its old port id would send to a stranger. A socket that was never bound
 * stays unbound: the kernel gives it a port id at its first send. Group
 * numbers of generic netlink families are given out at boot: a restore on
 * another kernel joins whatever groups carry those numbers there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/netlink_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-unix-sk.h"
#include "task/ptrace.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK		270
#endif
#define NETLINK_CONNECTED	1	/* netlink_diag's ndiag_state */
#define NL_MAX_PROTO		32	/* MAX_LINKS of the kernel */
#define NL_GROUP_WORDS		1024	/* 32768 groups: more than any family has */

/* What netlink_diag says of one socket. */
struct nl_diag {
	int found;
	int state;
	uint32_t rmem;		/* bytes queued to be read */
	uint32_t flags;		/* NDIAG_FLAG_* */
};

static int nl_match_fd(pid_t pid, int fd, const char *link, const struct stat *st)
{
	return sock_protoname_is(pid, fd, link, st, "NETLINK");
}

static int nl_match(const char *link, const struct stat *st)
{
	return 0;	/* match_fd decides */
}

static const char *proto_name(uint32_t proto)
{
	static const char *const names[] = {
		[0] = "ROUTE", [2] = "USERSOCK", [4] = "SOCK_DIAG", [6] = "XFRM",
		[7] = "SELINUX", [9] = "AUDIT", [10] = "FIB_LOOKUP", [11] = "CONNECTOR",
		[12] = "NETFILTER", [14] = "IP6_FW", [15] = "KOBJECT_UEVENT",
		[16] = "GENERIC", [18] = "SCSITRANSPORT", [19] = "ECRYPTFS", [20] = "RDMA",
		[21] = "CRYPTO", [22] = "SMC",
	};

	return proto < ARRAY_SIZE(names) && names[proto] ? names[proto] : "?";
}

/* ------------------------------------------------------ dump */

static void diag_one(struct netlink_diag_msg *m, int len, struct nl_diag *nd)
{
	struct rtattr *a;

	nd->found = 1;
	nd->state = m->ndiag_state;
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NETLINK_DIAG_MEMINFO && RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
			nd->rmem = ((uint32_t *)RTA_DATA(a))[SK_MEMINFO_RMEM_ALLOC];
		else if (a->rta_type == NETLINK_DIAG_FLAGS && RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
			nd->flags = *(uint32_t *)RTA_DATA(a);
	}
}

struct nl_ask {
	uint32_t ino;
	struct nl_diag *nd;
};

static int diag_msg(struct nlmsghdr *h, void *arg)
{
	struct nl_ask *q = arg;
	struct netlink_diag_msg *m = NLMSG_DATA(h);

	if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m)) && m->ndiag_ino == q->ino)
		diag_one(m, h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)), q->nd);
	return 0;
}

/*
 * netlink_diag answers dumps only, of one protocol: the sockets bound or
 * in a group (one never bound is not there, and has nothing queued).
 */
static int nl_diag(pid_t pid, uint32_t ino, int proto, struct nl_diag *nd)
{
	struct {
		struct nlmsghdr h;
		struct netlink_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_NETLINK, .sdiag_protocol = proto,
		       .ndiag_show = NDIAG_SHOW_MEMINFO | NDIAG_SHOW_FLAGS,
		       .ndiag_cookie = { ~0U, ~0U } },
	};
	struct nl_ask q = { ino, nd };

	memset(nd, 0, sizeof(*nd));
	return sock_diag_dump(pid, &req, sizeof(req), diag_msg, &q);
}

static int nl_int(int sk, int opt)
{
	socklen_t len = sizeof(int);
	int v = 0;

	return getsockopt(sk, SOL_NETLINK, opt, &v, &len) ? -1 : v;
}

static int read_groups(int sk, NetlinkSkEntry *e)
{
	uint32_t *g = xzalloc(NL_GROUP_WORDS * sizeof(*g));
	socklen_t len = NL_GROUP_WORDS * sizeof(*g);
	size_t n;

	if (!g)
		return -1;
	if (getsockopt(sk, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &len) ||
	    len > NL_GROUP_WORDS * sizeof(*g)) {
		free(g);
		return -1;
	}
	/* the kernel's bitmap is as long as the family has groups: keep what is set */
	for (n = len / sizeof(*g); n && !g[n - 1]; n--)
		;
	e->groups = g;
	e->n_groups = n;
	return 0;
}

static int read_opts(int sk, NetlinkSkEntry *e)
{
	int v[7], i;
	static const int opts[7] = {
		NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR, NETLINK_NO_ENOBUFS,
		NETLINK_LISTEN_ALL_NSID, NETLINK_CAP_ACK, NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK,
	};

	for (i = 0; i < 7; i++) {
		v[i] = nl_int(sk, opts[i]);
		/* older kernels (6.1) do not let LISTEN_ALL_NSID be read: netlink_diag shows it */
		if (v[i] < 0 && !(opts[i] == NETLINK_LISTEN_ALL_NSID && errno == ENOPROTOOPT))
			return -1;
		v[i] = max(v[i], 0);
	}
	e->pktinfo = v[0];
	e->broadcast_error = v[1];
	e->no_enobufs = v[2];
	e->listen_all_nsid = v[3];
	e->cap_ack = v[4];
	e->ext_ack = v[5];
	e->get_strict_chk = v[6];
	return 0;
}

static int read_sk(const struct fd_dump *f, int sk, NetlinkSkEntry *e)
{
	struct sockaddr_nl me, peer;
	socklen_t len = sizeof(me), plen = sizeof(peer);
	int type, proto, rcv, snd;

	if (unix_sockopt(sk, SO_TYPE, &type) || unix_sockopt(sk, SO_PROTOCOL, &proto) ||
	    unix_sockopt(sk, SO_RCVBUF, &rcv) || unix_sockopt(sk, SO_SNDBUF, &snd) ||
	    getsockname(sk, (struct sockaddr *)&me, &len) ||
	    getpeername(sk, (struct sockaddr *)&peer, &plen) ||
	    read_groups(sk, e) || read_opts(sk, e) || sk_opts_read(sk, &e->sk_opts, &e->n_sk_opts)) {
		pr_perror("Task %d: can't read the state of netlink socket fd %d (%s)", f->pid,
			  f->fd, f->link);
		return -1;
	}
	e->ino = f->st->st_ino;
	e->type = type;
	e->protocol = proto;
	e->portid = me.nl_pid;
	e->dst_portid = peer.nl_pid;
	/* the peer's group comes as a mask of one bit */
	e->dst_group = peer.nl_groups ? __builtin_ffs(peer.nl_groups) : 0;
	e->rcvbuf = rcv;
	e->sndbuf = snd;
	return 0;
}

static int refuse(const struct fd_dump *f, const NetlinkSkEntry *e, const char *why)
{
	pr_err("Task %d: fd %d is a netlink socket of protocol %u (NETLINK_%s), port id %u "
	       "(%s), %s", f->pid, f->fd, e->protocol, proto_name(e->protocol), e->portid,
	       f->link, why);
	return -1;
}

/* Fills @e from socket @sk; refuses what can't be saved. */
static int nl_read(const struct fd_dump *f, int sk, NetlinkSkEntry *e)
{
	struct nl_diag nd;
	char why[128];

	if (read_sk(f, sk, e))
		return -1;
	if (nl_diag(f->pid, e->ino, e->protocol, &nd)) {
		pr_perror("Task %d: can't ask the kernel about netlink socket fd %d (%s; is "
			  "netlink_diag available?)", f->pid, f->fd, f->link);
		return -1;
	}
	e->connected = nd.state == NETLINK_CONNECTED;
	if (nd.flags & NDIAG_FLAG_LISTEN_ALL_NSID)
		e->listen_all_nsid = 1;
	if (nd.flags & NDIAG_FLAG_CB_RUNNING)
		return refuse(f, e, "in the middle of a dump it asked the kernel for, which "
			      "is not supported");
	if (nd.rmem) {
		snprintf(why, sizeof(why), "with messages not read yet (%u bytes queued), which "
			 "is not supported", nd.rmem);
		return refuse(f, e, why);
	}
	return 0;
}

static void nl_free_entry(NetlinkSkEntry *e)
{
	if (!e)
		return;
	free(e->groups);
	free(e->sk_opts);
	free(e);
}

static int nl_check(const struct fd_dump *f)
{
	NetlinkSkEntry e = NETLINK_SK_ENTRY__INIT;
	int sk, ret;

	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	ret = nl_read(f, sk, &e);
	free(e.groups);
	free(e.sk_opts);
	close(sk);
	return ret;
}

static int nl_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	NetlinkSkEntry *e;
	int sk, ret;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	netlink_sk_entry__init(e);
	d->nlsk = e;
	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	/* checked before; the task is frozen since, but the kernel may have sent */
	ret = nl_read(f, sk, e);
	close(sk);
	pr_debug("Task %d: fd %d: netlink socket %lu, protocol %u, port id %u, %zu group "
		 "words, peer %u/%u", f->pid, f->fd, e->ino, e->protocol, e->portid,
		 e->n_groups, e->dst_portid, e->dst_group);
	return ret;
}

static void nl_free(FileDesc *d)
{
	nl_free_entry(d->nlsk);
	d->nlsk = NULL;
}

/* ------------------------------------------------------------- restore */

static int nl_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const NetlinkSkEntry *e = d->nlsk;

	if (!e || (e->type != SOCK_RAW && e->type != SOCK_DGRAM) ||
	    e->protocol >= NL_MAX_PROTO || e->n_groups > NL_GROUP_WORDS ||
	    e->dst_group > 32 || e->rcvbuf > INT32_MAX ||
	    e->sndbuf > INT32_MAX || ((e->dst_portid || e->dst_group) && !e->connected) ||
	    !sk_opts_valid(e->sk_opts, e->n_sk_opts)) {
		pr_err("Task %d: image files.img has an invalid netlink socket #%u", pid, d->id);
		return -1;
	}
	return 0;
}

static int set_opts(int sk, const NetlinkSkEntry *e)
{
	const int opts[7] = {
		NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR, NETLINK_NO_ENOBUFS,
		NETLINK_LISTEN_ALL_NSID, NETLINK_CAP_ACK, NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK,
	};
	const int v[7] = {
		e->pktinfo, e->broadcast_error, e->no_enobufs, e->listen_all_nsid, e->cap_ack,
		e->ext_ack, e->get_strict_chk,
	};
	int i;

	uint32_t failed;

	if (sk_set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, e->rcvbuf) ||
	    sk_set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, e->sndbuf) ||
	    sk_opts_set(sk, e->sk_opts, e->n_sk_opts, &failed))
		return -1;
	for (i = 0; i < 7; i++)
		/* unset is the default: a kernel without the option needs nothing */
		if (v[i] && setsockopt(sk, SOL_NETLINK, opts[i], &v[i], sizeof(v[i])))
			return -1;
	return 0;
}

static int join_groups(pid_t pid, int sk, const NetlinkSkEntry *e)
{
	uint32_t group;
	size_t i;
	int b;

	for (i = 0; i < e->n_groups; i++)
		for (b = 0; b < 32; b++) {
			if (!(e->groups[i] & (1U << b)))
				continue;
			group = i * 32 + b + 1;
			if (setsockopt(sk, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
				       sizeof(group))) {
				pr_perror("Task %d: can't join netlink socket:[%lu] to group %u of "
					  "NETLINK_%s", pid, e->ino, group, proto_name(e->protocol));
				return -1;
			}
		}
	return 0;
}

static int place(pid_t pid, int sk, const NetlinkSkEntry *e)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = e->portid };

	if (e->portid && bind(sk, (struct sockaddr *)&a, sizeof(a))) {
		if (errno == EADDRINUSE)
			pr_err("Task %d: can't bind netlink socket:[%lu] to port id %u: another "
			       "NETLINK_%s socket of the network namespace holds it", pid, e->ino,
			       e->portid, proto_name(e->protocol));
		else
			pr_perror("Task %d: can't bind netlink socket:[%lu] to port id %u", pid,
				  e->ino, e->portid);
		return -1;
	}
	if (join_groups(pid, sk, e))
		return -1;
	if (!e->connected)
		return 0;
	a.nl_pid = e->dst_portid;
	a.nl_groups = e->dst_group && e->dst_group <= 32 ? 1U << (e->dst_group - 1) : 0;
	if (connect(sk, (struct sockaddr *)&a, sizeof(a))) {
		pr_perror("Task %d: can't connect netlink socket:[%lu] to %u/%u", pid, e->ino,
			  e->dst_portid, e->dst_group);
		return -1;
	}
	return 0;
}

static int nl_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const NetlinkSkEntry *e = d->nlsk;
	int sk;

	sk = socket(AF_NETLINK, e->type | SOCK_CLOEXEC, e->protocol);
	if (sk < 0) {
		pr_perror("Task %d: can't create a NETLINK_%s socket (protocol %u) for "
			  "socket:[%lu]", pid, proto_name(e->protocol), e->protocol, e->ino);
		return -1;
	}
	if (set_opts(sk, e) || fcntl(sk, F_SETFL, d->flags & O_NONBLOCK)) {
		pr_perror("Task %d: can't set the options of netlink socket:[%lu]", pid, e->ino);
		goto err;
	}
	if (place(pid, sk, e))
		goto err;
	return sk;
err:
	close(sk);
	return -1;
}

/* Its port id and groups are its network namespace's: made in the tree's. */
static int nl_in_tree_ns(const FileDesc *d)
{
	return 1;
}

const struct file_kind fk_netlink = {
	.name = "netlink socket",
	.kind = FILE_KIND__FILE_NETLINK,
	.match = nl_match,
	.match_fd = nl_match_fd,
	.check = nl_check,
	.dump = nl_dump,
	.free = nl_free,
	.validate = nl_validate,
	.open = nl_open,
	.in_tree_ns = nl_in_tree_ns,
};
