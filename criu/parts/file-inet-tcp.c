// SPDX-License-Identifier: GPL-2.0
/*
 * Established TCP connections (--tcp-established), through TCP_REPAIR.
 *
 * Dump: criu's own reference to the socket (pidfd_getfd()) is put in
 * repair mode, which stops it sending anything (no ACK, no window update,
 * no FIN or RST when it is closed) and opens its insides: the sequence
 * numbers of both queues (TCP_QUEUE_SEQ), the bytes in them (peeked:
 * the send queue holds what the peer has not acknowledged or was not sent
 * yet), the options agreed at the handshake (TCP_INFO and TCP_MAXSEG),
 * the timestamp clock (TCP_TIMESTAMP) and the window (TCP_REPAIR_WINDOW).
 * The socket stays in repair mode until the dump is over: when the tree is
 * killed it goes silently, the peer hears nothing; when it goes on
 * (--leave-running, a failed dump) repair mode is left without a window
 * probe and the connection carries on.
 *
 * Restore: a new socket in repair mode binds to the same address (repair
 * mode takes the port even where another socket holds it), gets the
 * sequence numbers, "connects" without a handshake, gets the options,
 * the timestamp clock, the receive queue (as if received), the send
 * queue (as if sent and not acknowledged: retransmitted if the peer did
 * not have it), the window; then leaves repair mode, without a probe, so
 * that nothing goes out before the peer may be there too.
 *
 * Half-closed and closing connections (FIN_WAIT1, FIN_WAIT2, CLOSE_WAIT,
 * LAST_ACK, CLOSING) are saved as their data and sequence numbers without
 * the FINs (each took one sequence number), and restored established;
 * once every task is restored the FINs are made again in the order they
 * came: ours by shutdown(SHUT_WR), sent (the peer may see it twice: it
 * acknowledges it again), the peer's by a FIN segment from the peer's
 * address and port that criu builds with libnet and sends to the socket
 * through a raw socket of its network namespace (it acknowledges nothing
 * new; the socket acknowledges it to the peer, who sees a duplicate).
 *
 * What the peer sends while the connection is down is lost to it only if
 * a socket answers it with a reset: the tree's network namespace is
 * locked meanwhile (ns-net-lock.c) when it has one of its own; a
 * connection to a peer in the same namespace as criu has no such lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <libnet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/stat.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-inet-opt.h"
#include "parts/file-inet-tcp.h"

#define REPAIR_ON		1
#define REPAIR_OFF		0
#define REPAIR_OFF_NO_WP	-1	/* leave repair mode without a window probe */
#define QUEUE_MAX		(64U << 20)	/* a sanity bound on one queue */
#define CHUNK			(32U << 10)
#define FILL_TRIES		200
#define FILL_WAIT_US		5000	/* 200 tries: 1 s at most */

/* criu's references to the sockets in repair mode, until the dump is over */
static int *held;
static int nr_held;

static int repair(int sk, int how)
{
	return setsockopt(sk, IPPROTO_TCP, TCP_REPAIR, &how, sizeof(how));
}

static int select_queue(int sk, int q)
{
	return setsockopt(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q));
}

static int get_u32(int sk, int name, uint32_t *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(sk, IPPROTO_TCP, name, v, &len);
}

/* Our FIN was queued: it is after the send queue, one sequence number. */
static int fin_out(uint32_t state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 || state == TCP_CLOSING ||
	       state == TCP_LAST_ACK;
}

/* ... and the peer has not acknowledged it (SIOCOUTQ counts it). */
static int fin_out_unacked(uint32_t state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_CLOSING || state == TCP_LAST_ACK;
}

