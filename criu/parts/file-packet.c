// SPDX-License-Identifier: GPL-2.0
/*
 * Packet sockets (AF_PACKET, SOCK_RAW and SOCK_DGRAM): a kind of open file
 * for the fd table (file.c).
 *
 * Dump: criu takes its own reference to the socket (pidfd_getfd()) and
 * reads the protocol it was made with (SO_PROTOCOL), the protocol and
 * interface it is bound to (getsockname()), the SOL_PACKET options of an
 * int (version, reserve, auxdata, origdev, loss, vnet header, timestamps,
 * qdisc bypass, ignore outgoing), the fanout group, the classic BPF filter
 * (SO_GET_FILTER) and whether it is locked, the buffer sizes; and asks
 * packet_diag (NETLINK_SOCK_DIAG in the task's network namespace) for its
 * memberships (PACKET_DIAG_MCLIST), rings (PACKET_DIAG_RX_RING,
 * PACKET_DIAG_TX_RING: their geometry) and queue; what is in the rings is
 * file-packet-ring.c's. Refused, with one line naming the task, the fd and
 * the socket: rings of the shapes file-packet-ring.c names, packets not
 * read yet, an eBPF filter (its program can't be read back as it was
 * attached), a fanout group steered by a BPF program, and the obsolete
 * SOCK_PACKET type.
 *
 * Restore: the task makes the socket in its network namespace, with its
 * options and filter (socket(), setsockopt()); once the namespace has its
 * links (file.c's finish step, in criu through its reference to the
 * socket), it is bound to its interface (by index: a namespace of the
 * tree's own gets its links back with their indexes; the name saved must
 * match, or the restore fails naming both), joins its fanout group and
 * adds its memberships, each as many times as it was added. A socket made
 * with a protocol receives from the moment it exists, as the dumped one
 * did. A socket with rings is different: it gets them in the task, before
 * the task's memory areas are mapped (mm.c maps them again from its fd),
 * but receives nothing until criu, in its finish step, put the kernel's
 * place in them and their frames back; only then is it bound and given
 * its filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/packet_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-packet-ring.h"
#include "parts/file-unix-sk.h"
#include "task/ptrace.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING	23	/* Linux 4.20 */
#endif
#define MCLIST_MAX		1024	/* a sanity bound on memberships */
#define MR_ADDR_MAX		8	/* sizeof(packet_mreq.mr_address) */

/* the SOL_PACKET options of an int that are saved */
static const int packet_opts[] = {
	PACKET_VERSION, PACKET_RESERVE, PACKET_AUXDATA, PACKET_ORIGDEV, PACKET_LOSS,
	PACKET_VNET_HDR, PACKET_TIMESTAMP, PACKET_TX_HAS_OFF, PACKET_QDISC_BYPASS,
	PACKET_IGNORE_OUTGOING,
};

/* What packet_diag says of one socket. */
struct pk_diag {
	uint32_t ino;
	int found;
	int rx_ring, tx_ring;
	struct packet_diag_ring rx, tx;
	uint32_t rmem;
	PacketSkEntry *e;	/* its memberships go there */
};

static int pk_match_fd(pid_t pid, int fd, const char *link, const struct stat *st)
{
	return sock_protoname_is(pid, fd, link, st, "PACKET");
}

static int pk_match(const char *link, const struct stat *st)
{
	return 0;	/* match_fd decides */
}

/* ------------------------------------------------------ dump */

static int add_mc(PacketSkEntry *e, const struct packet_diag_mclist *m)
{
	PacketMclistEntry *mc;
	void *more;

	if (e->n_mclist >= MCLIST_MAX || m->pdmc_alen > MR_ADDR_MAX)
		return -1;
	more = realloc(e->mclist, (e->n_mclist + 1) * sizeof(*e->mclist));
	mc = xzalloc(sizeof(*mc) + MR_ADDR_MAX);
	if (!more || !mc) {
		free(mc);
		if (more)
			e->mclist = more;
		return -1;
	}
	e->mclist = more;
	packet_mclist_entry__init(mc);
	mc->ifindex = m->pdmc_index;
	mc->type = m->pdmc_type;
	mc->count = m->pdmc_count;
	mc->addr.data = (uint8_t *)(mc + 1);
	mc->addr.len = m->pdmc_alen;
	memcpy(mc->addr.data, m->pdmc_addr, m->pdmc_alen);
	e->mclist[e->n_mclist++] = mc;
	return 0;
}

