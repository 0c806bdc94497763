// SPDX-License-Identifier: GPL-2.0
/*
 * TCP, UDP and raw sockets, IPv4 and IPv6: a kind of open file for the fd
 * table (file.c). Raw ones are UDP's kin here: addresses, options, a
 * filter; see raw_read() and raw_peer() for what only they have.
 *
 * Every socket is "socket:[INO]": which ones are TCP or UDP is asked of
 * the fd itself (the sockfs attribute system.sockprotoname, read through
 * /proc/PID/fd/FD; no need to touch the task). Netlink and packet
 * sockets are file-netlink.c's and file-packet.c's; other network sockets
 * (ICMP ping sockets, ...) go on to file-unix.c, which refuses them by
 * name.
 *
 * Dump: criu takes its own reference to the socket (pidfd_getfd()) and
 * reads what getsockopt(), getsockname() and getpeername() show, TCP's
 * state from TCP_INFO, and asks inet_diag (NETLINK_SOCK_DIAG in the task's
 * network namespace) for what they do not: the shutdown bits, UDP's state
 * and queue lengths. Saved and restored: unbound, bound and listening TCP
 * sockets (with the backlog), unbound, bound and connected UDP sockets,
 * their options (file-inet-opt.c) and shutdown state; established TCP
 * connections with --tcp-established (file-inet-tcp.c), or only their
 * addresses with --tcp-close (restored closed). Refused, with one line
 * naming the task, the fd and the socket's addresses: a connection without
 * either option, one half closed, closing or connecting, a listener
 * holding connections not accepted yet, and UDP data waiting to be read or
 * (corked) to be sent.
 *
 * Restore: the task that holds the socket makes it, in its own network
 * namespace (a socket several tasks share: criu, or the tree's root once it
 * made the tree's namespaces): socket() and the options. The namespace
 * gets its links, addresses and routes later (ns-net.c, once every task
 * waits): then criu, through its own reference to the socket, binds it,
 * listens or connects, and shuts it down as it was (inet_finish()). The
 * options come before bind(): SO_REUSEADDR lets a listener take its port
 * again while connections it accepted linger in TIME_WAIT (as a restore on
 * the same host finds them), as it let the dumped one; a listener without
 * it can't, there, until they are gone (the restore says so).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/icmp6.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"
#include "parts/file-inet-opt.h"
#include "parts/file-inet-tcp.h"
#include "parts/file-inet-udp.h"
#include "parts/file-kind.h"
#include "parts/file-unix-sk.h"
#include "task/ptrace.h"

/* What the kernel says of one socket. */
struct inet_sk {
	int family, type, proto;
	int state, shutdown;
	uint32_t rqueue, wqueue;	/* a listener: connections queued, backlog */
	struct sockaddr_storage src, dst;
	int bound, connected;
	char proto_name[8];				/* "TCP", "UDPv6" */
	char name[2 * (INET6_ADDRSTRLEN + 16) + 8];	/* "127.0.0.1:80 -> ..." */
};

/* ------------------------------------------------------ what it is */

static const char *const protonames[] = { "TCP", "TCPv6", "UDP", "UDPv6", "RAW", "RAWv6" };

static int inet_match_fd(pid_t pid, int fd, const char *link, const struct stat *st)
{
	char name[32];
	size_t i;

	if (sock_protoname(pid, fd, link, st, name, sizeof(name)))
		return 0;
	for (i = 0; i < ARRAY_SIZE(protonames); i++)
		if (!strcmp(name, protonames[i]))
			return 1;
	return 0;
}

static int inet_match(const char *link, const struct stat *st)
{
	return 0;	/* match_fd decides */
}

static const void *addr_of(const struct sockaddr_storage *ss, int *port)
{
	if (ss->ss_family == AF_INET6) {
		*port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
		return &((const struct sockaddr_in6 *)ss)->sin6_addr;
	}
	*port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return &((const struct sockaddr_in *)ss)->sin_addr;
}

/* "127.0.0.1:80", "[::1]:80" */
static void fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";
	const void *addr;
	int port;

	addr = addr_of(ss, &port);
	inet_ntop(ss->ss_family, addr, a, sizeof(a));
	snprintf(buf, size, ss->ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", a, port);
}

