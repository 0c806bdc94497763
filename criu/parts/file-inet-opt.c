// SPDX-License-Identifier: GPL-2.0
/*
 * The socket options of TCP, UDP and raw IP sockets (file-inet.c): what
 * getsockopt() shows is saved, and set again where a new socket differs.
 *
 * Most are one integer: a table names them, with the sockets they belong
 * to; the dump keeps every one the kernel answers for, the restore sets
 * the ones a new socket has otherwise (so a default stays a default where
 * it matches, and the table also bounds what an image may set). Buffer
 * sizes (doubled by the kernel), SO_LINGER, SO_BINDTODEVICE and
 * TCP_CONGESTION have their own fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <linux/icmp.h>
#include <string.h>
#include <sys/socket.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-inet-opt.h"

/*
 * Which sockets an option is for (multicast: UDP and raw ones; raw: of
 * SOCK_RAW, V4_ICMP: raw ones of IPPROTO_ICMP).
 */
enum { ANY, V4, V6, TCP, UDP, V4_MC, V6_MC, V4_RAW, V6_RAW, V4_ICMP };

struct int_opt {
	int level, name, scope;
	const char *str;
};

#define OPT(l, n, s)	{ l, n, s, #n }

static const struct int_opt int_opts[] = {
	/* before bind(): they decide whether it succeeds */
	OPT(SOL_SOCKET, SO_REUSEADDR, ANY),
	OPT(SOL_SOCKET, SO_REUSEPORT, ANY),
	OPT(IPPROTO_IPV6, IPV6_V6ONLY, V6),
	OPT(IPPROTO_IP, IP_FREEBIND, V4),
	OPT(IPPROTO_IP, IP_TRANSPARENT, V4),
	OPT(IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, V4),
	OPT(IPPROTO_IPV6, IPV6_FREEBIND, V6),
	OPT(IPPROTO_IPV6, IPV6_TRANSPARENT, V6),
	OPT(SOL_SOCKET, SO_KEEPALIVE, ANY),
	OPT(SOL_SOCKET, SO_BROADCAST, ANY),
	OPT(SOL_SOCKET, SO_OOBINLINE, ANY),
	OPT(SOL_SOCKET, SO_PRIORITY, ANY),
	OPT(SOL_SOCKET, SO_MARK, ANY),
	OPT(SOL_SOCKET, SO_RCVLOWAT, ANY),
	OPT(SOL_SOCKET, SO_TIMESTAMP_OLD, ANY),
	OPT(SOL_SOCKET, SO_TIMESTAMPNS_OLD, ANY),
	OPT(SOL_SOCKET, SO_TIMESTAMP_NEW, ANY),
	OPT(SOL_SOCKET, SO_TIMESTAMPNS_NEW, ANY),
	OPT(SOL_SOCKET, SO_TIMESTAMPING_OLD, ANY),
	OPT(IPPROTO_IP, IP_TOS, V4),
	OPT(IPPROTO_IP, IP_TTL, V4),
	OPT(IPPROTO_IP, IP_RECVERR, V4),
	OPT(IPPROTO_IP, IP_PKTINFO, V4),
	OPT(IPPROTO_IP, IP_RECVTOS, V4),
	OPT(IPPROTO_IP, IP_RECVTTL, V4),
	OPT(IPPROTO_IP, IP_MTU_DISCOVER, V4),
	OPT(IPPROTO_IP, IP_MULTICAST_TTL, V4_MC),
	OPT(IPPROTO_IP, IP_MULTICAST_LOOP, V4_MC),
	OPT(IPPROTO_IPV6, IPV6_TCLASS, V6),
	OPT(IPPROTO_IPV6, IPV6_UNICAST_HOPS, V6),
	OPT(IPPROTO_IPV6, IPV6_RECVERR, V6),
	OPT(IPPROTO_IPV6, IPV6_RECVPKTINFO, V6),
	OPT(IPPROTO_IPV6, IPV6_RECVTCLASS, V6),
	OPT(IPPROTO_IPV6, IPV6_MTU_DISCOVER, V6),
	OPT(IPPROTO_IPV6, IPV6_MULTICAST_HOPS, V6_MC),
	OPT(IPPROTO_IPV6, IPV6_MULTICAST_LOOP, V6_MC),
	OPT(IPPROTO_TCP, TCP_NODELAY, TCP),
	OPT(IPPROTO_TCP, TCP_CORK, TCP),
	OPT(IPPROTO_TCP, TCP_KEEPIDLE, TCP),
	OPT(IPPROTO_TCP, TCP_KEEPINTVL, TCP),
	OPT(IPPROTO_TCP, TCP_KEEPCNT, TCP),
	OPT(IPPROTO_TCP, TCP_SYNCNT, TCP),
	OPT(IPPROTO_TCP, TCP_LINGER2, TCP),
	OPT(IPPROTO_TCP, TCP_DEFER_ACCEPT, TCP),
	OPT(IPPROTO_TCP, TCP_WINDOW_CLAMP, TCP),
	OPT(IPPROTO_TCP, TCP_USER_TIMEOUT, TCP),
	OPT(IPPROTO_TCP, TCP_NOTSENT_LOWAT, TCP),
	OPT(IPPROTO_TCP, TCP_FASTOPEN, TCP),
	OPT(IPPROTO_UDP, UDP_CORK, UDP),
	OPT(IPPROTO_UDP, UDP_SEGMENT, UDP),
	OPT(IPPROTO_UDP, UDP_GRO, UDP),
	OPT(IPPROTO_IP, IP_HDRINCL, V4_RAW),
	OPT(SOL_RAW, ICMP_FILTER, V4_ICMP),	/* a bitmap of the ICMP types dropped */
	OPT(SOL_RAW, IPV6_HDRINCL, V6_RAW),
	OPT(SOL_RAW, IPV6_CHECKSUM, V6_RAW),
};