static int diag_one(struct packet_diag_msg *m, int len, struct pk_diag *pd)
{
	struct packet_diag_mclist *mc;
	struct rtattr *a;
	int n;

	pd->found = 1;
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case PACKET_DIAG_RX_RING:
			pd->rx_ring = RTA_PAYLOAD(a) >= (int)sizeof(pd->rx);
			if (pd->rx_ring)
				memcpy(&pd->rx, RTA_DATA(a), sizeof(pd->rx));
			break;
		case PACKET_DIAG_TX_RING:
			pd->tx_ring = RTA_PAYLOAD(a) >= (int)sizeof(pd->tx);
			if (pd->tx_ring)
				memcpy(&pd->tx, RTA_DATA(a), sizeof(pd->tx));
			break;
		case PACKET_DIAG_MEMINFO:
			if (RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
				pd->rmem = ((uint32_t *)RTA_DATA(a))[SK_MEMINFO_RMEM_ALLOC];
			break;
		case PACKET_DIAG_MCLIST:
			mc = RTA_DATA(a);
			for (n = RTA_PAYLOAD(a) / sizeof(*mc); n > 0; n--, mc++)
				if (add_mc(pd->e, mc))
					return -1;
			break;
		}
	}
	return 0;
}

static int diag_msg(struct nlmsghdr *h, void *arg)
{
	struct pk_diag *pd = arg;
	struct packet_diag_msg *m = NLMSG_DATA(h);

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->pdiag_ino != pd->ino)
		return 0;
	if (diag_one(m, h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)), pd)) {
		errno = E2BIG;
		return -1;
	}
	return 0;
}

/* packet_diag answers dumps only: every packet socket of the namespace */
static int pk_diag(pid_t pid, uint32_t ino, struct pk_diag *pd)
{
	struct {
		struct nlmsghdr h;
		struct packet_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_PACKET,
		       .pdiag_show = PACKET_SHOW_MCLIST | PACKET_SHOW_RING_CFG |
				     PACKET_SHOW_MEMINFO,
		       .pdiag_cookie = { ~0U, ~0U } },
	};
	int ret;

	pd->ino = ino;
	ret = sock_diag_dump(pid, &req, sizeof(req), diag_msg, pd);
	if (!ret && !pd->found) {
		errno = ENOENT;
		ret = -1;
	}
	return ret;
}

static int read_opts(int sk, PacketSkEntry *e)
{
	size_t i, n = ARRAY_SIZE(packet_opts);
	socklen_t len;
	int v;

	e->opts = xzalloc(n * (sizeof(*e->opts) + sizeof(**e->opts)));
	if (!e->opts)
		return -1;
	for (i = 0; i < n; i++) {
		len = sizeof(v);
		if (getsockopt(sk, SOL_PACKET, packet_opts[i], &v, &len)) {
			if (errno == ENOPROTOOPT)	/* an older kernel: not there */
				continue;
			return -1;
		}
		e->opts[e->n_opts] = (PacketOptEntry *)(e->opts + n) + e->n_opts;
		packet_opt_entry__init(e->opts[e->n_opts]);
		e->opts[e->n_opts]->name = packet_opts[i];
		e->opts[e->n_opts++]->val = v;
	}
	len = sizeof(v);
	if (getsockopt(sk, SOL_PACKET, PACKET_FANOUT, &v, &len))
		return -1;
	e->has_fanout = !!v;
	e->fanout = v;
	return 0;
}

