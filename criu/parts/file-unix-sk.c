// SPDX-License-Identifier: GPL-2.0
/*
 * What both halves of the unix sockets' restore use (file-unix.c for
 * pairs, file-unix-bound.c for the others): their queues sent again and
 * their options set as they were; and the sock_diag socket that unix and
 * network sockets (file-inet.c) are asked about through.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <linux/filter.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-unix-sk.h"

const char *unix_type_name(int type)
{
	switch (type) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "datagram";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_RAW: return "raw";
	default: return "unknown-type";
	}
}


int unix_sockopt(int sk, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(sk, SOL_SOCKET, opt, val, &len);
}


static uint64_t queued(const UnixSkEntry *e)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < e->n_queue; i++)
		total += e->queue[i].len;
	return total;
}


int sk_set_buf(int sk, int opt, int force, uint64_t val)
{
	int v = min(val, (uint64_t)INT32_MAX) / 2, cur;

	if (!unix_sockopt(sk, opt, &cur) && (uint64_t)cur == val)
		return 0;
	if (!setsockopt(sk, SOL_SOCKET, force, &v, sizeof(v)))
		return 0;
	return setsockopt(sk, SOL_SOCKET, opt, &v, sizeof(v));
}


int unix_refill(int from, const FileDesc *d, const struct sockaddr_un *to, socklen_t tolen)
{
	const UnixSkEntry *e = d->usk;
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = to ? tolen : 0 };
	struct iovec iov;
	size_t i, off;
	ssize_t n;

	/* the sender's buffer holds what it sent until it is read: make room */
	if (e->n_queue && sk_set_buf(from, SO_SNDBUF, SO_SNDBUFFORCE,
				  2 * queued(e) + e->n_queue * 1024 + (64 << 10))) {
		pr_perror("Can't make room for the queue of socket:[%lu]", e->ino);
		return -1;
	}
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	for (i = 0; i < e->n_queue; i++) {
		/* a datagram goes in one send; a stream as it can */
		off = 0;
		do {
			iov.iov_base = e->queue[i].data + off;
			iov.iov_len = e->queue[i].len - off;
			n = sendmsg(from, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
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


int unix_set_options(int sk, const FileDesc *d)
{
	const UnixSkEntry *e = d->usk;
	int v = e->passcred;

	if (sk_set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, e->rcvbuf) ||
	    sk_set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, e->sndbuf) ||
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
	if (fcntl(sk, F_SETFL, d->flags & O_NONBLOCK)) {
		pr_perror("Can't set the file flags of socket:[%lu]", e->ino);
		return -1;
	}
	return 0;
}


/* A sock_diag socket in @pid's network namespace: the kernel answers only about its own. */
int sock_diag_open(pid_t pid)
{
	struct stat there, here;
	char path[64];
	int ns, self = -1, nl = -1;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat(path, &there) || stat("/proc/self/ns/net", &here))
		return -1;
	if (there.st_ino == here.st_ino && there.st_dev == here.st_dev)
		return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns >= 0)
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self >= 0 && !setns(ns, CLONE_NEWNET)) {
		nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		if (setns(self, CLONE_NEWNET)) {
			pr_perror("Can't come back to criu's network namespace");
			close(nl);
			nl = -1;
		}
	}
	if (self >= 0)
		close(self);
	if (ns >= 0)
		close(ns);
	return nl;
}


int sock_protoname(pid_t pid, int fd, const char *link, const struct stat *st, char *name,
		   size_t size)
{
	char path[64];
	ssize_t len;

	if (!S_ISSOCK(st->st_mode) && strncmp(link, "socket:", 7))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	len = getxattr(path, "system.sockprotoname", name, size - 1);
	if (len <= 0)
		return -1;
	name[len] = '\0';
	return 0;
}

int sock_protoname_is(pid_t pid, int fd, const char *link, const struct stat *st,
		      const char *want)
{
	char name[32];

	return !sock_protoname(pid, fd, link, st, name, sizeof(name)) && !strcmp(name, want);
}


int sk_filter_read(int sk, uint64_t **insns, size_t *n)
{
	struct sock_filter *f;
	socklen_t len = 0;
	uint64_t *out;
	size_t i;
	char none;

	*insns = NULL;
	*n = 0;
	/* asked with no room, the kernel says how many instructions it holds */
	if (getsockopt(sk, SOL_SOCKET, SO_GET_FILTER, &none, &len))
		return -errno;
	if (!len)
		return 0;
	if (len > BPF_MAXINSNS)
		return -E2BIG;
	f = xmalloc(len * sizeof(*f));
	out = xmalloc(len * sizeof(*out));
	if (!f || !out || getsockopt(sk, SOL_SOCKET, SO_GET_FILTER, f, &len)) {
		i = errno;
		free(f);
		free(out);
		return -(int)(i ? i : ENOMEM);
	}
	for (i = 0; i < len; i++)
		out[i] = (uint64_t)f[i].code << 48 | (uint64_t)f[i].jt << 40 |
			 (uint64_t)f[i].jf << 32 | f[i].k;
	free(f);
	*insns = out;
	*n = len;
	return 0;
}