static const char *type_name(int type, int proto)
{
	return type == SOCK_RAW ? "RAW" : proto == IPPROTO_TCP ? "TCP" : "UDP";
}

static void name_socket(struct inet_sk *s)
{
	char src[INET6_ADDRSTRLEN + 16] = "unbound", dst[INET6_ADDRSTRLEN + 16];
	int len;

	if (s->bound)
		fmt_addr(&s->src, src, sizeof(src));
	snprintf(s->proto_name, sizeof(s->proto_name), "%s%s",
		 type_name(s->type, s->proto), s->family == AF_INET6 ? "v6" : "");
	len = snprintf(s->name, sizeof(s->name), "%s", src);
	if (s->connected && len < (int)sizeof(s->name)) {
		fmt_addr(&s->dst, dst, sizeof(dst));
		snprintf(s->name + len, sizeof(s->name) - len, " -> %s", dst);
	}
}

static int any_addr(const struct sockaddr_storage *ss, int any_port)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;
	int port;

	if (ss->ss_family == AF_INET6)
		return !memcmp(addr_of(ss, &port), &any6, sizeof(any6)) && (any_port || !port);
	addr_of(ss, &port);
	return !((const struct sockaddr_in *)ss)->sin_addr.s_addr && (any_port || !port);
}

static int sk_int(int sk, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(sk, level, name, val, &len);
}

/* ------------------------------------------------------ inet_diag */

struct diag_want {
	uint32_t ino;
	int exact;
	struct inet_sk *s;
};

/* 1: the answer is the socket's, filled in; 0: another's, go on; -1: not there */
static int diag_one(struct nlmsghdr *h, void *arg)
{
	struct diag_want *w = arg;
	struct inet_diag_msg *m = NLMSG_DATA(h);
	struct inet_sk *s = w->s;
	struct rtattr *a;
	int alen;

	if (m->idiag_inode != w->ino) {
		errno = ENOENT;
		return w->exact ? -1 : 0;
	}
	/* TCP's state, queue and backlog come from TCP_INFO (tcp_state()) */
	if (s->proto == IPPROTO_UDP) {
		s->state = m->idiag_state;
		s->rqueue = m->idiag_rqueue;
		s->wqueue = m->idiag_wqueue;
	}
	alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
		if (a->rta_type == INET_DIAG_SHUTDOWN)
			s->shutdown = *(uint8_t *)RTA_DATA(a);
	return 1;
}

static void diag_addr(__be32 *to, const struct sockaddr_storage *ss, __be16 *port)
{
	int p;
	const void *a = addr_of(ss, &p);

	memcpy(to, a, ss->ss_family == AF_INET6 ? 16 : 4);
	*port = htons(p);
}

/*
 * The socket's 4-tuple for an exact lookup. The kernel looks a TCP socket
 * up as the receiver of a packet from idiag_dst to idiag_src, a UDP one
 * as the receiver of one from idiag_src to idiag_dst.
 */
static void diag_tuple(struct inet_diag_sockid *id, const struct inet_sk *s)
{
	int tcp = s->proto == IPPROTO_TCP;

	diag_addr(tcp ? id->idiag_src : id->idiag_dst, &s->src,
		  tcp ? &id->idiag_sport : &id->idiag_dport);
	if (s->connected)
		diag_addr(tcp ? id->idiag_dst : id->idiag_src, &s->dst,
			  tcp ? &id->idiag_dport : &id->idiag_sport);
	id->idiag_cookie[0] = id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

/*
 * The socket's entry: looked up by its addresses (@exact: one answer, maybe
 * another socket's, such as a listener sharing the port), or found in a
 * dump of its family and protocol.
 */
static int diag_ask(int nl, uint32_t ino, struct inet_sk *s, int exact)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | (exact ? 0 : NLM_F_DUMP) },
		.r = { .sdiag_family = s->family, .sdiag_protocol = s->proto,
		       .idiag_states = ~0U },
	};
	struct diag_want w = { .ino = ino, .exact = exact, .s = s };
	int ret;

	if (exact)
		diag_tuple(&req.r.id, s);
	ret = sock_diag_ask(nl, &req, sizeof(req), diag_one, &w);
	if (ret == 0)
		errno = ENOENT;
	return ret == 1 ? 0 : -1;
}

