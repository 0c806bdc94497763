/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the sk_unix_* tests: paths in the work directory, sockets
 * bound and connected in one call, what a socket holds now.
 */
#ifndef SK_UNIX_LIB_H
#define SK_UNIX_LIB_H

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtm.h"

/* @a: the absolute path of @name in the work directory, nothing there yet. */
static inline void sk_path(struct sockaddr_un *a, const char *name)
{
	char cwd[256];

	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	a->sun_family = AF_UNIX;
	if (snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", cwd, name) >=
	    (int)sizeof(a->sun_path))
		fail("the work directory's path is too long for a socket");
	unlink(a->sun_path);
}

/* A socket of @type, bound to @own and connected to @to where given; -1 on errors. */
static inline int sk_try(int type, const struct sockaddr_un *own, socklen_t olen,
			 const struct sockaddr_un *to, socklen_t tlen)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || (own && bind(sk, (const struct sockaddr *)own, olen)) ||
	    (to && connect(sk, (const struct sockaddr *)to, tlen)))
		return -1;
	return sk;
}

/* @sk, which must be a socket. */
static inline int sk_must(int sk)
{
	if (sk < 0)
		fail_errno("socket");
	return sk;
}

/* sk_try() for paths (sizeof(struct sockaddr_un)); fails the test on errors. */
static inline int sk_make(int type, const struct sockaddr_un *own, const struct sockaddr_un *to)
{
	return sk_must(sk_try(type, own, sizeof(*own), to, sizeof(*to)));
}

/* The next message on @sk, without waiting, is @want. */
static inline int sk_got(int sk, const char *want)
{
	char buf[128] = "";
	ssize_t n = recv(sk, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	return n == (ssize_t)strlen(want) && !memcmp(buf, want, n);
}

static inline void sk_expect(int sk, const char *want, const char *what)
{
	if (!sk_got(sk, want))
		fail("%s: not %s", what, want);
}

/* getsockname() (getpeername() with @peer) is @want, a path. */
static inline int sk_named(int sk, int peer, const struct sockaddr_un *want)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);

	memset(&a, 0, sizeof(a));
	if (peer ? getpeername(sk, (struct sockaddr *)&a, &len) :
		   getsockname(sk, (struct sockaddr *)&a, &len))
		return 0;
	return !strcmp(a.sun_path, want->sun_path);
}

/* A listener has a connection to accept now (a datagram socket, one to read). */
static inline int sk_pending(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

#endif