/* The peer's FIN came: after the receive queue, one sequence number. */
static int fin_in(uint32_t state)
{
	return state == TCP_CLOSE_WAIT || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

int tcp_conn_state_ok(uint32_t state)
{
	return state == TCP_ESTABLISHED || fin_out(state) || fin_in(state);
}

unsigned int tcp_conn_fin_bits(const InetSkEntry *e)
{
	if (!e->conn || e->closed)
		return 0;
	/* RCV_SHUTDOWN 1, SEND_SHUTDOWN 2, as sock_diag gives them */
	return (fin_in(e->state) ? 1 : 0) | (fin_out(e->state) ? 2 : 0);
}

/*
 * Peeks queue @q: its sequence number and its bytes; @fin: a FIN that
 * SIOCOUTQ counts in it, which has no byte.
 */
static int read_queue(int sk, int q, uint32_t *seq, ProtobufCBinaryData *data, int fin)
{
	int len = 0;
	ssize_t n;

	if (select_queue(sk, q) || get_u32(sk, TCP_QUEUE_SEQ, seq) ||
	    ioctl(sk, q == TCP_SEND_QUEUE ? SIOCOUTQ : SIOCINQ, &len))
		return -1;
	len -= fin && len > 0;
	if (len < 0 || (unsigned int)len > QUEUE_MAX) {
		errno = EFBIG;
		return -1;
	}
	data->data = xmalloc(len + 1);
	if (!data->data)
		return -1;
	data->len = len;
	n = len ? recv(sk, data->data, len, MSG_PEEK | MSG_DONTWAIT) : 0;
	if (n != len) {
		errno = n < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

static int read_options(int sk, InetTcpConn *c)
{
	struct tcp_repair_window w;
	socklen_t len = sizeof(struct tcp_info);
	struct tcp_info ti;

	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len) || get_u32(sk, TCP_MAXSEG, &c->mss))
		return -1;
	c->sack = !!(ti.tcpi_options & TCPI_OPT_SACK);
	if (ti.tcpi_options & TCPI_OPT_WSCALE) {
		c->has_snd_wscale = c->has_rcv_wscale = 1;
		c->snd_wscale = ti.tcpi_snd_wscale;
		c->rcv_wscale = ti.tcpi_rcv_wscale;
	}
	if ((ti.tcpi_options & TCPI_OPT_TIMESTAMPS) &&
	    (c->has_timestamp = 1, get_u32(sk, TCP_TIMESTAMP, &c->timestamp)))
		return -1;
	len = sizeof(w);
	if (getsockopt(sk, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, &len))
		return -1;
	c->snd_wl1 = w.snd_wl1;
	c->snd_wnd = w.snd_wnd;
	c->max_window = w.max_window;
	c->rcv_wnd = w.rcv_wnd;
	c->rcv_wup = w.rcv_wup;
	return 0;
}

/* How much of the send queue the peer never saw: sent anew, as TCP would. */
static int read_unsent(int sk, InetTcpConn *c)
{
	int n = 0;

	if (ioctl(sk, SIOCOUTQNSD, &n))
		return -1;
	/* a FIN not sent yet counts one: made again at the restore */
	if (n == (int)c->send_queue.len + 1)
		n--;
	if (n < 0 || (size_t)n > c->send_queue.len) {
		errno = EIO;
		return -1;
	}
	c->has_unsent = 1;
	c->unsent = n;
	return 0;
}

int tcp_conn_dump(pid_t pid, int fd, int sk, InetSkEntry *e)
{
	InetTcpConn *c;
	int own;

	c = xmalloc(sizeof(*c));
	if (!c)
		return -1;
	inet_tcp_conn__init(c);
	e->conn = c;
	own = dup(sk);
	if (own < 0 || xgrow(held, nr_held)) {
		if (own >= 0)
			close(own);
		return -1;
	}
	if (repair(own, REPAIR_ON)) {
		pr_perror("Task %d: can't put the TCP connection of fd %d in repair mode", pid, fd);
		close(own);
		return -1;
	}
	held[nr_held++] = own;
	if (read_queue(own, TCP_SEND_QUEUE, &c->snd_seq, &c->send_queue,
		       fin_out_unacked(e->state)) ||
	    read_queue(own, TCP_RECV_QUEUE, &c->rcv_seq, &c->recv_queue, 0) ||
	    read_options(own, c) || read_unsent(own, c)) {
		pr_perror("Task %d: can't read the TCP connection of fd %d in repair mode", pid, fd);
		return -1;
	}
	/* the sequence numbers without the FINs, which the restore makes again */
	c->snd_seq -= fin_out(e->state);
	c->rcv_seq -= fin_in(e->state);
	/* the window's marks may be the FIN's own: none past what is received */
	if ((int32_t)(c->rcv_wup - c->rcv_seq) > 0)
		c->rcv_wup = c->rcv_seq;
	if ((int32_t)(c->snd_wl1 - c->rcv_seq) > 0)
		c->snd_wl1 = c->rcv_seq;
	pr_debug("Task %d: fd %d: seq %u/%u, %zu bytes to send (%u never sent), %zu to read, "
		 "mss %u", pid, fd, c->snd_seq, c->rcv_seq, c->send_queue.len, c->unsent,
		 c->recv_queue.len, c->mss);
	return 0;
}

void tcp_conn_free(InetSkEntry *e)
{
	if (!e->conn)
		return;
	free(e->conn->send_queue.data);
	free(e->conn->recv_queue.data);
	free(e->conn);
	e->conn = NULL;
}

void tcp_conn_after_dump(int runs)
{
	int i;

	for (i = 0; i < nr_held; i++) {
		if (runs && repair(held[i], REPAIR_OFF_NO_WP))
			pr_perror("Can't take a TCP connection of the tree out of repair mode");
		close(held[i]);
	}
	free(held);
	held = NULL;
	nr_held = 0;
}

/* ------------------------------------------------------------- restore */

static int defer_unsent(pid_t pid, int sk, const InetSkEntry *e);

int tcp_conn_validate(const InetSkEntry *e)
{
	const InetTcpConn *c = e->conn;

	if (!c)
		return e->type != SOCK_STREAM || e->state != TCP_ESTABLISHED || e->closed;
	if (e->closed)
		return 0;
	return e->type == SOCK_STREAM && tcp_conn_state_ok(e->state) && e->has_src_addr &&
	       e->has_dst_addr &&
	       c->send_queue.len <= QUEUE_MAX && c->recv_queue.len <= QUEUE_MAX &&
	       c->unsent <= c->send_queue.len &&
	       c->snd_wscale <= 14 && c->rcv_wscale <= 14 && c->mss && c->mss <= 65535;
}

/*
 * Writes @len bytes of @data into @sk: queue @q in repair mode, else as the
 * task would. A send that finds no room (EAGAIN: socket memory short
 * machine-wide or in the memory cgroup, the buffer being roomy) is tried
 * again for a while: the room comes back as other sockets free theirs.
 */
static int fill_queue(int sk, int q, const uint8_t *data, size_t len)
{
	const char *name = q == TCP_RECV_QUEUE ? "receive" : "send";
	int tries = 0, sndbuf = 0, outq = 0, err;
	socklen_t optlen = sizeof(sndbuf);
	size_t off = 0;
	ssize_t n;

	if (q >= 0 && select_queue(sk, q))
		return -1;
	while (off < len) {
		n = send(sk, data + off, min((size_t)CHUNK, len - off), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN && tries++ < FILL_TRIES) {
			usleep(FILL_WAIT_US);
			continue;
		}
		if (n <= 0)
			goto err;
		off += n;
	}
	if (tries)
		pr_debug("socket memory: the %s queue took %d tries\n", name, tries);
	return 0;
err:
	err = n ? errno : EPIPE;
	getsockopt(sk, SOL_SOCKET, SO_SNDBUF, &sndbuf, &optlen);
	ioctl(sk, SIOCOUTQ, &outq);
	errno = err;
	pr_perror("%zu of the %zu bytes of the %s queue went in (send buffer %d, %d queued, %d tries)",
		  off, len, name, sndbuf, outq, tries);
	return -1;
}

/*
 * Room for @c's queues while they are refilled. The kernel counts each
 * buffer's whole skb (its truesize), and the refill cuts the bytes into
 * skbs of its own, smaller than the ones the task's writes made: a queue
 * that fit the task's buffer at the dump may not fit it now (a send then
 * fails with EAGAIN), so the buffers are made roomy for the refill, and
 * given their own sizes back once the unsent bytes are out too.
 */
static int roomy(int sk, const InetTcpConn *c)
{
	uint64_t snd = (uint64_t)c->send_queue.len * 4 + (1 << 20);
	uint64_t rcv = (uint64_t)c->recv_queue.len * 4 + (1 << 20);
	int s = min(snd, (uint64_t)INT32_MAX / 2), r = min(rcv, (uint64_t)INT32_MAX / 2);

	return setsockopt(sk, SOL_SOCKET, SO_SNDBUFFORCE, &s, sizeof(s)) ||
	       setsockopt(sk, SOL_SOCKET, SO_RCVBUFFORCE, &r, sizeof(r));
}

static int set_seqs(int sk, const InetTcpConn *c)
{
	uint32_t snd = c->snd_seq - c->send_queue.len, rcv = c->rcv_seq - c->recv_queue.len;

	return select_queue(sk, TCP_SEND_QUEUE) ||
	       setsockopt(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, &snd, sizeof(snd)) ||
	       select_queue(sk, TCP_RECV_QUEUE) ||
	       setsockopt(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, &rcv, sizeof(rcv));
}

static int set_options(int sk, const InetTcpConn *c)
{
	struct tcp_repair_opt o[4];
	struct tcp_repair_window w = {
		.snd_wl1 = c->snd_wl1, .snd_wnd = c->snd_wnd, .max_window = c->max_window,
		.rcv_wnd = c->rcv_wnd, .rcv_wup = c->rcv_wup,
	};
	int n = 0;

	o[n++] = (struct tcp_repair_opt){ TCPOPT_MAXSEG, c->mss };
	if (c->has_snd_wscale)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_WINDOW,
						  c->snd_wscale | (c->rcv_wscale << 16) };
	if (c->sack)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_SACK_PERMITTED, 0 };
	if (c->has_timestamp)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_TIMESTAMP, 0 };
	if (setsockopt(sk, IPPROTO_TCP, TCP_REPAIR_OPTIONS, o, n * sizeof(o[0])) ||
	    (c->has_timestamp &&
	     setsockopt(sk, IPPROTO_TCP, TCP_TIMESTAMP, &c->timestamp, sizeof(c->timestamp))))
		return -1;
	/* what was sent goes back as sent and not acknowledged: retransmitted if need be */
	if (roomy(sk, c) ||
	    fill_queue(sk, TCP_RECV_QUEUE, c->recv_queue.data, c->recv_queue.len) ||
	    fill_queue(sk, TCP_SEND_QUEUE, c->send_queue.data, c->send_queue.len - c->unsent))
		return -1;
	return setsockopt(sk, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, sizeof(w));
}