/*
 * A socket that was never bound is in no table that inet_diag walks: it
 * has no shutdown bits or queues to find (0).
 */
static int inet_diag(const struct fd_dump *f, struct inet_sk *s)
{
	int nl = sock_diag_open(f->pid), ret;

	if (nl < 0) {
		pr_perror("Task %d: can't open a sock_diag socket for fd %d", f->pid, f->fd);
		return -1;
	}
	/* the lookup by address is one answer; the dump walks every socket */
	ret = s->bound && !diag_ask(nl, f->st->st_ino, s, 1) ? 0 :
	      diag_ask(nl, f->st->st_ino, s, 0);
	close(nl);
	if (ret && errno == ENOENT && !s->bound && !s->connected)
		return 0;
	if (ret)
		pr_perror("Task %d: can't ask the kernel about the %s socket of fd %d "
			  "(%s; is inet_diag available?)", f->pid, s->proto_name, f->fd, f->link);
	return ret;
}

/* TCP's own view: its state, and a listener's queue and backlog. */
static int tcp_state(const struct fd_dump *f, int sk, struct inet_sk *s)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		pr_perror("Task %d: can't read TCP_INFO of socket fd %d", f->pid, f->fd);
		return -1;
	}
	s->state = ti.tcpi_state;
	if (s->state == TCP_LISTEN) {
		s->rqueue = ti.tcpi_unacked;	/* connections not accepted yet */
		s->wqueue = ti.tcpi_sacked;	/* listen()'s backlog */
	}
	return 0;
}

/* ------------------------------------------------------ dump */

/*
 * A raw socket connect()ed without a port (the usual way) hides its peer
 * from getpeername() (ENOTCONN: no port); /proc/PID/net/raw shows it, in
 * the task's network namespace.
 */
static int raw_peer(const struct fd_dump *f, struct inet_sk *s)
{
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&s->dst;
	struct sockaddr_in *d4 = (struct sockaddr_in *)&s->dst;
	struct proc_raw_sk r;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", f->pid,
		 s->family == AF_INET6 ? "raw6" : "raw");
	ret = proc_read(path, proc_parse_net_raw, (unsigned long)f->st->st_ino, &r);
	if (ret < 0) {
		pr_err("Task %d: can't find raw socket fd %d (%s) in %s", f->pid, f->fd,
		       f->link, path);
		return -1;
	}
	if (!ret || r.state != TCP_ESTABLISHED)
		return 0;
	memset(&s->dst, 0, sizeof(s->dst));
	s->dst.ss_family = s->family;
	if (s->family == AF_INET6)
		memcpy(&d6->sin6_addr, r.rem, sizeof(d6->sin6_addr));
	else
		d4->sin_addr.s_addr = r.rem[0];
	s->connected = 1;
	return 0;
}

/*
 * What a raw socket holds to be read: the size of its next datagram
 * (SIOCINQ), which has an IP header at least; and its shutdown bits from
 * poll(): RDHUP, no more receives; HUP, none either way. (raw_diag, the
 * one to ask otherwise, is a module of its own that may be missing; a
 * shutdown for sending only shows nowhere else, and is lost.)
 */
static int raw_queue(const struct fd_dump *f, int sk, struct inet_sk *s)
{
	struct pollfd p = { .fd = sk, .events = POLLRDHUP };
	int n = 0;

	if (ioctl(sk, SIOCINQ, &n) || poll(&p, 1, 0) < 0) {
		pr_perror("Task %d: can't read the queue of raw socket fd %d", f->pid, f->fd);
		return -1;
	}
	s->rqueue = n;
	s->shutdown = p.revents & POLLHUP ? 3 : p.revents & POLLRDHUP ? 1 : 0;
	return 0;
}

