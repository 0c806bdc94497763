// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: a kind of open file for the fd table (file.c).
 *
 * Every unix socket is saved here with its inode, its peer's inode (from
 * NETLINK_SOCK_DIAG, asked in the task's network namespace; 0 once the
 * peer is closed), its shutdown state, buffer sizes, SO_PEEK_OFF,
 * SO_PASSCRED and what waits in its receive queue. Connected unnamed pairs
 * (socketpair()) are restored here; every other socket (bound, listening,
 * accepted, connected to a bound one, unconnected) also keeps its state,
 * name, socket file and queued connections, and is restored by
 * file-unix-bound.c. Sockets of other families than unix (TCP and UDP
 * are file-inet.c's, asked first), sockets bound to relative paths or
 * whose socket file is gone, and data sent on a connection not accepted
 * yet are refused before anything is changed, with one line naming the
 * task, the fd and the socket.
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
#include <fcntl.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "core/external.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-unix-bound.h"
#include "parts/file-unix-sk.h"
#include "task/ptrace.h"

#define QUEUE_MAX	(1ULL << 31)	/* a sanity bound on what one socket holds */
#define CHUNK		(64 << 10)

struct sk_diag {
	int state, type;
	uint32_t peer;
	int shutdown;
	char name[UNIX_NAME_MAX + 1];	/* for messages: abstract ones as @name */
	char raw[UNIX_NAME_MAX];	/* as bound: abstract ones start with a NUL */
	int named, raw_len;
	int has_vfs, peer_named, deleted;
	char peer_raw[UNIX_NAME_MAX];	/* the peer's name, as raw */
	int peer_raw_len;
	uint32_t vfs_ino, vfs_dev;
	struct stat file;		/* the socket file of a path */
	uint32_t rqueue, wqueue;	/* a listener: connections queued, backlog */
	uint32_t *icons;
	int nr_icons;
};

static int unix_match(const char *link, const struct stat *st)
{
	return S_ISSOCK(st->st_mode) || !strncmp(link, "socket:", 7);
}

/* ------------------------------------------------------ what it is */

static void diag_name(struct sk_diag *sd, const void *data, size_t len)
{
	len = min(len, sizeof(sd->raw));
	memcpy(sd->raw, data, len);
	sd->raw_len = len;
	/* abstract names start with a NUL: shown as @name */
	memcpy(sd->name, data, len);
	if (len && !sd->name[0])
		sd->name[0] = '@';
	sd->name[len] = '\0';
	sd->named = 1;
}

static int diag_icons(struct sk_diag *sd, const void *data, size_t len)
{
	sd->nr_icons = len / sizeof(uint32_t);
	sd->icons = xmalloc((sd->nr_icons + 1) * sizeof(uint32_t));
	if (!sd->icons)
		return -1;
	memcpy(sd->icons, data, sd->nr_icons * sizeof(uint32_t));
	return 0;
}

static int nl_ask(pid_t pid, uint32_t ino, struct sk_diag *sd)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = -1, .udiag_ino = ino,
		       .udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_NAME | UDIAG_SHOW_VFS |
				     UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,
		       .udiag_cookie = { ~0U, ~0U } },
	};
	static char buf[256 << 10];	/* a listener's queue: 4 bytes a connection */
	struct nlmsghdr *h = (void *)buf;
	struct unix_diag_msg *m;
	struct rtattr *a;
	int nl, len;

	nl = sock_diag_open(pid);
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
			diag_name(sd, RTA_DATA(a), RTA_PAYLOAD(a));
			break;
		case UNIX_DIAG_VFS:
			if (RTA_PAYLOAD(a) < sizeof(struct unix_diag_vfs))
				break;
			sd->has_vfs = 1;
			sd->vfs_ino = ((struct unix_diag_vfs *)RTA_DATA(a))->udiag_vfs_ino;
			sd->vfs_dev = ((struct unix_diag_vfs *)RTA_DATA(a))->udiag_vfs_dev;
			break;
		case UNIX_DIAG_RQLEN:
			if (RTA_PAYLOAD(a) < sizeof(struct unix_diag_rqlen))
				break;
			sd->rqueue = ((struct unix_diag_rqlen *)RTA_DATA(a))->udiag_rqueue;
			sd->wqueue = ((struct unix_diag_rqlen *)RTA_DATA(a))->udiag_wqueue;
			break;
		case UNIX_DIAG_ICONS:
			if (diag_icons(sd, RTA_DATA(a), RTA_PAYLOAD(a)))
				return -1;
			break;
		}
	}
	return 0;
}