int tcp_conn_restore(pid_t pid, int sk, const InetSkEntry *e, const struct sockaddr *src,
		     const struct sockaddr *dst, socklen_t len)
{
	const InetTcpConn *c = e->conn;

	if (repair(sk, REPAIR_ON)) {
		pr_perror("Task %d: can't put socket:[%lu] in repair mode (a TCP connection needs "
			  "CAP_NET_ADMIN)", pid, e->ino);
		return -1;
	}
	if (bind(sk, src, len) || set_seqs(sk, c) || connect(sk, dst, len)) {
		pr_perror("Task %d: can't restore the addresses or sequence numbers of TCP "
			  "connection socket:[%lu]", pid, e->ino);
		return -1;
	}
	if (set_options(sk, c)) {
		pr_perror("Task %d: can't restore the queues, options or window of TCP connection "
			  "socket:[%lu]", pid, e->ino);
		return -1;
	}
	if (repair(sk, REPAIR_OFF_NO_WP)) {
		pr_perror("Task %d: can't take socket:[%lu] out of repair mode", pid, e->ino);
		return -1;
	}
	if (c->unsent || fin_out(e->state) || fin_in(e->state))
		return defer_unsent(pid, sk, e);
	return inet_opts_set_bufs(pid, sk, e);
}

/*
 * What was never sent goes out as new data, when the peer's window lets
 * it (in repair mode it would count as sent, and wait for retransmission
 * timeouts, backing off, instead): once every task is restored, so that
 * the peer, when it is in the tree, is there to take it (a segment to a
 * socket not made yet would get a reset). So do the FINs, after it.
 */