static int sk_read(const struct fd_dump *f, int sk, struct inet_sk *s)
{
	socklen_t len;

	memset(s, 0, sizeof(*s));
	if (sk_int(sk, SOL_SOCKET, SO_DOMAIN, &s->family) ||
	    sk_int(sk, SOL_SOCKET, SO_TYPE, &s->type) ||
	    sk_int(sk, SOL_SOCKET, SO_PROTOCOL, &s->proto)) {
		pr_perror("Task %d: can't learn what socket fd %d is", f->pid, f->fd);
		return -1;
	}
	len = sizeof(s->src);
	if (getsockname(sk, (struct sockaddr *)&s->src, &len)) {
		pr_perror("Task %d: can't read the address of socket fd %d", f->pid, f->fd);
		return -1;
	}
	/* a raw socket's port is its protocol: bound is an address */
	s->bound = !any_addr(&s->src, s->type == SOCK_RAW);
	len = sizeof(s->dst);
	s->connected = !getpeername(sk, (struct sockaddr *)&s->dst, &len);
	if (!s->connected && s->type == SOCK_RAW && raw_peer(f, s))
		return -1;
	name_socket(s);
	s->state = s->connected ? TCP_ESTABLISHED : TCP_CLOSE;
	if (s->proto == IPPROTO_TCP && s->type == SOCK_STREAM && tcp_state(f, sk, s))
		return -1;
	if (s->type == SOCK_RAW)
		return raw_queue(f, sk, s);
	return inet_diag(f, s);
}

static const char *tcp_state_name(int state)
{
	static const char *const names[] = {
		[2] = "SYN_SENT", [3] = "SYN_RECV", [4] = "FIN_WAIT1", [5] = "FIN_WAIT2",
		[6] = "TIME_WAIT", [8] = "CLOSE_WAIT", [9] = "LAST_ACK", [11] = "CLOSING",
	};

	return state >= 0 && state < (int)ARRAY_SIZE(names) && names[state] ? names[state] : "?";
}

static int refuse(const struct fd_dump *f, const struct inet_sk *s, const char *what,
		  const char *why)
{
	pr_err("Task %d: fd %d is %s %s socket %s (%s)%s", f->pid, f->fd, what, s->proto_name,
	       s->name, f->link, why);
	return -1;
}

/* Refuses, with one line, what can't be saved. */
static int check_sk(const struct fd_dump *f, const struct inet_sk *s)
{
	char why[128];

	if (s->type == SOCK_STREAM && s->state == TCP_LISTEN && s->rqueue) {
		/* no call puts a connection back in a listener's queue */
		if (f->opts && f->opts->tcp_skip_in_flight) {
			pr_warn("Task %d: fd %d is a listening %s socket %s with %u connection%s "
				"queued and not accepted: not saved (--skip-in-flight); their peers "
				"get a reset when the tree goes", f->pid, f->fd, s->proto_name,
				s->name, s->rqueue, s->rqueue == 1 ? "" : "s");
			return 0;
		}
		snprintf(why, sizeof(why), ", with %u connection%s queued but not accepted, "
			 "which can't be put back: --skip-in-flight saves it without them",
			 s->rqueue, s->rqueue == 1 ? "" : "s");
		return refuse(f, s, "a listening", why);
	}
	if (s->type == SOCK_STREAM && s->state == TCP_ESTABLISHED &&
	    !(f->opts && (f->opts->tcp_established || f->opts->tcp_close)))
		return refuse(f, s, "an established", ", a connection: dump it with "
			      "--tcp-established (or --tcp-close, to restore it closed)");
	if (s->type == SOCK_STREAM && s->state != TCP_ESTABLISHED &&
	    tcp_conn_state_ok(s->state) &&
	    !(f->opts && (f->opts->tcp_established || f->opts->tcp_close))) {
		snprintf(why, sizeof(why), " in TCP state %d (%s), a connection half closed or "
			 "closing: dump it with --tcp-established (or --tcp-close)", s->state,
			 tcp_state_name(s->state));
		return refuse(f, s, "a", why);
	}
	/* connecting: no way to rebuild it yet */
	if (s->type == SOCK_STREAM && s->state != TCP_CLOSE && s->state != TCP_LISTEN &&
	    !tcp_conn_state_ok(s->state)) {
		snprintf(why, sizeof(why), " in TCP state %d (%s), a connection not established, "
			 "which is not supported", s->state, tcp_state_name(s->state));
		return refuse(f, s, "a", why);
	}
	/* UDP's are saved (file-inet-udp.c) */
	if (s->type != SOCK_STREAM && s->rqueue &&
	    !(s->type == SOCK_DGRAM && s->proto == IPPROTO_UDP))
		return refuse(f, s, "a", ", with datagrams waiting to be read, which is not "
			      "supported");
	if (s->type == SOCK_DGRAM && s->wqueue)
		return refuse(f, s, "a", ", with data not sent yet (UDP_CORK), which is not "
			      "supported");
	return 0;
}