static int sk_diag(const struct fd_dump *f, uint32_t ino, struct sk_diag *sd)
{
	if (!nl_ask(f->pid, ino, sd))
		return 0;
	pr_perror("Task %d: can't ask the kernel about the unix socket of fd %d "
		  "(socket:[%u]; is unix_diag available?)", f->pid, f->fd, ino);
	return -1;
}

static const char *family_name(int domain)
{
	switch (domain) {
	case AF_NETLINK: return "netlink";
	case AF_PACKET: return "packet";
	case AF_INET: return "IPv4";
	case AF_INET6: return "IPv6";
	default: return "unknown";
	}
}

/*
 * One line on a socket we refuse: TCP and UDP ones are file-inet.c's,
 * what comes here is another kind ("a raw IP socket on 0.0.0.0:1").
 */
static void refuse_other(const struct fd_dump *f, int sk, int domain)
{
	struct sockaddr_storage ss;
	char addr[INET6_ADDRSTRLEN] = "?";
	socklen_t len;
	int type = 0, proto = 0, port = 0;

	len = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_TYPE, &type, &len);
	len = sizeof(int);
	getsockopt(sk, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
	if (domain != AF_INET && domain != AF_INET6) {
		pr_err("Task %d: fd %d is a %s socket (address family %d, type %d, protocol %d; "
		       "%s), which is not supported", f->pid, f->fd, family_name(domain), domain,
		       type, proto, f->link);
		return;
	}
	len = sizeof(ss);
	if (!getsockname(sk, (struct sockaddr *)&ss, &len))
		inet_ntop(domain, domain == AF_INET6 ?
			  (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr :
			  (void *)&((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);	/* sin6_port sits there too */
	pr_err("Task %d: fd %d is a %s %s socket on %s%s%s:%d, protocol %d (%s), which is not "
	       "supported (of network sockets, only TCP, UDP, raw, netlink and packet ones are)",
	       f->pid, f->fd,
	       type == SOCK_RAW ? "raw" : type == SOCK_DGRAM ? "datagram" :
	       type == SOCK_STREAM ? "stream" : "other", family_name(domain),
	       domain == AF_INET6 ? "[" : "", addr, domain == AF_INET6 ? "]" : "", port, proto,
	       f->link);
}

static void sk_diag_free(struct sk_diag *sd)
{
	free(sd->icons);
	sd->icons = NULL;
}

static int kernel_dev_is(uint32_t kdev, dev_t dev)
{
	/* unix_diag gives the kernel's own dev_t (MKDEV: 12 bits of major, 20 of minor) */
	return major(dev) == kdev >> 20 && minor(dev) == (kdev & 0xfffff);
}

/* @path from @pid's root, O_PATH; -1 with errno. */
static int open_in_root(pid_t pid, const char *path)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT };
	char root[64];
	int rfd, fd, err;

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	fd = syscall(SYS_openat2, rfd, path, &how, sizeof(how));
	err = errno;
	close(rfd);
	errno = err;
	return fd;
}

/* Nothing at the path, in a directory that is there: the socket file was deleted. */
static int file_deleted(pid_t pid, const char *path)
{
	char dir[UNIX_NAME_MAX + 2];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash++;
	*slash = '\0';
	fd = open_in_root(pid, dir);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * The socket file of a path-bound socket, as the task sees it, must be its
 * own, or gone (deleted: restored so).
 */
static int check_path(const struct fd_dump *f, struct sk_diag *sd)
{
	int fd;

	if (sd->name[0] != '/') {
		pr_err("Task %d: fd %d is a unix %s socket bound to the relative path %s "
		       "(%s), which is not supported", f->pid, f->fd, unix_type_name(sd->type),
		       sd->name, f->link);
		return -1;
	}
	fd = open_in_root(f->pid, sd->name);
	if (fd < 0 && errno == ENOENT && sd->has_vfs && file_deleted(f->pid, sd->name)) {
		sd->deleted = 1;
		return 0;
	}
	/* another socket file in its place, on the same filesystem: deleted, then made anew */
	if (fd >= 0 && !fstat(fd, &sd->file) && S_ISSOCK(sd->file.st_mode) && sd->has_vfs &&
	    sd->file.st_ino != sd->vfs_ino && kernel_dev_is(sd->vfs_dev, sd->file.st_dev)) {
		close(fd);
		sd->deleted = 1;
		return 0;
	}
	if (fd < 0 || fstat(fd, &sd->file) || !S_ISSOCK(sd->file.st_mode) || !sd->has_vfs ||
	    sd->file.st_ino != sd->vfs_ino || !kernel_dev_is(sd->vfs_dev, sd->file.st_dev)) {
		pr_err("Task %d: fd %d is a unix %s socket bound to %s, whose file was replaced "
		       "or is hidden by another file or mount (%s), which is not supported",
		       f->pid, f->fd, unix_type_name(sd->type), sd->name, f->link);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Refuses, with one line, what can't be saved. */
static int check_unix(const struct fd_dump *f, struct sk_diag *sd)
{
	const char *scm = proc_fdinfo_field(f->fdinfo, "scm_fds:");
	struct sk_diag peer = { 0 };
	int ret = -1;

	if (sk_diag(f, f->st->st_ino, sd))
		return -1;
	if (sd->type != SOCK_STREAM && sd->type != SOCK_DGRAM && sd->type != SOCK_SEQPACKET) {
		pr_err("Task %d: fd %d is a unix socket of type %d (%s), which is not supported",
		       f->pid, f->fd, sd->type, f->link);
		return -1;
	}
	if (sd->state != TCP_ESTABLISHED && sd->state != TCP_CLOSE && sd->state != TCP_LISTEN) {
		pr_err("Task %d: fd %d is a unix %s socket in state %d (%s), which is not "
		       "supported", f->pid, f->fd, unix_type_name(sd->type), sd->state, f->link);
		return -1;
	}
	if (sd->named && sd->raw_len && sd->raw[0] && check_path(f, sd))
		return -1;
	/* what a client sent before its connection was accepted is out of reach */
	if (sd->type != SOCK_DGRAM && sd->state == TCP_ESTABLISHED && !sd->peer && sd->wqueue) {
		pr_err("Task %d: fd %d is a unix %s socket that sent %u bytes on a connection "
		       "not accepted yet (%s), which is not supported", f->pid, f->fd,
		       unix_type_name(sd->type), sd->wqueue, f->link);
		return -1;
	}
	if (sd->peer && sk_diag(f, sd->peer, &peer))
		return -1;
	sd->peer_named = peer.named;
	memcpy(sd->peer_raw, peer.raw, peer.raw_len);
	sd->peer_raw_len = peer.raw_len;
	if (scm && strtoul(scm, NULL, 10)) {
		pr_err("Task %d: fd %d is a unix socket with file descriptors in flight in its "
		       "queue (SCM_RIGHTS; %s), which is not supported", f->pid, f->fd, f->link);
		goto out;
	}
	ret = 0;
out:
	sk_diag_free(&peer);
	return ret;
}

static int unix_check(const struct fd_dump *f)
{
	struct sk_diag sd = { 0 };
	int sk, domain = 0, ret;
	socklen_t len = sizeof(domain);

	sk = ptrace_getfd(f->pid, f->fd);
	if (sk < 0)
		return -1;
	if (getsockopt(sk, SOL_SOCKET, SO_DOMAIN, &domain, &len)) {
		pr_perror("Task %d: can't learn what socket fd %d is", f->pid, f->fd);
		ret = -1;
	} else if (domain != AF_UNIX) {
		refuse_other(f, sk, domain);
		ret = -1;
	} else {
		ret = check_unix(f, &sd);
		sk_diag_free(&sd);
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
			       unix_type_name(sd->type), f->link);
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
		       "queue (SCM_RIGHTS; %s), which is not supported", f->pid, f->fd, f->link);
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

/* Anything but an end of a socketpair(): bound, listening, unconnected, ... */
static int is_bound(const struct sk_diag *sd)
{
	return sd->named || sd->state != TCP_ESTABLISHED || sd->peer_named;
}

static int copy_name(ProtobufCBinaryData *to, const char *raw, int len)
{
	to->len = len;
	to->data = xmalloc(len + 1);
	if (!to->data)
		return -1;
	memcpy(to->data, raw, len);
	return 0;
}

/* May its peer be outside the tree? (--ext-unix-sk, unix[INO] of it or of the peer) */
static int ext_allowed(const struct fd_dump *f, const struct sk_diag *sd)
{
	char ino[24], peer[24];

	if (!f->opts)
		return 0;
	snprintf(ino, sizeof(ino), "%lu", (unsigned long)f->st->st_ino);
	snprintf(peer, sizeof(peer), "%u", sd->peer);
	return f->opts->ext_unix_sk || external_has(f->opts, "unix", ino) ||
	       external_has(f->opts, "unix", peer);
}

static int dump_bound(const struct fd_dump *f, const struct sk_diag *sd, UnixSkEntry *e)
{
	int i;

	e->has_state = 1;
	e->state = sd->state;
	if (sd->named && (e->has_name = 1, copy_name(&e->name, sd->raw, sd->raw_len)))
		return -1;
	if (sd->peer && sd->peer_named) {
		e->has_peer_name = e->has_external = 1;
		e->external = ext_allowed(f, sd);	/* dump_done: is the peer outside? */
		if (copy_name(&e->peer_name, sd->peer_raw, sd->peer_raw_len))
			return -1;
	}
	if (sd->deleted) {
		e->has_vfs_ino = e->has_deleted = e->deleted = 1;
		e->vfs_ino = sd->vfs_ino;
	} else if (sd->named && sd->raw_len && sd->raw[0]) {
		e->has_vfs_ino = e->has_mode = e->has_uid = e->has_gid = 1;
		e->vfs_ino = sd->vfs_ino;
		e->mode = sd->file.st_mode & 07777;
		e->uid = sd->file.st_uid;
		e->gid = sd->file.st_gid;
	}
	if (sd->state != TCP_LISTEN)
		return 0;
	e->has_backlog = 1;
	e->backlog = sd->wqueue;
	e->icons = xmalloc((sd->nr_icons + 1) * sizeof(*e->icons));
	if (!e->icons)
		return -1;
	for (i = 0; i < sd->nr_icons; i++)
		e->icons[i] = sd->icons[i];
	e->n_icons = sd->nr_icons;
	return 0;
}

static int unix_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	struct sk_diag sd = { 0 };
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
	if (check_unix(f, &sd))
		goto out;
	e->ino = f->st->st_ino;
	e->type = sd.type;
	e->peer = sd.peer;
	e->shutdown = sd.shutdown;
	if (is_bound(&sd) && dump_bound(f, &sd, e))
		goto out;
	if (unix_sockopt(sk, SO_SNDBUF, &v) || (e->sndbuf = v, unix_sockopt(sk, SO_RCVBUF, &v)) ||
	    (e->rcvbuf = v, unix_sockopt(sk, SO_PASSCRED, &v)) ||
	    (e->passcred = !!v, unix_sockopt(sk, SO_PEEK_OFF, &e->peek_off))) {
		pr_perror("Task %d: can't read the options of socket fd %d", f->pid, f->fd);
		goto out;
	}
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero))) {
		pr_perror("Task %d: can't peek into socket fd %d", f->pid, f->fd);
		goto out;
	}
	/* a listener's queue holds connections (icons), not data; an unconnected stream none */
	ret = sd.state == TCP_LISTEN || (sd.type != SOCK_DGRAM && sd.state == TCP_CLOSE) ? 0 :
	      read_queue(f, sk, &sd, e);
	/* the task's own peek offset, as it was */
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &e->peek_off, sizeof(e->peek_off))) {
		pr_perror("Task %d: can't put back the peek offset of socket fd %d", f->pid, f->fd);
		ret = -1;
	}
	pr_debug("Task %d: fd %d: unix %s socket %lu, peer %lu, shutdown %u, %zu queued",
		 f->pid, f->fd, unix_type_name(e->type), e->ino, e->peer, e->shutdown, e->n_queue);