static int read_sk(const struct fd_dump *f, int sk, PacketSkEntry *e)
{
	struct sockaddr_ll ll;
	socklen_t len = sizeof(ll);
	int type, proto, rcv, snd, locked;
	char name[IF_NAMESIZE];

	e->ino = f->st->st_ino;
	if (unix_sockopt(sk, SO_TYPE, &type) || unix_sockopt(sk, SO_PROTOCOL, &proto))
		goto err;
	e->type = type;
	e->protocol = proto;
	/* no SOL_PACKET options nor address to read: refused (pk_read()) */
	if (type == SOCK_PACKET)
		return 0;
	if (unix_sockopt(sk, SO_RCVBUF, &rcv) || unix_sockopt(sk, SO_SNDBUF, &snd) ||
	    unix_sockopt(sk, SO_LOCK_FILTER, &locked) || read_opts(sk, e) ||
	    sk_opts_read(sk, &e->sk_opts, &e->n_sk_opts) ||
	    getsockname(sk, (struct sockaddr *)&ll, &len))
		goto err;
	e->rcvbuf = rcv;
	e->sndbuf = snd;
	e->filter_locked = locked;
	e->num = ll.sll_protocol;
	e->ifindex = ll.sll_ifindex;
	if (e->ifindex) {
		/* asked on the socket itself: the index of its network namespace */
		struct ifreq ifr = { .ifr_ifindex = e->ifindex };

		if (ioctl(sk, SIOCGIFNAME, &ifr) == 0) {
			memcpy(name, ifr.ifr_name, IF_NAMESIZE);
			name[IF_NAMESIZE - 1] = '\0';
			e->ifname = xstrdup(name);
		}
	}
	return 0;
err:
	pr_perror("Task %d: can't read the state of packet socket fd %d (%s)", f->pid, f->fd,
		  f->link);
	return -1;
}

static int refuse(const struct fd_dump *f, const PacketSkEntry *e, const char *why)
{
	pr_err("Task %d: fd %d is a packet socket (%s, protocol %#06x, interface %u%s%s; %s) "
	       "%s", f->pid, f->fd, e->type == SOCK_PACKET ? "SOCK_PACKET" :
	       unix_type_name(e->type), ntohs(e->num), e->ifindex,
	       e->ifname ? " " : "", e->ifname ? e->ifname : "", f->link, why);
	return -1;
}

static int read_filter(const struct fd_dump *f, int sk, PacketSkEntry *e)
{
	int ret = sk_filter_read(sk, &e->filter, &e->n_filter);

	if (ret == -EACCES)
		return refuse(f, e, "with an eBPF filter (SO_ATTACH_BPF), which is not supported");
	if (ret) {
		errno = -ret;
		pr_perror("Task %d: can't read the filter of packet socket fd %d", f->pid, f->fd);
		return -1;
	}
	return 0;
}

/* the rings packet_diag showed, and what is in them */
static int read_rings(const struct fd_dump *f, int sk, PacketSkEntry *e, const struct pk_diag *pd)
{
	const char *why;

	if (pd->rx_ring && !(e->rx_ring = pk_ring_entry(&pd->rx)))
		return -1;
	if (pd->tx_ring && !(e->tx_ring = pk_ring_entry(&pd->tx)))
		return -1;
	if (pk_ring_read(f->pid, sk, e, &why))
		return -1;
	return why ? refuse(f, e, why) : 0;
}

/* Fills @e from socket @sk; refuses what can't be saved. */
static int pk_read(const struct fd_dump *f, int sk, PacketSkEntry *e)
{
	struct pk_diag pd = { .e = e };
	char why[96];
	int ftype;

	if (read_sk(f, sk, e))
		return -1;
	if (e->type == SOCK_PACKET)
		return refuse(f, e, "of the obsolete type SOCK_PACKET, which is not supported");
	if (read_filter(f, sk, e))
		return -1;
	if (pk_diag(f->pid, e->ino, &pd)) {
		pr_perror("Task %d: can't ask the kernel about packet socket fd %d (%s; is "
			  "packet_diag available?)", f->pid, f->fd, f->link);
		return -1;
	}
	if (read_rings(f, sk, e, &pd))
		return -1;
	ftype = (e->fanout >> 16) & 0xff;
	if (e->has_fanout && (ftype == PACKET_FANOUT_CBPF || ftype == PACKET_FANOUT_EBPF))
		return refuse(f, e, "in a fanout group steered by a BPF program, which is not "
			      "supported");
	if (pd.rmem) {
		snprintf(why, sizeof(why), "with packets not read yet (%u bytes queued), which "
			 "is not supported", pd.rmem);
		return refuse(f, e, why);
	}
	return 0;
}

static void pk_free_entry(PacketSkEntry *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n_mclist; i++)
		free(e->mclist[i]);
	free(e->mclist);
	free(e->opts);
	free(e->sk_opts);
	free(e->filter);
	free(e->ifname);
	pk_ring_free(e);
	free(e);
}

static int pk_check(const struct fd_dump *f)
{
	PacketSkEntry *e = xzalloc(sizeof(*e));
	int sk, ret;

	if (!e)
		return -1;
	packet_sk_entry__init(e);
	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0) {
		free(e);
		return -1;
	}
	ret = pk_read(f, sk, e);
	pk_free_entry(e);
	close(sk);
	return ret;
}

