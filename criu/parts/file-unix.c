// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: a kind of open file for the fd table (file.c).
 *
 * What is supported: connected unnamed unix sockets, stream, datagram and
 * seqpacket, as socketpair() makes them, with the data queued in both
 * directions; also one whose peer was closed. Each socket is saved with
 * its inode, its peer's inode (from NETLINK_SOCK_DIAG; 0 once the peer is
 * closed), its shutdown state, buffer sizes, SO_PEEK_OFF, SO_PASSCRED and
 * what waits in its receive queue. Everything else (network sockets,
 * listening or bound unix sockets, sockets connected to a named one,
 * unconnected ones) is refused before anything is changed, with one line
 * naming the task, the fd and the socket.
 *
 * The receive queue is read without being consumed: criu takes its own
 * reference to the socket (pidfd_getfd()), sets SO_PEEK_OFF to 0 and
 * peeks with MSG_PEEK; each peek then moves the peek offset on, so the
 * whole queue comes out in order, a datagram per peek (its size asked
 * first with MSG_TRUNC and an empty buffer). The task's own peek offset
 * is put back. A queue holding file descriptors in flight (SCM_RIGHTS) or
 * an empty datagram (which a peek offset can't step over) is refused.
 *
 * Restore, in criu before the fork: socketpair(), each queue sent from the
 * peer end into its socket (one send per datagram, so boundaries stay),
 * with the senders' buffers raised meanwhile; then the options, the
 * shutdowns, and a closed peer closed again. The credentials attached to
 * queued messages are criu's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "task/ptrace.h"

#define TCP_ESTABLISHED	1
#define TCP_CLOSE	7
#define TCP_LISTEN	10
#define QUEUE_MAX	(1ULL << 31)	/* a sanity bound on what one socket holds */
#define CHUNK		(64 << 10)

struct sk_diag {
	int state, type;
	uint32_t peer;
	int shutdown;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	int named;
};

static int unix_match(const char *link, const struct stat *st)
{
	return S_ISSOCK(st->st_mode) || !strncmp(link, "socket:", 7);
}

/* ------------------------------------------------------ what it is */

static int nl_ask(uint32_t ino, struct sk_diag *sd)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = -1, .udiag_ino = ino,
		       .udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_NAME,
		       .udiag_cookie = { ~0U, ~0U } },
	};
	char buf[8192];
	struct nlmsghdr *h = (void *)buf;
	struct unix_diag_msg *m;
	struct rtattr *a;
	int nl, len;

	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	if (send(nl, &req, sizeof(req), 0) != sizeof(req)) {
		close(nl);
		return -1;
	}
	len = recv(nl, buf, sizeof(buf), 0);
	close(nl);
	if (len < (int)NLMSG_LENGTH(sizeof(*m)) || !NLMSG_OK(h, len))
		return -1;
	if (h->nlmsg_type == NLMSG_ERROR) {
		errno = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
		return -1;
	}
	m = NLMSG_DATA(h);
	memset(sd, 0, sizeof(*sd));
	sd->state = m->udiag_state;
	sd->type = m->udiag_type;
	len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case UNIX_DIAG_PEER:
			sd->peer = *(uint32_t *)RTA_DATA(a);
			break;
		case UNIX_DIAG_SHUTDOWN:
			sd->shutdown = *(uint8_t *)RTA_DATA(a);
			break;
		case UNIX_DIAG_NAME:
			/* abstract names start with a NUL: shown as @name */
			len = min(RTA_PAYLOAD(a), sizeof(sd->name) - 1);
			memcpy(sd->name, RTA_DATA(a), len);
			if (len && !sd->name[0])
				sd->name[0] = '@';
			sd->name[len] = '\0';
			sd->named = 1;
			break;
		}
	}
	return 0;
}

static int sk_diag(const struct fd_dump *f, uint32_t ino, struct sk_diag *sd)
{
	if (!nl_ask(ino, sd))
		return 0;
	pr_perror("Task %d: can't ask the kernel about the unix socket of fd %d "
		  "(socket:[%u]; is unix_diag available?)", f->pid, f->fd, ino);
	return -1;
}

static const char *type_name(int type)
{
	switch (type) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "datagram";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_RAW: return "raw";
	default: return "unknown-type";
	}
}