static int applies(const struct int_opt *o, const InetSkEntry *e)
{
	switch (o->scope) {
	case V4: return e->family == AF_INET;
	case V6: return e->family == AF_INET6;
	case TCP: return e->type == SOCK_STREAM && e->proto == IPPROTO_TCP;
	case UDP: return e->type == SOCK_DGRAM && e->proto == IPPROTO_UDP;
	case V4_MC: return e->family == AF_INET && e->type != SOCK_STREAM;
	case V6_MC: return e->family == AF_INET6 && e->type != SOCK_STREAM;
	case V4_RAW: return e->family == AF_INET && e->type == SOCK_RAW;
	case V6_RAW: return e->family == AF_INET6 && e->type == SOCK_RAW;
	case V4_ICMP: return e->family == AF_INET && e->type == SOCK_RAW &&
			     e->proto == IPPROTO_ICMP;
	default: return 1;
	}
}

static const struct int_opt *find_opt(uint32_t level, uint32_t name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(int_opts); i++)
		if ((uint32_t)int_opts[i].level == level && (uint32_t)int_opts[i].name == name)
			return &int_opts[i];
	return NULL;
}

static int get_int(int sk, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	return getsockopt(sk, level, name, val, &len);
}

static int read_ints(int sk, InetSkEntry *e)
{
	size_t i;
	int v;

	e->opts = xzalloc((ARRAY_SIZE(int_opts) + 1) * sizeof(*e->opts));
	if (!e->opts)
		return -1;
	for (i = 0; i < ARRAY_SIZE(int_opts); i++) {
		if (!applies(&int_opts[i], e))
			continue;
		/* an option this kernel does not have: nothing to keep */
		if (get_int(sk, int_opts[i].level, int_opts[i].name, &v)) {
			if (errno == ENOPROTOOPT || errno == EOPNOTSUPP)
				continue;
			pr_perror("Can't read %s of socket:[%lu]", int_opts[i].str, e->ino);
			return -1;
		}
		e->opts[e->n_opts] = xmalloc(sizeof(InetSkOpt));
		if (!e->opts[e->n_opts])
			return -1;
		inet_sk_opt__init(e->opts[e->n_opts]);
		e->opts[e->n_opts]->level = int_opts[i].level;
		e->opts[e->n_opts]->name = int_opts[i].name;
		e->opts[e->n_opts]->value = v;
		e->n_opts++;
	}
	return 0;
}

static int read_str(int sk, int level, int name, char **out)
{
	char buf[64] = "";
	socklen_t len = sizeof(buf) - 1;

	if (getsockopt(sk, level, name, buf, &len))
		return errno == ENOPROTOOPT || errno == EOPNOTSUPP ? 0 : -1;
	buf[min((size_t)len, sizeof(buf) - 1)] = '\0';
	if (!buf[0])
		return 0;
	*out = xstrdup(buf);
	return *out ? 0 : -1;
}