/* SO_GET_FILTER can't read an eBPF program back */
static int raw_check(const struct fd_dump *f, int sk, const struct inet_sk *s)
{
	uint64_t *insns;
	size_t n;

	if (s->type != SOCK_RAW)
		return 0;
	if (sk_filter_read(sk, &insns, &n) == -EACCES)
		return refuse(f, s, "a", " with an eBPF filter (SO_ATTACH_BPF), which is not "
			      "supported");
	free(insns);
	return 0;
}

static int inet_check(const struct fd_dump *f)
{
	struct inet_sk s;
	int sk, ret;

	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	ret = sk_read(f, sk, &s) || check_sk(f, &s) || raw_check(f, sk, &s) ? -1 : 0;
	close(sk);
	return ret;
}

static int copy_addr(const struct sockaddr_storage *ss, ProtobufCBinaryData *to,
		     uint32_t *port)
{
	int p;
	const void *a = addr_of(ss, &p);

	to->len = ss->ss_family == AF_INET6 ? 16 : 4;
	to->data = xmalloc(to->len);
	if (!to->data)
		return -1;
	memcpy(to->data, a, to->len);
	*port = p;
	return 0;
}

static int fill_entry(const struct fd_dump *f, const struct inet_sk *s, InetSkEntry *e)
{
	e->ino = f->st->st_ino;
	e->family = s->family;
	e->type = s->type;
	e->proto = s->proto;
	e->state = s->state;
	e->shutdown = s->shutdown;
	if (s->bound && (e->has_src_addr = e->has_src_port = 1,
			 copy_addr(&s->src, &e->src_addr, &e->src_port)))
		return -1;
	if (s->connected && (e->has_dst_addr = e->has_dst_port = 1,
			     copy_addr(&s->dst, &e->dst_addr, &e->dst_port)))
		return -1;
	if (s->family == AF_INET6 && s->bound &&
	    ((struct sockaddr_in6 *)&s->src)->sin6_scope_id) {
		e->has_scope_id = 1;
		e->scope_id = ((struct sockaddr_in6 *)&s->src)->sin6_scope_id;
	}
	if (s->state == TCP_LISTEN) {
		e->has_backlog = 1;
		e->backlog = s->wqueue;
	}
	return 0;
}

/* A raw socket's filters (refused before when eBPF: raw_check()). */
static int raw_read(const struct fd_dump *f, int sk, InetSkEntry *e)
{
	socklen_t len = sizeof(struct icmp6_filter);
	int locked, err;

	if (e->type != SOCK_RAW)
		return 0;
	err = sk_filter_read(sk, &e->filter, &e->n_filter);
	if (!err && unix_sockopt(sk, SO_LOCK_FILTER, &locked))
		err = -errno;
	if (!err && e->family == AF_INET6 && e->proto == IPPROTO_ICMPV6) {
		e->icmp6_filter.data = xmalloc(len);
		if (!e->icmp6_filter.data ||
		    getsockopt(sk, IPPROTO_ICMPV6, ICMP6_FILTER, e->icmp6_filter.data, &len))
			err = -errno;
		e->icmp6_filter.len = len;
		e->has_icmp6_filter = 1;
	}
	if (err) {
		errno = -err;
		pr_perror("Task %d: can't read the filters of raw socket fd %d", f->pid, f->fd);
		return -1;
	}
	e->has_filter_locked = 1;
	e->filter_locked = locked;
	return 0;
}