/* One line on a socket we refuse: "a listening TCP socket on 0.0.0.0:80". */
static void refuse_inet(const struct fd_dump *f, int sk, int domain)
{
	struct sockaddr_storage ss;
	char addr[INET6_ADDRSTRLEN] = "?";
	socklen_t len;
	int type = 0, proto = 0, listening = 0, port = 0;
	const char *what;

	len = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_TYPE, &type, &len);
	len = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
	len = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
	len = sizeof(ss);
	if (!getsockname(sk, (struct sockaddr *)&ss, &len)) {
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr,
				  sizeof(addr));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr,
				  sizeof(addr));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	if (domain != AF_INET && domain != AF_INET6) {
		pr_err("Task %d: fd %d is a socket of address family %d (%s), which is "
		       "not supported", f->pid, f->fd, domain, f->link);
		return;
	}
	what = proto == IPPROTO_TCP ? "TCP" : proto == IPPROTO_UDP ? "UDP" :
	       type == SOCK_RAW ? "raw IP" : "IP";
	pr_err("Task %d: fd %d is a %s%s%s socket on %s%s%s:%d (%s), which is not "
	       "supported (network sockets are not)", f->pid, f->fd,
	       listening ? "listening " : "", what, domain == AF_INET6 ? "v6" : "",
	       domain == AF_INET6 ? "[" : "", addr, domain == AF_INET6 ? "]" : "", port,
	       f->link);
}

