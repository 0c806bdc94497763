// SPDX-License-Identifier: GPL-2.0-only
/*
 * UDP datagrams waiting to be read at the dump, in order and with their
 * senders: on a socket bound to 127.0.0.1 (three from two senders, one of
 * them empty), on one bound to [::1], on one bound to the wildcard
 * address, and on one connected to its sender. After the restore each
 * socket reads the same datagrams in the same order, each from the
 * address and port that sent it, and nothing more.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_inet_lib.h"
#include "zdtm.h"

struct sent {
	int at;				/* the socket that holds it */
	const char *msg;
	const union addr *from;
};

static void send_to(int from, const union addr *to, const char *msg)
{
	if (sendto(from, msg, strlen(msg), 0, to ? &to->sa : NULL, to ? addr_len(to) : 0) !=
	    (ssize_t)strlen(msg))
		fail_errno("send '%s'", msg);
}

static int same_addr(const union addr *a, const struct sockaddr_storage *ss)
{
	const union addr *b = (const union addr *)ss;

	if (a->sa.sa_family != b->sa.sa_family)
		return 0;
	if (a->sa.sa_family == AF_INET6)
		return a->in6.sin6_port == b->in6.sin6_port &&
		       !memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, 16);
	return a->in.sin_port == b->in.sin_port && a->in.sin_addr.s_addr == b->in.sin_addr.s_addr;
}

/* The next datagram of @s->at is @s->msg from @s->from. */
static void expect(const struct sent *s, int i)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char buf[64];
	ssize_t n;

	n = recvfrom(s->at, buf, sizeof(buf) - 1, MSG_DONTWAIT, (struct sockaddr *)&ss, &len);
	if (n < 0)
		fail_errno("datagram %d ('%s') is not there", i, s->msg);
	buf[n] = '\0';
	if (strcmp(buf, s->msg))
		fail("datagram %d is '%s', not '%s'", i, buf, s->msg);
	if (!same_addr(s->from, &ss))
		fail("datagram %d ('%s') comes from another address or port", i, s->msg);
}

int main(int argc, char **argv)
{
	union addr r4, r6, any, rc, s1, s2, s6, loop;
	int sk_r4, sk_r6, sk_any, sk_rc, sk_s1, sk_s2, sk_s6, i;
	char c;

	test_init(argc, argv);
	sk_r4 = sk_new(AF_INET, SOCK_DGRAM);
	bind_to(sk_r4, "127.0.0.1", &r4);
	sk_r6 = sk_new(AF_INET6, SOCK_DGRAM);
	bind_to(sk_r6, "::1", &r6);
	sk_any = sk_new(AF_INET, SOCK_DGRAM);
	bind_to(sk_any, "0.0.0.0", &any);
	sk_s1 = sk_new(AF_INET, SOCK_DGRAM);
	bind_to(sk_s1, "127.0.0.1", &s1);
	sk_s2 = sk_new(AF_INET, SOCK_DGRAM);
	bind_to(sk_s2, "127.0.0.1", &s2);
	sk_s6 = sk_new(AF_INET6, SOCK_DGRAM);
	bind_to(sk_s6, "::1", &s6);
	sk_rc = sk_new(AF_INET, SOCK_DGRAM);
	bind_to(sk_rc, "127.0.0.1", &rc);
	if (connect(sk_rc, &s2.sa, addr_len(&s2)))
		fail_errno("connect");
	loop = any;
	loop.in.sin_addr.s_addr = htonl(0x7f000001);

	{
		const struct sent sent[] = {
			{ sk_r4, "one", &s1 }, { sk_r4, "", &s2 }, { sk_r4, "three", &s1 },
			{ sk_r6, "six", &s6 }, { sk_any, "wild", &s1 }, { sk_rc, "conn", &s2 },
		};
		const union addr *to[] = { &r4, &r4, &r4, &r6, &loop, &rc };
		const int from[] = { sk_s1, sk_s2, sk_s1, sk_s6, sk_s1, sk_s2 };

		for (i = 0; i < (int)ARRAY_SIZE(sent); i++)
			send_to(from[i], to[i], sent[i].msg);

		test_ready();
		test_waitsig();

		for (i = 0; i < (int)ARRAY_SIZE(sent); i++)
			expect(&sent[i], i);
	}
	if (recv(sk_r4, &c, 1, MSG_DONTWAIT) >= 0 || recv(sk_rc, &c, 1, MSG_DONTWAIT) >= 0 ||
	    recv(sk_r6, &c, 1, MSG_DONTWAIT) >= 0 || recv(sk_any, &c, 1, MSG_DONTWAIT) >= 0)
		fail("more datagrams than were sent");
	pass();
}