static int inet_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	struct inet_sk s;
	InetSkEntry *e;
	int sk, ret = -1;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	inet_sk_entry__init(e);
	d->isk = e;
	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	/* checked before; the task is frozen since, but a peer outside may have sent */
	if (sk_read(f, sk, &s) || check_sk(f, &s) || fill_entry(f, &s, e))
		goto out;
	ret = inet_opts_read(sk, e) || raw_read(f, sk, e) ? -1 : 0;
	if (!ret && s.type == SOCK_DGRAM && s.rqueue)
		ret = udp_queue_dump(f->pid, f->fd, sk, e);
	if (!ret && s.type == SOCK_STREAM && tcp_conn_state_ok(s.state)) {
		if (f->opts->tcp_established)
			ret = tcp_conn_dump(f->pid, f->fd, sk, e);
		else	/* --tcp-close: its addresses only, for the messages */
			e->has_closed = e->closed = 1;
	}
	pr_debug("Task %d: fd %d: %s socket %s %lu, state %u, shutdown %u, %zu options",
		 f->pid, f->fd, s.proto_name, s.name, e->ino, e->state, e->shutdown, e->n_opts);
out:
	close(sk);
	return ret;
}

static void inet_free(FileDesc *d)
{
	if (!d->isk)
		return;
	free(d->isk->src_addr.data);
	free(d->isk->dst_addr.data);
	free(d->isk->filter);
	free(d->isk->icmp6_filter.data);
	inet_opts_free(d->isk);
	tcp_conn_free(d->isk);
	udp_queue_free(d->isk);
	free(d->isk);
	d->isk = NULL;
}

/* ------------------------------------------------------------- restore */

static int addr_ok(const InetSkEntry *e, int has, const ProtobufCBinaryData *a, int has_port,
		   uint32_t port)
{
	if (!has)
		return 1;
	return a->len == (e->family == AF_INET6 ? 16u : 4u) && has_port && port <= 65535;
}

static int state_ok(const InetSkEntry *e)
{
	if (!tcp_conn_validate(e) || !udp_queue_validate(e))
		return 0;
	if (e->type == SOCK_STREAM)
		return e->state == TCP_CLOSE || e->conn || e->closed ||
		       (e->state == TCP_LISTEN && e->has_src_addr && e->has_backlog &&
			e->backlog <= INT32_MAX);
	return e->state == TCP_CLOSE || (e->state == TCP_ESTABLISHED && e->has_dst_addr);
}

static socklen_t make_addr(const InetSkEntry *e, const ProtobufCBinaryData *a, uint32_t port,
			   struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (e->family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		s6->sin6_scope_id = e->scope_id;
		memcpy(&s6->sin6_addr, a->data, 16);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	memcpy(&s4->sin_addr, a->data, 4);
	return sizeof(*s4);
}

/* "127.0.0.1:80" of an image's address, for messages */
static void image_addr(const InetSkEntry *e, const ProtobufCBinaryData *a, uint32_t port,
		       char *buf, size_t size)
{
	struct sockaddr_storage ss;

	make_addr(e, a, port, &ss);
	fmt_addr(&ss, buf, size);
}

/* what only raw sockets have */
static int raw_ok(const InetSkEntry *e)
{
	if (e->type != SOCK_RAW)
		return !e->n_filter && !e->has_filter_locked && !e->has_icmp6_filter;
	return sk_filter_valid(e->filter, e->n_filter) && !e->conn && !e->closed &&
	       !e->has_backlog && (!e->has_icmp6_filter ||
	       (e->family == AF_INET6 && e->proto == IPPROTO_ICMPV6 &&
		e->icmp6_filter.len == sizeof(struct icmp6_filter)));
}

static int inet_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	char src[INET6_ADDRSTRLEN + 16], dst[INET6_ADDRSTRLEN + 16];
	const InetSkEntry *e = d->isk;

	if (!e || (e->family != AF_INET && e->family != AF_INET6) ||
	    !((e->type == SOCK_STREAM && e->proto == IPPROTO_TCP) ||
	      (e->type == SOCK_DGRAM && e->proto == IPPROTO_UDP) ||
	      (e->type == SOCK_RAW && e->proto <= 255)) || !state_ok(e) || !raw_ok(e) ||
	    !addr_ok(e, e->has_src_addr, &e->src_addr, e->has_src_port, e->src_port) ||
	    !addr_ok(e, e->has_dst_addr, &e->dst_addr, e->has_dst_port, e->dst_port) ||
	    e->shutdown > 3 || (e->bind_dev && strlen(e->bind_dev) >= IFNAMSIZ) ||
	    inet_opts_validate(e)) {
		pr_err("Task %d: image files.img has an invalid network socket #%u", pid, d->id);
		return -1;
	}
	/* as CRIU: the restore is asked for connections too */
	if (e->conn && !(rc->opts && (rc->opts->tcp_established || rc->opts->tcp_close))) {
		image_addr(e, &e->src_addr, e->src_port, src, sizeof(src));
		image_addr(e, &e->dst_addr, e->dst_port, dst, sizeof(dst));
		pr_err("Task %d: the images hold the TCP connection %s -> %s (socket:[%lu]): "
		       "restore it with --tcp-established (or --tcp-close)", pid, src, dst, e->ino);
		return -1;
	}
	return 0;
}