/* Refuses, with one line, what is not a connected pair of unnamed sockets. */
static int check_unix(const struct fd_dump *f, int sk, struct sk_diag *sd)
{
	const char *scm = proc_fdinfo_field(f->fdinfo, "scm_fds:");
	struct sk_diag peer;
	int listening = 0;
	socklen_t len = sizeof(int);

	if (sk_diag(f, f->st->st_ino, sd))
		return -1;
	getsockopt(sk, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
	if (listening || sd->state == TCP_LISTEN) {
		pr_err("Task %d: fd %d is a listening unix %s socket%s%s (%s), which is not "
		       "supported", f->pid, f->fd, type_name(sd->type),
		       sd->named ? " bound to " : "", sd->name, f->link);
		return -1;
	}
	if (sd->named) {
		pr_err("Task %d: fd %d is a unix %s socket bound to %s (%s), which is not "
		       "supported (only unnamed ones are)", f->pid, f->fd, type_name(sd->type),
		       sd->name[0] ? sd->name : "an address", f->link);
		return -1;
	}
	if (sd->state != TCP_ESTABLISHED) {
		pr_err("Task %d: fd %d is a unix %s socket that is not connected (%s), which "
		       "is not supported", f->pid, f->fd, type_name(sd->type), f->link);
		return -1;
	}
	if (sd->type != SOCK_STREAM && sd->type != SOCK_DGRAM && sd->type != SOCK_SEQPACKET) {
		pr_err("Task %d: fd %d is a unix socket of type %d (%s), which is not supported",
		       f->pid, f->fd, sd->type, f->link);
		return -1;
	}
	if (sd->peer && sk_diag(f, sd->peer, &peer))
		return -1;
	if (sd->peer && peer.named) {
		pr_err("Task %d: fd %d is a unix %s socket connected to %s (%s), which is not "
		       "supported (only pairs of unnamed sockets are)", f->pid, f->fd,
		       type_name(sd->type), peer.name[0] ? peer.name : "a named socket", f->link);
		return -1;
	}
	if (scm && strtoul(scm, NULL, 10)) {
		pr_err("Task %d: fd %d is a unix socket with file descriptors in flight in its "
		       "queue (%s), which is not supported", f->pid, f->fd, f->link);
		return -1;
	}
	return 0;
}

static int unix_check(const struct fd_dump *f)
{
	struct sk_diag sd;
	int sk, domain = 0, ret;
	socklen_t len = sizeof(domain);

	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	if (getsockopt(sk, SOL_SOCKET, SO_DOMAIN, &domain, &len)) {
		pr_perror("Task %d: can't learn what socket fd %d is", f->pid, f->fd);
		ret = -1;
	} else if (domain != AF_UNIX) {
		refuse_inet(f, sk, domain);
		ret = -1;
	} else {
		ret = check_unix(f, sk, &sd);
	}
	close(sk);
	return ret;
}

/* ---------------------------------------------------- its queue */

static int add_msg(UnixSkEntry *e, const void *data, size_t len)
{
	ProtobufCBinaryData *q;

	if (xgrow(e->queue, e->n_queue))
		return -1;
	q = &e->queue[e->n_queue];
	q->data = xmalloc(len + 1);
	if (!q->data)
		return -1;
	memcpy(q->data, data, len);
	q->len = len;
	e->n_queue++;
	return 0;
}

/*
 * One peek. Returns its size, or -1 with errno; @fds says that file
 * descriptors came along (they are closed), @trunc that the message was
 * larger than @len.
 */
static ssize_t peek(int sk, void *buf, size_t len, int flags, int *fds, int *trunc)
{
	char cbuf[CMSG_SPACE(64 * sizeof(int))];
	struct iovec iov = { buf, len };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;
	int i, fd;

	n = recvmsg(sk, &m, flags | MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	*fds = !!(m.msg_flags & MSG_CTRUNC);
	*trunc = !!(m.msg_flags & MSG_TRUNC);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		*fds = 1;
		for (i = 0; i < (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int)); i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
	return n;
}

/*
 * The next piece of the queue into *@buf (grown to fit a datagram):
 * returns its size, 0 at the end of the queue, -1 on errors (logged).
 */
static ssize_t next_piece(const struct fd_dump *f, int sk, const struct sk_diag *sd,
			  char **buf, size_t *size)
{
	int fds = 0, trunc = 0;
	ssize_t n, want;
	char *nb;

	if (sd->type == SOCK_STREAM) {
		n = peek(sk, *buf, *size, 0, &fds, &trunc);
	} else {
		/* the datagram's size first: a zero-length buffer takes nothing */
		want = peek(sk, *buf, 0, MSG_TRUNC, &fds, &trunc);
		if (want == 0 && !trunc && !fds) {
			/* a shut down seqpacket socket says 0 at the end of its queue */
			if (sd->type == SOCK_SEQPACKET && (sd->shutdown & 1))
				return 0;
			pr_err("Task %d: fd %d is a unix %s socket with an empty datagram "
			       "queued (%s), which is not supported", f->pid, f->fd,
			       type_name(sd->type), f->link);
			return -1;
		}
		if (want > (ssize_t)*size) {
			nb = xrealloc(*buf, want);
			if (!nb)
				return -1;
			*buf = nb;
			*size = want;
		}
		n = want < 0 ? want : peek(sk, *buf, want, 0, &fds, &trunc);
		if (n >= 0 && n != want) {
			pr_err("Task %d: a datagram of socket fd %d changed while it was read",
			       f->pid, f->fd);
			return -1;
		}
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0) {
		pr_perror("Task %d: can't read the queue of socket fd %d", f->pid, f->fd);
		return -1;
	}
	if (fds) {
		pr_err("Task %d: fd %d is a unix socket with file descriptors in flight in its "
		       "queue (%s), which is not supported", f->pid, f->fd, f->link);
		return -1;
	}
	return n;	/* 0 from a stream: its end, after a shutdown */
}

/* Peeks the whole receive queue, from peek offset 0 on. */
static int read_queue(const struct fd_dump *f, int sk, const struct sk_diag *sd,
		      UnixSkEntry *e)
{
	size_t size = CHUNK, total = 0;
	char *buf = xmalloc(size);
	ssize_t n;
	int ret = -1;

	while (buf) {
		n = next_piece(f, sk, sd, &buf, &size);
		if (n <= 0) {
			ret = n;
			break;
		}
		total += n;
		if (total > QUEUE_MAX) {
			pr_err("Task %d: socket fd %d holds more than %llu bytes", f->pid, f->fd,
			       QUEUE_MAX);
			break;
		}
		if (add_msg(e, buf, n))
			break;
	}
	free(buf);
	return ret;
}

static int get_int(int sk, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(sk, SOL_SOCKET, opt, val, &len);
}

static int unix_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	struct sk_diag sd;
	UnixSkEntry *e;
	int sk, v, zero = 0, ret = -1;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	unix_sk_entry__init(e);
	d->usk = e;
	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	/* checked before, but the peer may have closed since (a frozen peer can't) */
	if (check_unix(f, sk, &sd))
		goto out;
	e->ino = f->st->st_ino;
	e->type = sd.type;
	e->peer = sd.peer;
	e->shutdown = sd.shutdown;
	if (get_int(sk, SO_SNDBUF, &v) || (e->sndbuf = v, get_int(sk, SO_RCVBUF, &v)) ||
	    (e->rcvbuf = v, get_int(sk, SO_PASSCRED, &v)) ||
	    (e->passcred = !!v, get_int(sk, SO_PEEK_OFF, &e->peek_off))) {
		pr_perror("Task %d: can't read the options of socket fd %d", f->pid, f->fd);
		goto out;
	}
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero))) {
		pr_perror("Task %d: can't peek into socket fd %d", f->pid, f->fd);
		goto out;
	}
	ret = read_queue(f, sk, &sd, e);
	/* the task's own peek offset, as it was */
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &e->peek_off, sizeof(e->peek_off))) {
		pr_perror("Task %d: can't put back the peek offset of socket fd %d", f->pid, f->fd);
		ret = -1;
	}
	pr_debug("Task %d: fd %d: unix %s socket %lu, peer %lu, shutdown %u, %zu queued",
		 f->pid, f->fd, type_name(e->type), e->ino, e->peer, e->shutdown, e->n_queue);
