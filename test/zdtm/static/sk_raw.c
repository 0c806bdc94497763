// SPDX-License-Identifier: GPL-2.0-only
/*
 * Raw IP sockets: an ICMP one bound to 127.0.0.1 with ICMP_FILTER (echo
 * replies only) and a classic BPF filter (only this test's echo id); an
 * ICMPv6 one bound to ::1 with ICMP6_FILTER and a BPF filter, O_NONBLOCK;
 * one of protocol 253 with IP_HDRINCL, connected to 127.0.0.1, SO_MARK,
 * shut down for reading.
 * After the restore each has its protocol, addresses and options, and an
 * ICMP echo sent on lo from each ICMP socket comes back to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <linux/filter.h>

#include "zdtm.h"

#ifndef ICMP_FILTER
#define ICMP_FILTER	1	/* linux/icmp.h, which clashes with netinet's */
#endif
#define PROTO_EXP	253	/* RFC 3692's experimental protocol */

static int ropt(int sk, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(sk, level, name, &v, &len))
		fail_errno("getsockopt(%d, %d)", level, name);
	return v;
}

static void rset(int sk, int level, int name, int v)
{
	if (setsockopt(sk, level, name, &v, sizeof(v)))
		fail_errno("setsockopt(%d, %d, %d)", level, name, v);
}

/* accept the ICMP packets whose echo id (at @off) is @id */
static void id_filter(int sk, int off, uint16_t id, struct sock_filter *code)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, off),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	memcpy(code, f, sizeof(f));
	if (setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		fail_errno("SO_ATTACH_FILTER");
}

static void same_filter(int sk, const struct sock_filter *code, const char *what)
{
	struct sock_filter back[8];
	socklen_t len = 8;

	if (getsockopt(sk, SOL_SOCKET, SO_GET_FILTER, back, &len) || len != 4 ||
	    memcmp(back, code, 4 * sizeof(*back)))
		fail("%s: the filter is not as it was (%u instructions)", what, len);
}

static uint16_t csum(const void *data, size_t n)
{
	const uint16_t *p = data;
	uint32_t sum = 0;

	for (; n > 1; n -= 2)
		sum += *p++;
	if (n)
		sum += *(const uint8_t *)p;
	sum = (sum >> 16) + (sum & 0xffff);
	return ~(sum + (sum >> 16));
}

/* an echo request from @sk to @to; the reply of type @reply must come back, at @off */
static void echo(int sk, const struct sockaddr *to, socklen_t tolen, uint16_t id, int v6)
{
	unsigned char req[16] = { v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO, 0 }, buf[256];
	struct pollfd p = { .fd = sk, .events = POLLIN };
	int off = v6 ? 0 : sizeof(struct iphdr);
	ssize_t n;

	*(uint16_t *)(req + 4) = htons(id);
	*(uint16_t *)(req + 6) = htons(1);
	memcpy(req + 8, "zdtm-raw", 8);
	if (!v6)	/* ICMPv6's checksum is the kernel's */
		*(uint16_t *)(req + 2) = csum(req, sizeof(req));
	if (sendto(sk, req, sizeof(req), 0, to, tolen) != sizeof(req))
		fail_errno("send an echo request (v6 %d)", v6);
	if (poll(&p, 1, 5000) != 1)
		fail("no echo reply came (v6 %d)", v6);
	n = recv(sk, buf, sizeof(buf), 0);
	if (n < off + 16 || buf[off] != (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY) ||
	    ntohs(*(uint16_t *)(buf + off + 4)) != id || memcmp(buf + off + 8, "zdtm-raw", 8))
		fail("got %zd bytes, not the echo reply (v6 %d, type %u)", n, v6, buf[off]);
}

/*
 * connect() without a port hides the peer from getpeername(): the socket's
 * line of /proc/net/raw shows it (127.0.0.1, state 01: established)
 */
