// SPDX-License-Identifier: GPL-2.0
/*
 * The datagrams a UDP socket holds not read yet (file-inet.c's sockets).
 *
 * Dump: criu's reference to the socket peeks them one after the other
 * with SO_PEEK_OFF (the socket's peek offset is set back as it was): the
 * bytes and who sent them. Nothing is taken out of the queue, so a tree
 * that goes on (--leave-running, a failed dump) reads them still.
 *
 * Restore: once every task is restored and before the tree runs, each is
 * sent again, in order, to the socket's address from the address and port
 * that sent it, as a UDP packet criu builds with libnet and sends through
 * a raw socket in the socket's network namespace; criu waits until the
 * socket holds them all. A socket bound to the wildcard address gets them
 * on loopback. Ancillary data a datagram came with (IP_PKTINFO and the
 * like) is not kept: what the task asks of a datagram it reads after the
 * restore describes that loopback delivery. An empty datagram that was
 * peeked at before the dump (by the task, or by a restore's check) is one
 * SO_PEEK_OFF passes over: it is not saved.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-inet-tcp.h"
#include "parts/file-inet-udp.h"

#define DGRAM_MAX	65536
#define QUEUE_MAX	(64U << 20)	/* a sanity bound on the bytes of one queue */
#define WAIT_MS		1000

/* ------------------------------------------------------------------ dump */

static int add_dgram(InetSkEntry *e, const uint8_t *buf, size_t len,
		     const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
	InetDgram *d = xzalloc(sizeof(*d) + len + 16);

	if (!d || xgrow(e->rqueue, e->n_rqueue)) {
		free(d);
		return -1;
	}
	inet_dgram__init(d);
	d->data.data = (uint8_t *)(d + 1);
	d->data.len = len;
	memcpy(d->data.data, buf, len);
	d->addr.data = d->data.data + len;
	if (ss->ss_family == AF_INET6) {
		d->addr.len = 16;
		memcpy(d->addr.data, &s6->sin6_addr, 16);
		d->port = ntohs(s6->sin6_port);
	} else {
		d->addr.len = 4;
		memcpy(d->addr.data, &s4->sin_addr, 4);
		d->port = ntohs(s4->sin_port);
	}
	e->rqueue[e->n_rqueue++] = d;
	return 0;
}

/* Peeks every datagram of @sk, oldest first, at SO_PEEK_OFF's offsets. */
static int peek_all(int sk, InetSkEntry *e, uint8_t *buf)
{
	struct sockaddr_storage ss;
	struct iovec iov = { buf, DGRAM_MAX };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t total = 0;
	ssize_t n;

	while (1) {
		m.msg_name = &ss;
		m.msg_namelen = sizeof(ss);
		n = recvmsg(sk, &m, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n > DGRAM_MAX || (total += n) > QUEUE_MAX) {
			errno = EFBIG;
			return -1;
		}
		if (add_dgram(e, buf, n, &ss))
			return -1;
	}
}

int udp_queue_dump(pid_t pid, int fd, int sk, InetSkEntry *e)
{
	int old = -1, zero = 0, ret;
	socklen_t len = sizeof(old);
	uint8_t *buf = xmalloc(DGRAM_MAX);

	if (!buf)
		return -1;
	if (getsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, &len) ||
	    setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero))) {
		pr_perror("Task %d: can't peek at the datagrams of UDP socket fd %d", pid, fd);
		free(buf);
		return -1;
	}
	ret = peek_all(sk, e, buf);
	if (ret)
		pr_perror("Task %d: can't read the datagrams of UDP socket fd %d", pid, fd);
	/* the task's own peek offset again: it shares the socket */
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old))) {
		pr_perror("Task %d: can't set the peek offset of UDP socket fd %d back", pid, fd);
		ret = -1;
	}
	free(buf);
	pr_debug("Task %d: fd %d: %zu datagrams not read yet", pid, fd, e->n_rqueue);
	return ret;
}

void udp_queue_free(InetSkEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_rqueue; i++)
		free(e->rqueue[i]);
	free(e->rqueue);
	e->rqueue = NULL;
	e->n_rqueue = 0;
}

/* --------------------------------------------------------------- restore */

int udp_queue_validate(const InetSkEntry *e)
{
	size_t i, total = 0;
	unsigned int alen = e->family == AF_INET6 ? 16 : 4;

	if (!e->n_rqueue)
		return 1;
	if (e->type != SOCK_DGRAM || e->proto != IPPROTO_UDP || !e->has_src_addr ||
	    e->src_addr.len != alen)
		return 0;
	for (i = 0; i < e->n_rqueue; i++) {
		if (e->rqueue[i]->addr.len != alen || e->rqueue[i]->port > 65535 ||
		    e->rqueue[i]->data.len > DGRAM_MAX - 8 ||
		    (total += e->rqueue[i]->data.len) > QUEUE_MAX)
			return 0;
	}
	return 1;
}