struct unsent {
	pid_t pid;
	int sk;
	const InetSkEntry *e;
	libnet_t *ln;		/* the peer's FIN goes through it */
};

static struct unsent *unsent;
static int nr_unsent;

const uint8_t *inet_v4_of(const InetSkEntry *e, const ProtobufCBinaryData *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (e->family == AF_INET)
		return a->data;
	return a->len == 16 && !memcmp(a->data, mapped, 12) ? a->data + 12 : NULL;
}

/* criu's thread enters @sk's network namespace for the socket() and goes back. */
libnet_t *inet_raw_for(pid_t pid, int sk, const InetSkEntry *e)
{
	char err[LIBNET_ERRBUF_SIZE] = "";
	int ns, own, v4 = !!inet_v4_of(e, &e->src_addr);
	struct stat a, b;
	libnet_t *ln = NULL;

	own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = ioctl(sk, SIOCGSKNS);
	if (own < 0 || ns < 0 || fstat(own, &a) || fstat(ns, &b)) {
		pr_perror("Task %d: can't find the network namespace of socket:[%lu]", pid,
			  e->ino);
		goto out;
	}
	if (a.st_ino != b.st_ino && setns(ns, CLONE_NEWNET)) {
		pr_perror("Task %d: can't enter the network namespace of socket:[%lu]", pid,
			  e->ino);
		goto out;
	}
	ln = libnet_init(v4 ? LIBNET_RAW4 : LIBNET_RAW6, NULL, err);
	if (!ln)
		pr_err("Task %d: no raw socket to send socket:[%lu] what it had: %s", pid, e->ino,
		       err);
	if (a.st_ino != b.st_ino && setns(own, CLONE_NEWNET)) {
		pr_perror("Can't go back to criu's network namespace");
		if (ln)
			libnet_destroy(ln);
		ln = NULL;
	}
out:
	if (own >= 0)
		close(own);
	if (ns >= 0)
		close(ns);
	return ln;
}