static int pk_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	PacketSkEntry *e;
	int sk, ret;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	packet_sk_entry__init(e);
	d->psk = e;
	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	/* checked before; the task is frozen since, but packets may have come */
	ret = pk_read(f, sk, e);
	close(sk);
	pr_debug("Task %d: fd %d: packet socket %lu, protocol %#x, bound %#x on %u, %zu "
		 "memberships, %zu filter instructions", f->pid, f->fd, e->ino, e->protocol,
		 e->num, e->ifindex, e->n_mclist, e->n_filter);
	return ret;
}

static void pk_free(FileDesc *d)
{
	pk_free_entry(d->psk);
	d->psk = NULL;
}

/* ------------------------------------------------------------- restore */

static int opt_known(uint32_t name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(packet_opts); i++)
		if ((uint32_t)packet_opts[i] == name)
			return 1;
	return 0;
}

static int pk_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const PacketSkEntry *e = d->psk;
	size_t i;
	int ok = e && (e->type == SOCK_RAW || e->type == SOCK_DGRAM) &&
		 e->protocol <= 0xffff && e->num <= 0xffff && e->ifindex <= INT32_MAX &&
		 (!e->ifname || strlen(e->ifname) < IF_NAMESIZE) && e->rcvbuf <= INT32_MAX &&
		 e->sndbuf <= INT32_MAX && e->n_mclist <= MCLIST_MAX &&
		 sk_filter_valid(e->filter, e->n_filter) && sk_opts_valid(e->sk_opts, e->n_sk_opts) &&
		 !pk_ring_valid(e);

	for (i = 0; ok && i < e->n_opts; i++)
		ok = opt_known(e->opts[i]->name);
	for (i = 0; ok && i < e->n_mclist; i++)
		ok = e->mclist[i]->addr.len <= MR_ADDR_MAX && e->mclist[i]->count &&
		     e->mclist[i]->count <= 0xffff && e->mclist[i]->ifindex <= INT32_MAX;
	if (!ok) {
		pr_err("Task %d: image files.img has an invalid packet socket #%u", pid, d->id);
		return -1;
	}
	return 0;
}

/* what a new socket does not have already (some can't even be set on every type) */
static int set_opts(pid_t pid, int sk, const PacketSkEntry *e)
{
	const PacketOptEntry *o;
	socklen_t len;
	size_t i;
	int cur;

	for (i = 0; i < e->n_opts; i++) {
		o = e->opts[i];
		len = sizeof(cur);
		if (!getsockopt(sk, SOL_PACKET, o->name, &cur, &len) && cur == o->val)
			continue;
		if (setsockopt(sk, SOL_PACKET, o->name, &o->val, sizeof(o->val))) {
			pr_perror("Task %d: can't set option %u of packet socket:[%lu] to %d", pid,
				  o->name, e->ino, o->val);
			return -1;
		}
	}
	return 0;
}

/*
 * A socket with rings receives nothing until criu put the kernel's place
 * in them back (pk_finish): made with protocol 0, its filter set then.
 */
static int has_rings(const PacketSkEntry *e)
{
	return e->rx_ring || e->tx_ring;
}

static int pk_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const PacketSkEntry *e = d->psk;
	uint32_t failed;
	int sk;

	sk = socket(AF_PACKET, e->type | SOCK_CLOEXEC, has_rings(e) ? 0 : e->protocol);
	if (sk < 0) {
		pr_perror("Task %d: can't create a packet socket (protocol %#06x) for "
			  "socket:[%lu]", pid, ntohs(e->protocol), e->ino);
		return -1;
	}
	/* the version and the reserve first: the rings take them */
	if (set_opts(pid, sk, e) || pk_ring_set(pid, sk, e))
		goto err;
	if (sk_opts_set(sk, e->sk_opts, e->n_sk_opts, &failed)) {
		pr_perror("Task %d: can't set socket option %u of packet socket:[%lu]", pid, failed,
			  e->ino);
		goto err;
	}
	if (sk_set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, e->rcvbuf) ||
	    sk_set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, e->sndbuf) ||
	    (!has_rings(e) && sk_filter_set(sk, e->filter, e->n_filter, e->filter_locked)) ||
	    fcntl(sk, F_SETFL, d->flags & O_NONBLOCK)) {
		pr_perror("Task %d: can't set the buffers, filter or flags of packet "
			  "socket:[%lu]", pid, e->ino);
		goto err;
	}
	return sk;