static int bind_sk(int sk, const InetSkEntry *e)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(e, &e->src_addr, e->src_port, &ss);

	return bind(sk, (struct sockaddr *)&ss, len);
}

static int connect_sk(int sk, const InetSkEntry *e)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(e, &e->dst_addr, e->dst_port, &ss);

	return connect(sk, (struct sockaddr *)&ss, len);
}

static int connection(pid_t pid, int sk, const InetSkEntry *e)
{
	struct sockaddr_storage src, dst;
	socklen_t len = make_addr(e, &e->src_addr, e->src_port, &src);

	make_addr(e, &e->dst_addr, e->dst_port, &dst);
	return tcp_conn_restore(pid, sk, e, (struct sockaddr *)&src, (struct sockaddr *)&dst, len);
}

static int shutdown_sk(int sk, const InetSkEntry *e)
{
	/* a connection's FINs come back later, as they came (file-inet-tcp.c) */
	unsigned int bits = e->shutdown & ~tcp_conn_fin_bits(e);
	int how = (bits & 1 ? 1 : 0) + (bits & 2 ? 2 : 0);

	if (!how)
		return 0;
	/* SHUT_RD 0, SHUT_WR 1, SHUT_RDWR 2; unconnected ones say ENOTCONN, but keep it */
	if (shutdown(sk, how - 1) && errno != ENOTCONN)
		return -1;
	return 0;
}

/*
 * A connection restored closed (--tcp-close at the dump or here): a new
 * TCP socket, never connected: reads and writes fail as on a connection
 * that is gone.
 */
static int closed(const struct rst_ctx *rc, pid_t pid, const InetSkEntry *e, const char *src)
{
	char dst[INET6_ADDRSTRLEN + 16];

	if (!e->closed && !(e->conn && rc->opts && rc->opts->tcp_close))
		return 0;
	image_addr(e, &e->dst_addr, e->dst_port, dst, sizeof(dst));
	pr_info("Task %d: TCP connection %s -> %s (socket:[%lu]) restored closed (--tcp-close)",
		pid, src, dst, e->ino);
	return 1;
}

/* Where it is bound, listens or is connected to, and its shutdown bits. */
static int place_sk(const struct rst_ctx *rc, pid_t pid, int sk, const InetSkEntry *e,
		    const char *src)
{
	char dst[INET6_ADDRSTRLEN + 16];

	if (inet_opts_set_late(pid, sk, e))
		return -1;
	if (closed(rc, pid, e, src))
		return 0;
	if (e->conn && connection(pid, sk, e))
		return -1;
	if (!e->conn && e->has_src_addr && bind_sk(sk, e)) {
		pr_perror("Task %d: can't bind socket:[%lu] to %s", pid, e->ino, src);
		return -1;
	}
	if (e->state == TCP_LISTEN && listen(sk, e->backlog)) {
		pr_perror("Task %d: can't listen on socket:[%lu] (%s)", pid, e->ino, src);
		return -1;
	}
	if (!e->conn && e->has_dst_addr && connect_sk(sk, e)) {
		image_addr(e, &e->dst_addr, e->dst_port, dst, sizeof(dst));
		pr_perror("Task %d: can't connect socket:[%lu] (%s) to %s", pid, e->ino, src, dst);
		return -1;
	}
	if (shutdown_sk(sk, e)) {
		pr_perror("Task %d: can't shut socket:[%lu] (%s) down as it was (%u)", pid, e->ino,
			  src, e->shutdown);
		return -1;
	}
	return udp_queue_restore(pid, sk, e);
}