int inet_opts_read(int sk, InetSkEntry *e)
{
	struct linger l = { 0 };
	socklen_t len = sizeof(l);
	int v;

	if (get_int(sk, SOL_SOCKET, SO_SNDBUF, &v))
		goto err;
	e->sndbuf = v;
	if (get_int(sk, SOL_SOCKET, SO_RCVBUF, &v))
		goto err;
	e->rcvbuf = v;
	if (getsockopt(sk, SOL_SOCKET, SO_LINGER, &l, &len))
		goto err;
	if (l.l_onoff) {
		e->has_linger = 1;
		e->linger = l.l_linger;
	}
	if (read_str(sk, SOL_SOCKET, SO_BINDTODEVICE, &e->bind_dev) ||
	    (e->proto == IPPROTO_TCP &&
	     read_str(sk, IPPROTO_TCP, TCP_CONGESTION, &e->congestion)))
		goto err;
	return read_ints(sk, e);
err:
	pr_perror("Can't read the options of socket:[%lu]", e->ino);
	return -1;
}

void inet_opts_free(InetSkEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_opts; i++)
		free(e->opts[i]);
	free(e->opts);
	free(e->bind_dev);
	free(e->congestion);
}

int inet_opts_validate(const InetSkEntry *e)
{
	const struct int_opt *o;
	size_t i;

	for (i = 0; i < e->n_opts; i++) {
		o = find_opt(e->opts[i]->level, e->opts[i]->name);
		if (!o || !applies(o, e))
			return -1;
	}
	if (e->sndbuf > INT32_MAX || e->rcvbuf > INT32_MAX || (e->has_linger && e->linger > INT32_MAX))
		return -1;
	return 0;
}

/* A buffer size as getsockopt() showed it: the kernel doubles what it is given. */
static int set_buf(int sk, int opt, int force, uint32_t val)
{
	int v = val / 2, cur;

	if (!get_int(sk, SOL_SOCKET, opt, &cur) && (uint32_t)cur == val)
		return 0;
	if (!setsockopt(sk, SOL_SOCKET, force, &v, sizeof(v)))
		return 0;
	return setsockopt(sk, SOL_SOCKET, opt, &v, sizeof(v));
}

static int set_strings(pid_t pid, int sk, const InetSkEntry *e)
{
	char cur[64] = "";
	socklen_t len = sizeof(cur) - 1;

	if (e->bind_dev && setsockopt(sk, SOL_SOCKET, SO_BINDTODEVICE, e->bind_dev,
				      strlen(e->bind_dev))) {
		pr_perror("Task %d: can't bind socket:[%lu] to device %s (SO_BINDTODEVICE)", pid, e->ino,
			  e->bind_dev);
		return -1;
	}
	if (!e->congestion || (!getsockopt(sk, IPPROTO_TCP, TCP_CONGESTION, cur, &len) &&
			       !strcmp(cur, e->congestion)))
		return 0;
	if (setsockopt(sk, IPPROTO_TCP, TCP_CONGESTION, e->congestion, strlen(e->congestion))) {
		pr_perror("Task %d: can't set the congestion control of socket:[%lu] to %s", pid, e->ino,
			  e->congestion);
		return -1;
	}
	return 0;
}

int inet_opts_set_bufs(pid_t pid, int sk, const InetSkEntry *e)
{
	if (set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, e->sndbuf) ||
	    set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, e->rcvbuf)) {
		pr_perror("Task %d: can't set the buffer sizes of socket:[%lu] (%u, %u)", pid,
			  e->ino, e->sndbuf, e->rcvbuf);
		return -1;
	}
	return 0;
}

int inet_opts_set(pid_t pid, int sk, const InetSkEntry *e)
{
	struct linger l = { .l_onoff = e->has_linger, .l_linger = e->linger };
	const struct int_opt *o;
	size_t i;
	int cur;

	for (i = 0; i < e->n_opts; i++) {
		o = find_opt(e->opts[i]->level, e->opts[i]->name);
		if (!get_int(sk, o->level, o->name, &cur) && cur == e->opts[i]->value)
			continue;
		if (setsockopt(sk, o->level, o->name, &e->opts[i]->value, sizeof(int))) {
			pr_perror("Task %d: can't set %s of socket:[%lu] to %d", pid, o->str, e->ino,
				  e->opts[i]->value);
			return -1;
		}
	}
	if (inet_opts_set_bufs(pid, sk, e) ||
	    (e->has_linger && setsockopt(sk, SOL_SOCKET, SO_LINGER, &l, sizeof(l)))) {
		pr_perror("Task %d: can't set SO_LINGER of socket:[%lu]", pid, e->ino);
		return -1;
	}
	return 0;
}

int inet_opts_set_late(pid_t pid, int sk, const InetSkEntry *e)
{
	return set_strings(pid, sk, e);
}