out:
	sk_diag_free(&sd);
	close(sk);
	return ret;
}

static void unix_free(FileDesc *d)
{
	size_t i;

	if (!d->usk)
		return;
	free(d->usk->name.data);
	free(d->usk->peer_name.data);
	free(d->usk->icons);
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

	if (unix_bound_dump_done(files, n))
		return -1;
	for (i = 0; i < n; i++) {
		a = files[i].d->usk;
		if (files[i].d->kind != FILE_KIND__FILE_UNIX || !a->peer || unix_is_bound(a))
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
	return unix_is_bound(e) ? unix_bound_validate(pid, d) : 0;
}

/*
 * A pair is named by its lower inode; a lone end (peer closed) by its own;
 * every other socket of the tree is in object 0, restored all at once.
 */
static uint64_t unix_object(const FileDesc *d)
{
	if (unix_is_bound(d->usk))
		return 0;
	return d->usk->peer ? min(d->usk->ino, d->usk->peer) : d->usk->ino;
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

static int unix_open_object(struct rst_ctx *rc, int in_tree, void **data, FileDesc **d, int n,
			    int *fds)
{
	int sk[2], i;

	if (unix_is_bound(d[0]->usk))
		return unix_open_bound(in_tree ? rc->idmap : NULL, data, d, n, fds);
	if (check_pair(d, n))
		return -1;
	if (socketpair(AF_UNIX, d[0]->usk->type | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("Can't create a unix %s socket pair", unix_type_name(d[0]->usk->type));
		return -1;
	}
	/* what waits in a socket was sent by its peer */
	for (i = 0; i < n; i++)
		if (unix_refill(sk[!i], d[i], NULL, 0))
			goto err;
	for (i = 0; i < n; i++)
		if (unix_set_options(sk[i], d[i]))
			goto err;
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

/* A name is bound in the tree's namespaces (its mounts, its abstract names). */
static int unix_in_tree_ns(const FileDesc *d)
{
	return unix_is_bound(d->usk);
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
	.in_tree_ns = unix_in_tree_ns,
	.restored = unix_bound_restored,
};
