/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the sk_inet_* tests: IPv4 and IPv6 addresses in one union,
 * sockets bound by address text, options read and set or the test fails.
 */
#ifndef SK_INET_LIB_H
#define SK_INET_LIB_H

#include <arpa/inet.h>
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

#endif