out:
	close(sk);
	return ret;
}

static void unix_free(FileDesc *d)
{
	size_t i;

	if (!d->usk)
		return;
	for (i = 0; i < d->usk->n_queue; i++)
		free(d->usk->queue[i].data);
	free(d->usk->queue);
	free(d->usk);
	d->usk = NULL;
}

/* Both ends of every pair are in the tree, and agree. */
static int unix_dump_done(struct file_ref *files, size_t n)
{
	const UnixSkEntry *a, *b;
	size_t i, j;

	for (i = 0; i < n; i++) {
		a = files[i].d->usk;
		if (files[i].d->kind != FILE_KIND__FILE_UNIX || !a->peer)
			continue;
		for (j = 0; j < n; j++)
			if (files[j].d->kind == FILE_KIND__FILE_UNIX &&
			    files[j].d->usk->ino == a->peer)
				break;
		if (j == n) {
			pr_err("Task %d: fd %d is a unix socket (socket:[%lu]) whose peer "
			       "socket:[%lu] is outside the dumped tree, which is not supported",
			       files[i].pid, files[i].fd, a->ino, a->peer);
			return -1;
		}
		b = files[j].d->usk;
		if (b->peer != a->ino || b->type != a->type) {
			pr_err("Task %d: fd %d is a unix socket (socket:[%lu]) connected to "
			       "socket:[%lu], which is connected elsewhere; not supported",
			       files[i].pid, files[i].fd, a->ino, a->peer);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- restore */

static int unix_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const UnixSkEntry *e = d->usk;
	uint64_t total = 0;
	size_t i;

	if (!e || (e->type != SOCK_STREAM && e->type != SOCK_DGRAM &&
		   e->type != SOCK_SEQPACKET) || e->shutdown > 3 || e->peer == e->ino ||
	    e->sndbuf > INT32_MAX || e->rcvbuf > INT32_MAX) {
		pr_err("Task %d: image files.img has an invalid unix socket #%u", pid, d->id);
		return -1;
	}
	for (i = 0; i < e->n_queue; i++)
		total += e->queue[i].len;
	if (total > QUEUE_MAX) {
		pr_err("Task %d: image files.img has a unix socket #%u holding %lu bytes",
		       pid, d->id, total);
		return -1;
	}
	return 0;
}

/* A pair is named by its lower inode; a lone end (peer closed) by its own. */
static uint64_t unix_object(const FileDesc *d)
{
	return d->usk->peer ? min(d->usk->ino, d->usk->peer) : d->usk->ino;
}

static uint64_t queued(const UnixSkEntry *e)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < e->n_queue; i++)
		total += e->queue[i].len;
	return total;
}