int sk_filter_valid(const uint64_t *insns, size_t n)
{
	return n <= BPF_MAXINSNS;
}

int sk_filter_set(int sk, const uint64_t *insns, size_t n, int locked)
{
	struct sock_fprog prog = { .len = n };
	struct sock_filter *f;
	int on = 1, ret = 0;
	size_t i;

	if (n) {
		f = xmalloc(n * sizeof(*f));
		if (!f)
			return -1;
		for (i = 0; i < n; i++)
			f[i] = (struct sock_filter){ .code = insns[i] >> 48,
						     .jt = insns[i] >> 40, .jf = insns[i] >> 32,
						     .k = (uint32_t)insns[i] };
		prog.filter = f;
		ret = setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
		free(f);
	}
	if (!ret && locked)
		ret = setsockopt(sk, SOL_SOCKET, SO_LOCK_FILTER, &on, sizeof(on));
	return ret;
}


/* 0: the dump is over, 1: more to read, 2: @one found what it wanted; -1 with errno */
static int diag_parse(struct nlmsghdr *h, int len, int (*one)(struct nlmsghdr *h, void *arg),
		      void *arg)
{
	int r;

	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_DONE)
			return 0;
		if (h->nlmsg_type == NLMSG_ERROR) {
			errno = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
			return -1;
		}
		r = one(h, arg);
		if (r)
			return r < 0 ? -1 : 2;
	}
	return 1;
}

int sock_diag_ask(int nl, const void *req, size_t size,
		  int (*one)(struct nlmsghdr *h, void *arg), void *arg)
{
	static char buf[64 << 10];
	int len, ret = 1;

	if (send(nl, req, size, 0) != (ssize_t)size)
		return -1;
	while (ret == 1) {
		len = recv(nl, buf, sizeof(buf), 0);
		ret = len > 0 ? diag_parse((struct nlmsghdr *)buf, len, one, arg) : -1;
	}
	return ret == 2 ? 1 : ret;
}

int sock_diag_dump(pid_t pid, const void *req, size_t size,
		   int (*one)(struct nlmsghdr *h, void *arg), void *arg)
{
	int nl, ret;

	nl = sock_diag_open(pid);
	if (nl < 0)
		return -1;
	ret = sock_diag_ask(nl, req, size, one, arg);
	close(nl);
	return ret;
}


/* SOL_SOCKET options of an int that netlink and packet sockets keep */
static const int sol_opts[] = {
	SO_PRIORITY, SO_MARK, SO_RCVLOWAT, SO_PASSCRED, SO_TIMESTAMP_OLD, SO_TIMESTAMPNS_OLD,
	SO_TIMESTAMPING_OLD,
};

int sk_opts_read(int sk, SkOptEntry ***out, size_t *n)
{
	size_t i, max = ARRAY_SIZE(sol_opts);
	SkOptEntry **o, *e;
	int v;

	*n = 0;
	o = xzalloc(max * (sizeof(*o) + sizeof(**o)));
	if (!o)
		return -1;
	*out = o;
	e = (SkOptEntry *)(o + max);
	for (i = 0; i < max; i++) {
		if (unix_sockopt(sk, sol_opts[i], &v)) {
			/* not on this kernel, or not for this family (SO_PASSCRED, newer kernels) */
			if (errno == ENOPROTOOPT || errno == EOPNOTSUPP)
				continue;
			return -1;
		}
		sk_opt_entry__init(&e[*n]);
		e[*n].level = SOL_SOCKET;
		e[*n].name = sol_opts[i];
		e[*n].val = v;
		o[*n] = &e[*n];
		(*n)++;
	}
	return 0;
}

int sk_opts_valid(SkOptEntry *const *o, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < ARRAY_SIZE(sol_opts); j++)
			if (o[i]->level == SOL_SOCKET && o[i]->name == (uint32_t)sol_opts[j])
				break;
		if (j == ARRAY_SIZE(sol_opts))
			return 0;
	}
	return 1;
}

int sk_opts_set(int sk, SkOptEntry *const *o, size_t n, uint32_t *failed)
{
	size_t i;
	int cur;

	for (i = 0; i < n; i++) {
		if (!unix_sockopt(sk, o[i]->name, &cur) && cur == o[i]->val)
			continue;
		if (setsockopt(sk, SOL_SOCKET, o[i]->name, &o[i]->val, sizeof(o[i]->val))) {
			*failed = o[i]->name;
			return -1;
		}
	}
	return 0;
}