static int defer_unsent(pid_t pid, int sk, const InetSkEntry *e)
{
	struct unsent *u = xpush(unsent, nr_unsent);

	if (!u)
		return -1;
	u->pid = pid;
	u->e = e;
	u->ln = NULL;
	u->sk = dup(sk);
	if (u->sk < 0) {
		pr_perror("Task %d: can't keep socket:[%lu] for its unsent data", pid, e->ino);
		nr_unsent--;
		return -1;
	}
	if (fin_in(e->state) && !(u->ln = inet_raw_for(pid, sk, e)))
		return -1;	/* tcp_conn_restored() closes it */
	return 0;
}

/* The state of @sk, once it is not @from any more (1 s at most). */
static int state_after(int sk, int from)
{
	struct tcp_info ti;
	socklen_t len;
	int i;

	for (i = 0; i < FILL_TRIES; i++) {
		len = sizeof(ti);
		if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
			return -1;
		if (ti.tcpi_state != from)
			return ti.tcpi_state;
		usleep(FILL_WAIT_US);
	}
	return from;
}

/*
 * The peer's FIN again, from the peer's address and port to the socket:
 * at the sequence number the socket expects next, acknowledging nothing
 * it did not have acknowledged, with the peer's window.
 */
static int peer_fin(const struct unsent *u)
{
	const InetSkEntry *e = u->e;
	const InetTcpConn *c = e->conn;
	uint32_t wnd = c->snd_wnd >> (c->has_snd_wscale ? c->snd_wscale : 0);
	const uint8_t *src = inet_v4_of(e, &e->dst_addr), *dst = inet_v4_of(e, &e->src_addr);
	struct libnet_in6_addr s6, d6;
	int before;

	libnet_clear_packet(u->ln);
	if (libnet_build_tcp(e->dst_port, e->src_port, c->rcv_seq, c->snd_seq - c->send_queue.len,
			     TH_FIN | TH_ACK, min(wnd, 65535U), 0, 0, LIBNET_TCP_H, NULL, 0, u->ln,
			     0) < 0)
		goto err;
	if (src && dst) {
		uint32_t s4, d4;

		memcpy(&s4, src, 4);
		memcpy(&d4, dst, 4);
		if (libnet_build_ipv4(LIBNET_IPV4_H + LIBNET_TCP_H, 0, 0, 0, 64, IPPROTO_TCP, 0, s4,
				      d4, NULL, 0, u->ln, 0) < 0)
			goto err;
	} else {
		memcpy(&s6, e->dst_addr.data, 16);
		memcpy(&d6, e->src_addr.data, 16);
		if (libnet_build_ipv6(0, 0, LIBNET_TCP_H, IPPROTO_TCP, 64, s6, d6, NULL, 0, u->ln,
				      0) < 0)
			goto err;
	}
	before = state_after(u->sk, -1);
	if (libnet_write(u->ln) < 0)
		goto err;
	if (state_after(u->sk, before) == before) {
		pr_err("Task %d: TCP connection socket:[%lu] did not take the peer's FIN again "
		       "(state %d)", u->pid, e->ino, before);
		return -1;
	}
	return 0;
err:
	pr_err("Task %d: can't send the peer's FIN to TCP connection socket:[%lu] again: %s",
	       u->pid, e->ino, libnet_geterror(u->ln));
	return -1;
}