/* Sets a buffer size as getsockopt() showed it (the kernel doubles what it is given). */
static int set_buf(int sk, int opt, int force, uint64_t val)
{
	int v = min(val, (uint64_t)INT32_MAX) / 2, cur;

	if (!get_int(sk, opt, &cur) && (uint64_t)cur == val)
		return 0;
	if (!setsockopt(sk, SOL_SOCKET, force, &v, sizeof(v)))
		return 0;
	return setsockopt(sk, SOL_SOCKET, opt, &v, sizeof(v));
}

/* Sends @e's queue from @from into its socket, keeping datagram boundaries. */
static int refill(int from, const FileDesc *d)
{
	const UnixSkEntry *e = d->usk;
	size_t i, off;
	ssize_t n;

	/* the sender's buffer holds what it sent until it is read: make room */
	if (e->n_queue && set_buf(from, SO_SNDBUF, SO_SNDBUFFORCE,
				  2 * queued(e) + e->n_queue * 1024 + (64 << 10))) {
		pr_perror("Can't make room for the queue of socket:[%lu]", e->ino);
		return -1;
	}
	for (i = 0; i < e->n_queue; i++) {
		/* a datagram goes in one send; a stream as it can */
		off = 0;
		do {
			n = send(from, e->queue[i].data + off, e->queue[i].len - off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 || (e->type != SOCK_STREAM && (size_t)n != e->queue[i].len)) {
				pr_perror("Can't put back message %zu (%zu bytes) of socket:[%lu]",
					  i, e->queue[i].len, e->ino);
				return -1;
			}
			off += n;
		} while (off < e->queue[i].len);
	}
	return 0;
}

static int set_options(int sk, const UnixSkEntry *e)
{
	int v = e->passcred;

	if (set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, e->rcvbuf) ||
	    set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, e->sndbuf) ||
	    setsockopt(sk, SOL_SOCKET, SO_PASSCRED, &v, sizeof(v)) ||
	    (e->peek_off >= 0 &&
	     setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &e->peek_off, sizeof(e->peek_off)))) {
		pr_perror("Can't set the options of socket:[%lu]", e->ino);
		return -1;
	}
	if (((e->shutdown & 1) && shutdown(sk, SHUT_RD)) ||
	    ((e->shutdown & 2) && shutdown(sk, SHUT_WR))) {
		pr_perror("Can't shut socket:[%lu] down as it was (%u)", e->ino, e->shutdown);
		return -1;
	}
	return 0;
}

static int check_pair(FileDesc **d, int n)
{
	if (n == 1 && !d[0]->usk->peer)
		return 0;
	if (n == 2 && d[0]->usk->peer == d[1]->usk->ino && d[1]->usk->peer == d[0]->usk->ino &&
	    d[0]->usk->type == d[1]->usk->type)
		return 0;
	pr_err("Image files.img: unix socket:[%lu] has no peer that matches it", d[0]->usk->ino);
	return -1;
}

static int unix_open_object(FileDesc **d, int n, int *fds)
{
	int sk[2], i;

	if (check_pair(d, n))
		return -1;
	if (socketpair(AF_UNIX, d[0]->usk->type | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("Can't create a unix %s socket pair", type_name(d[0]->usk->type));
		return -1;
	}
	/* what waits in a socket was sent by its peer */
	for (i = 0; i < n; i++)
		if (refill(sk[!i], d[i]))
			goto err;
	for (i = 0; i < n; i++)
		if (set_options(sk[i], d[i]->usk) ||
		    fcntl(sk[i], F_SETFL, d[i]->flags & O_NONBLOCK)) {
			pr_perror("Can't set up socket:[%lu]", d[i]->usk->ino);
			goto err;
		}
	/* a peer that was closed is closed again, after it sent the queue */
	if (n == 1)
		close(sk[1]);
	for (i = 0; i < n; i++)
		fds[i] = sk[i];
	return 0;
err:
	close(sk[0]);
	close(sk[1]);
	return -1;
}

const struct file_kind fk_unix = {
	.name = "unix socket",
	.kind = FILE_KIND__FILE_UNIX,
	.match = unix_match,
	.check = unix_check,
	.dump = unix_dump,
	.dump_done = unix_dump_done,
	.free = unix_free,
	.validate = unix_validate,
	.object = unix_object,
	.open_object = unix_open_object,
};