err:
	close(sk);
	return -1;
}

static int bind_sk(pid_t pid, int sk, const PacketSkEntry *e)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = e->num,
				  .sll_ifindex = e->ifindex };
	struct ifreq ifr = { .ifr_ifindex = e->ifindex };

	if (e->ifindex && e->ifname &&
	    (ioctl(sk, SIOCGIFNAME, &ifr) || strncmp(ifr.ifr_name, e->ifname, IF_NAMESIZE))) {
		pr_err("Task %d: packet socket:[%lu] was bound to interface %u %s, which is %s "
		       "here", pid, e->ino, e->ifindex, e->ifname,
		       errno == ENODEV ? "not there" : ifr.ifr_name);
		return -1;
	}
	if ((e->ifindex || e->num != (has_rings(e) ? 0 : e->protocol)) &&
	    bind(sk, (struct sockaddr *)&ll, sizeof(ll))) {
		pr_perror("Task %d: can't bind packet socket:[%lu] to interface %u, protocol "
			  "%#06x", pid, e->ino, e->ifindex, ntohs(e->num));
		return -1;
	}
	return 0;
}

static int join(pid_t pid, int sk, const PacketSkEntry *e)
{
	struct packet_mreq mr;
	uint32_t i, n;
	/* the id was unique at the dump: asked for by number now, not handed out anew */
	int v = e->fanout & ~(PACKET_FANOUT_FLAG_UNIQUEID << 16);

	if (e->has_fanout && setsockopt(sk, SOL_PACKET, PACKET_FANOUT, &v, sizeof(v))) {
		pr_perror("Task %d: can't join packet socket:[%lu] to fanout group %u", pid,
			  e->ino, e->fanout & 0xffff);
		return -1;
	}
	for (i = 0; i < e->n_mclist; i++) {
		memset(&mr, 0, sizeof(mr));
		mr.mr_ifindex = e->mclist[i]->ifindex;
		mr.mr_type = e->mclist[i]->type;
		mr.mr_alen = e->mclist[i]->addr.len;
		memcpy(mr.mr_address, e->mclist[i]->addr.data, mr.mr_alen);
		for (n = 0; n < e->mclist[i]->count; n++)
			if (setsockopt(sk, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
				pr_perror("Task %d: can't add membership %u (type %u) on interface "
					  "%u to packet socket:[%lu]", pid, i, mr.mr_type,
					  mr.mr_ifindex, e->ino);
				return -1;
			}
	}
	return 0;
}

/* the filter of a socket with rings, once they are as they were */
static int rings_filter(pid_t pid, int sk, const PacketSkEntry *e)
{
	if (!has_rings(e))
		return 0;
	if (pk_ring_unblock(pid, sk, e) ||
	    sk_filter_set(sk, e->filter, e->n_filter, e->filter_locked)) {
		pr_perror("Task %d: can't set the filter of packet socket:[%lu]", pid, e->ino);
		return -1;
	}
	return 0;
}

/*
 * In criu, once the tree's network namespace has its links: bound, in its
 * fanout group and memberships, through criu's reference to fd @fd of
 * task @host_pid.
 */
static int pk_finish(struct rst_ctx *rc, pid_t pid, pid_t host_pid, int fd, const FileDesc *d)
{
	int sk, ret;

	sk = ptrace_getfd(host_pid, fd);
	if (sk < 0)
		return -1;
	ret = (has_rings(d->psk) && pk_ring_fill(pid, sk, d->psk)) || bind_sk(pid, sk, d->psk) ||
	      join(pid, sk, d->psk) || rings_filter(pid, sk, d->psk) ? -1 : 0;
	close(sk);
	return ret;
}

/* Its interface and fanout group are its network namespace's: made in the tree's. */
static int pk_in_tree_ns(const FileDesc *d)
{
	return 1;
}

const struct file_kind fk_packet = {
	.name = "packet socket",
	.kind = FILE_KIND__FILE_PACKET,
	.match = pk_match,
	.match_fd = pk_match_fd,
	.check = pk_check,
	.dump = pk_dump,
	.free = pk_free,
	.validate = pk_validate,
	.open = pk_open,
	.finish = pk_finish,
	.in_tree_ns = pk_in_tree_ns,
};