static int our_fin(const struct unsent *u)
{
	if (shutdown(u->sk, SHUT_WR)) {
		pr_perror("Task %d: can't send the FIN of TCP connection socket:[%lu] again",
			  u->pid, u->e->ino);
		return -1;
	}
	return 0;
}

/* Both FINs as they came: the peer's first where it was first (CLOSE_WAIT, LAST_ACK). */
static int fins(const struct unsent *u)
{
	uint32_t st = u->e->state;

	if (st == TCP_CLOSE_WAIT || st == TCP_LAST_ACK)
		return peer_fin(u) || (fin_out(st) && our_fin(u)) ? -1 : 0;
	return (fin_out(st) && our_fin(u)) || (fin_in(st) && peer_fin(u)) ? -1 : 0;
}

int tcp_conn_resume(void)
{
	const InetTcpConn *c;
	int i, ret = 0;

	for (i = 0; i < nr_unsent && !ret; i++) {
		c = unsent[i].e->conn;
		if (c->unsent &&
		    fill_queue(unsent[i].sk, -1, c->send_queue.data + c->send_queue.len - c->unsent,
			       c->unsent)) {
			pr_perror("Task %d: can't queue the %u bytes TCP connection socket:[%lu] "
				  "had not sent yet", unsent[i].pid, c->unsent, unsent[i].e->ino);
			ret = -1;
			break;
		}
		ret = fins(&unsent[i]) || inet_opts_set_bufs(unsent[i].pid, unsent[i].sk,
							      unsent[i].e);
	}
	tcp_conn_restored();
	return ret;
}

void tcp_conn_restored(void)
{
	while (nr_unsent > 0) {
		close(unsent[--nr_unsent].sk);
		if (unsent[nr_unsent].ln)
			libnet_destroy(unsent[nr_unsent].ln);
	}
	free(unsent);
	unsent = NULL;
}