/* A queue to fill once every task is restored. */
struct refill {
	pid_t pid;
	int sk;
	const InetSkEntry *e;
	libnet_t *ln;
};

static struct refill *refills;
static int nr_refills;

int udp_queue_restore(pid_t pid, int sk, const InetSkEntry *e)
{
	struct refill *r;

	if (!e->n_rqueue)
		return 0;
	r = xpush(refills, nr_refills);
	if (!r)
		return -1;
	r->pid = pid;
	r->e = e;
	r->ln = NULL;
	r->sk = dup(sk);
	if (r->sk < 0) {
		pr_perror("Task %d: can't keep socket:[%lu] for its datagrams", pid, e->ino);
		nr_refills--;
		return -1;
	}
	r->ln = inet_raw_for(pid, sk, e);
	return r->ln ? 0 : -1;
}

/* Where the datagrams go: the socket's address, loopback for the wildcard. */
static void dest_of(const InetSkEntry *e, uint8_t *dst)
{
	static const uint8_t any[16];

	memcpy(dst, e->src_addr.data, e->src_addr.len);
	if (memcmp(dst, any, e->src_addr.len))
		return;
	if (e->family == AF_INET6) {
		dst[15] = 1;			/* ::1 */
	} else {
		dst[0] = 127;			/* 127.0.0.1 */
		dst[3] = 1;
	}
}

static int send_one(const struct refill *r, const InetDgram *d, const uint8_t *dst)
{
	const InetSkEntry *e = r->e;
	uint32_t s4, d4;
	struct libnet_in6_addr s6, d6;
	size_t len = d->data.len;

	libnet_clear_packet(r->ln);
	if (libnet_build_udp(d->port, e->src_port, LIBNET_UDP_H + len, 0, d->data.data, len,
			     r->ln, 0) < 0)
		return -1;
	if (e->family == AF_INET) {
		memcpy(&s4, d->addr.data, 4);
		memcpy(&d4, dst, 4);
		if (libnet_build_ipv4(LIBNET_IPV4_H + LIBNET_UDP_H + len, 0, 0, 0, 64, IPPROTO_UDP,
				      0, s4, d4, NULL, 0, r->ln, 0) < 0)
			return -1;
	} else {
		memcpy(&s6, d->addr.data, 16);
		memcpy(&d6, dst, 16);
		if (libnet_build_ipv6(0, 0, LIBNET_UDP_H + len, IPPROTO_UDP, 64, s6, d6, NULL, 0,
				      r->ln, 0) < 0)
			return -1;
	}
	return libnet_write(r->ln) < 0 ? -1 : 0;
}

/*
 * Sends them all, then waits until the socket has some (1 s at most): they
 * went through loopback one after the other, in order. (Not counted with
 * peeks: a peek marks an empty datagram so that the next dump's peeks at
 * offsets pass over it.)
 */
static int refill(const struct refill *r)
{
	const InetSkEntry *e = r->e;
	struct pollfd p = { .fd = r->sk, .events = POLLIN };
	uint8_t dst[16];
	size_t i;

	dest_of(e, dst);
	for (i = 0; i < e->n_rqueue; i++)
		if (send_one(r, e->rqueue[i], dst)) {
			pr_err("Task %d: can't send datagram %zu of %zu to UDP socket:[%lu] again: "
			       "%s", r->pid, i + 1, e->n_rqueue, e->ino, libnet_geterror(r->ln));
			return -1;
		}
	if (poll(&p, 1, WAIT_MS) != 1) {
		pr_err("Task %d: UDP socket:[%lu] got none of the %zu datagrams sent to it again",
		       r->pid, e->ino, e->n_rqueue);
		return -1;
	}
	pr_debug("Task %d: UDP socket:[%lu]: %zu datagrams sent again", r->pid, e->ino,
		 e->n_rqueue);
	return 0;
}

int udp_queue_resume(void)
{
	int i;

	for (i = 0; i < nr_refills; i++)
		if (refill(&refills[i]))
			return -1;
	return 0;
}

void udp_queue_restored(void)
{
	while (nr_refills > 0) {
		close(refills[--nr_refills].sk);
		if (refills[nr_refills].ln)
			libnet_destroy(refills[nr_refills].ln);
	}
	free(refills);
	refills = NULL;
}
