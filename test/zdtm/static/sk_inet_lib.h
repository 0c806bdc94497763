/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the sk_inet_* tests: IPv4 and IPv6 addresses in one union,
 * sockets bound by address text, options read and set or the test fails.
 */
#ifndef SK_INET_LIB_H
#define SK_INET_LIB_H

#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "zdtm.h"

union addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

static inline socklen_t addr_len(const union addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in);
}

static inline int sk_new(int family, int type)
{
	int sk = socket(family, type, 0);

	if (sk < 0)
		fail_errno("socket");
	return sk;
}

/* Binds @sk to @ip (v6 when it has a colon), port 0; @a: where it is bound. */
static inline void bind_to(int sk, const char *ip, union addr *a)
{
	socklen_t len;

	memset(a, 0, sizeof(*a));
	if (strchr(ip, ':')) {
		a->in6.sin6_family = AF_INET6;
		inet_pton(AF_INET6, ip, &a->in6.sin6_addr);
	} else {
		a->in.sin_family = AF_INET;
		inet_pton(AF_INET, ip, &a->in.sin_addr);
	}
	len = addr_len(a);
	if (bind(sk, &a->sa, len) || getsockname(sk, &a->sa, &len))
		fail_errno("bind to %s", ip);
}

/* The port of @a, from IPv4's loopback: a dual-stack socket's other half */
static inline void to_v4_loopback(union addr *a)
{
	in_port_t port = a->in6.sin6_port;

	memset(a, 0, sizeof(*a));
	a->in.sin_family = AF_INET;
	a->in.sin_port = port;
	a->in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static inline int opt(int sk, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, level, name, &v, &len))
		fail_errno("getsockopt(%d, %d)", level, name);
	return v;
}

static inline void set(int sk, int level, int name, int v)
{
	if (setsockopt(sk, level, name, &v, sizeof(v)))
		fail_errno("setsockopt(%d, %d, %d)", level, name, v);
}

static inline void same_name(int sk, const union addr *want, const char *what)
{
	union addr a;
	socklen_t len = sizeof(a);

	if (getsockname(sk, &a.sa, &len) || len != addr_len(want) || memcmp(&a, want, len))
		fail("%s is not bound where it was", what);
}

/*
 * Streams of bytes both sides know: byte i of stream @salt is pattern(i,
 * salt) (test_inet_sk.py's peer computes the same).
 */
static inline size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static inline unsigned char pattern(size_t i, int salt)
{
	return (unsigned char)(i * 31 + (i >> 8) + salt);
}

static inline void write_all(int fd, size_t from, size_t n, int salt, const char *what)
{
	unsigned char buf[4096];
	size_t i, k;
	ssize_t w;

	for (i = from; i < from + n; i += k) {
		k = min_sz(sizeof(buf), from + n - i);
		for (size_t j = 0; j < k; j++)
			buf[j] = pattern(i + j, salt);
		w = write(fd, buf, k);
		if (w != (ssize_t)k)
			fail_errno("%s: write", what);
	}
}

/* Reads @n bytes of the stream from offset @from, each as the pattern says. */
static inline void read_check(int fd, size_t from, size_t n, int salt, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char buf[4096];
	size_t got = 0, j;
	ssize_t r;

	while (got < n) {
		if (poll(&p, 1, 5000) != 1)
			fail("%s: %zu of %zu bytes came", what, got, n);
		r = read(fd, buf, min_sz(sizeof(buf), n - got));
		if (r <= 0)
			fail_errno("%s: read after %zu of %zu bytes", what, got, n);
		for (j = 0; j < (size_t)r; j++)
			if (buf[j] != pattern(from + got + j, salt))
				fail("%s: byte %zu is not the one sent", what, from + got + j);
		got += r;
	}
}

#endif