static int raw_connected_lo(int sk)
{
	char line[256], rem[16];
	unsigned long ino;
	unsigned int st;
	struct stat sb;
	FILE *f = fopen("/proc/net/raw", "r");
	int found = 0;

	if (!f || fstat(sk, &sb))
		fail_errno("/proc/net/raw");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %*x:%*x %15[0-9A-F]:%*x %x %*x:%*x %*x:%*x %*x %*u %*d %lu",
			   rem, &st, &ino) == 3 && ino == sb.st_ino)
			found = st == 1 && !strcmp(rem, "0100007F");
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	struct sockaddr_in lo4 = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) }, a4;
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT },
			    a6;
	struct sock_filter code4[4], code6[4];
	struct icmp6_filter f6, back6;
	uint16_t id = getpid() & 0xffff;
	int r4, r6, rh, icmp_filter;
	struct pollfd p;
	socklen_t len;

	test_init(argc, argv);
	r4 = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	r6 = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	rh = socket(AF_INET, SOCK_RAW, PROTO_EXP);
	if (r4 < 0 || r6 < 0 || rh < 0)
		fail_errno("a raw socket");
	if (bind(r4, (struct sockaddr *)&lo4, sizeof(lo4)) ||
	    bind(r6, (struct sockaddr *)&lo6, sizeof(lo6)))
		fail_errno("bind to loopback");
	icmp_filter = ~(1 << ICMP_ECHOREPLY);
	rset(r4, SOL_RAW, ICMP_FILTER, icmp_filter);
	id_filter(r4, sizeof(struct iphdr) + 4, id, code4);
	ICMP6_FILTER_SETBLOCKALL(&f6);
	ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f6);
	if (setsockopt(r6, IPPROTO_ICMPV6, ICMP6_FILTER, &f6, sizeof(f6)))
		fail_errno("ICMP6_FILTER");
	id_filter(r6, 4, id, code6);
	if (fcntl(r6, F_SETFL, O_NONBLOCK))
		fail_errno("O_NONBLOCK");
	rset(rh, IPPROTO_IP, IP_HDRINCL, 1);
	rset(rh, SOL_SOCKET, SO_MARK, 42);
	if (connect(rh, (struct sockaddr *)&lo4, sizeof(lo4)) || shutdown(rh, SHUT_RD))
		fail_errno("connect the raw socket and shut it down for reading");

	test_ready();
	test_waitsig();

	len = sizeof(a4);
	if (getsockname(r4, (struct sockaddr *)&a4, &len) || a4.sin_addr.s_addr != lo4.sin_addr.s_addr)
		fail("the ICMP socket is not bound to 127.0.0.1");
	len = sizeof(a6);
	if (getsockname(r6, (struct sockaddr *)&a6, &len) ||
	    memcmp(&a6.sin6_addr, &lo6.sin6_addr, sizeof(lo6.sin6_addr)))
		fail("the ICMPv6 socket is not bound to ::1");
	if (!raw_connected_lo(rh))
		fail("the protocol %d socket is not connected to 127.0.0.1", PROTO_EXP);
	if (ropt(r4, SOL_SOCKET, SO_PROTOCOL) != IPPROTO_ICMP ||
	    ropt(r6, SOL_SOCKET, SO_PROTOCOL) != IPPROTO_ICMPV6 ||
	    ropt(rh, SOL_SOCKET, SO_PROTOCOL) != PROTO_EXP ||
	    ropt(r4, SOL_RAW, ICMP_FILTER) != icmp_filter ||
	    ropt(rh, IPPROTO_IP, IP_HDRINCL) != 1 || ropt(r4, IPPROTO_IP, IP_HDRINCL) != 0 ||
	    ropt(rh, SOL_SOCKET, SO_MARK) != 42)
		fail("an option or protocol is not as it was");
	len = sizeof(back6);
	if (getsockopt(r6, IPPROTO_ICMPV6, ICMP6_FILTER, &back6, &len) ||
	    memcmp(&back6, &f6, sizeof(f6)))
		fail("ICMP6_FILTER is not as it was");
	if (!(fcntl(r6, F_GETFL) & O_NONBLOCK) || (fcntl(r4, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK is not as it was");
	p = (struct pollfd){ .fd = rh, .events = POLLRDHUP };
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLRDHUP))
		fail("the protocol %d socket is not shut down for reading", PROTO_EXP);
	p = (struct pollfd){ .fd = r4, .events = POLLRDHUP };
	if (poll(&p, 1, 0) != 0)
		fail("the ICMP socket is shut down");
	same_filter(r4, code4, "the ICMP socket");
	same_filter(r6, code6, "the ICMPv6 socket");
	echo(r4, (struct sockaddr *)&lo4, sizeof(lo4), id, 0);
	echo(r6, (struct sockaddr *)&lo6, sizeof(lo6), id, 1);
	pass();
}