/* A raw socket's filters: the classic BPF one, and ICMPv6's type filter. */
static int raw_set(pid_t pid, int sk, const InetSkEntry *e)
{
	if (e->type != SOCK_RAW)
		return 0;
	if (sk_filter_set(sk, e->filter, e->n_filter, e->filter_locked)) {
		pr_perror("Task %d: can't attach the filter of raw socket:[%lu]", pid, e->ino);
		return -1;
	}
	if (e->has_icmp6_filter && setsockopt(sk, IPPROTO_ICMPV6, ICMP6_FILTER,
					      e->icmp6_filter.data, e->icmp6_filter.len)) {
		pr_perror("Task %d: can't set ICMP6_FILTER of raw socket:[%lu]", pid, e->ino);
		return -1;
	}
	return 0;
}

/* The socket, in its namespace, with its options; placed later (inet_finish()). */
static int inet_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const InetSkEntry *e = d->isk;
	int sk;

	sk = socket(e->family, e->type | SOCK_CLOEXEC, e->proto);
	if (sk < 0) {
		pr_perror("Task %d: can't create a %s socket (protocol %u) for socket:[%lu]", pid,
			  type_name(e->type, e->proto), e->proto, e->ino);
		return -1;
	}
	if (inet_opts_set(pid, sk, e) || raw_set(pid, sk, e))
		goto err;
	if (fcntl(sk, F_SETFL, d->flags & O_NONBLOCK)) {
		pr_perror("Task %d: can't set the file flags of socket:[%lu]", pid, e->ino);
		goto err;
	}
	return sk;
err:
	close(sk);
	return -1;
}

/*
 * In criu, once the tree's network namespace has its links, addresses and
 * routes (a socket of a namespace of the tree's own is made before they
 * are): bound, listening, connected, through criu's reference to fd @fd
 * of task @host_pid.
 */
static int inet_finish(struct rst_ctx *rc, pid_t pid, pid_t host_pid, int fd,
		       const FileDesc *d)
{
	const InetSkEntry *e = d->isk;
	char src[INET6_ADDRSTRLEN + 16] = "unbound";
	int sk, ret;

	if (e->has_src_addr)
		image_addr(e, &e->src_addr, e->src_port, src, sizeof(src));
	sk = ptrace_getfd(host_pid, fd);
	if (sk < 0)
		return -1;
	ret = place_sk(rc, pid, sk, e, src);
	close(sk);
	return ret;
}

/* Every task restored: what sockets had not sent or read yet goes to them. */
static int inet_resume(void)
{
	return tcp_conn_resume() || udp_queue_resume() ? -1 : 0;
}

/* The restore is over: nothing is kept for inet_resume() any more. */
static void inet_restored(void **data, int failed)
{
	tcp_conn_restored();
	udp_queue_restored();
}

/* Made in the tree's network namespace, when it has one. */
static int inet_in_tree_ns(const FileDesc *d)
{
	return 1;
}

const struct file_kind fk_inet = {
	.name = "network socket",
	.kind = FILE_KIND__FILE_INET,
	.match = inet_match,
	.match_fd = inet_match_fd,
	.check = inet_check,
	.dump = inet_dump,
	.free = inet_free,
	.after_dump = tcp_conn_after_dump,
	.validate = inet_validate,
	.open = inet_open,
	.finish = inet_finish,
	.resume = inet_resume,
	.restored = inet_restored,
	.in_tree_ns = inet_in_tree_ns,
};
