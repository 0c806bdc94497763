// SPDX-License-Identifier: GPL-2.0
/*
 * criu page-server: listens on TCP, takes one dump's connection and hands
 * it to the receiver (image/psrecv.c), which writes the images into the
 * images directory (Documentation/page-server.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "core/daemon.h"
#include "core/log.h"
#include "image/image.h"
#include "image/imgout.h"
#include "image/tls.h"

/* The listening socket of --address (any) and --port (0: the kernel picks). */
static int listen_on(const struct opts *o, int *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int sk, one = 1;
	const char *at = o->address ? o->address : "(any)";

	if (ps_sockaddr(o->address, o->port, &ss, &sl)) {
		pr_err("Page server: address %s is not a numeric IPv4 or IPv6 address", at);
		return -1;
	}
	sk = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sk < 0 || setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(sk, (struct sockaddr *)&ss, sl) || listen(sk, 1) ||
	    getsockname(sk, (struct sockaddr *)&ss, &sl)) {
		pr_perror("Page server: can't listen on %s port %d", at, o->port);
		if (sk >= 0)
			close(sk);
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	return sk;
}

static int announce(const struct opts *o, int port)
{
	pr_info("Page server: listening on %s port %d",
		o->address ? o->address : "(any)", port);
	if (o->port == 0) {
		/* the port the kernel picked, for whoever started us */
		printf("%d\n", port);
		fflush(stdout);
	}
	if (o->status_fd >= 0) {
		if (write(o->status_fd, "", 1) != 1)
			pr_perror("Page server: can't write status fd %d", o->status_fd);
		close(o->status_fd);
	}
	return o->restore_detached ? cr_daemonize(o->pidfile) : 0;
}

int page_server_listen(const struct opts *o, int *port)
{
	if (o->port < 0) {
		pr_err("Page server: needs --port (0: any free port)");
		return -1;
	}
	return listen_on(o, port);
}

/* "the dump at ADDR:PORT", for errors */
static void name_peer(int sk, char *buf, size_t len)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (!getpeername(sk, (struct sockaddr *)&ss, &sl)) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
			port = ntohs(in6->sin6_port);
		} else {
			inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
			port = ntohs(in->sin_port);
		}
	}
	snprintf(buf, len, "the dump at %s%s%s:%d", ss.ss_family == AF_INET6 ? "[" : "", a,
		 ss.ss_family == AF_INET6 ? "]" : "", port);
}

/* A TLS record's first byte: a handshake (RFC 8446, 5.1) */
#define TLS_HANDSHAKE	0x16

/*
 * A plain dump at a --tls server (its first frame a HELLO) or a TLS dump
 * at a plain one (a TLS record): refused here, where the peer is known,
 * and said in a plain frame too, which a plain dump reports.
 */
static int mismatch(const struct opts *o, int sk, const char *peer)
{
	static const char plain[] = "this page server runs with --tls: run the dump with --tls";
	static const char tls[] = "this page server runs without --tls";
	uint8_t b = 0;

	if (recv(sk, &b, 1, MSG_PEEK) != 1)
		return 0;	/* said by whoever reads next */
	if (o->tls.on && b == PS_HELLO) {
		pr_err("Page server: %s does not use TLS, and this server runs with --tls", peer);
		ps_send(sk, PS_ERR, 0, plain, sizeof(plain) - 1);
		return 1;
	}
	if (!o->tls.on && b == TLS_HANDSHAKE) {
		pr_err("Page server: %s speaks TLS, and this server runs without --tls", peer);
		ps_send(sk, PS_ERR, 0, tls, sizeof(tls) - 1);
		return 1;
	}
	return 0;
}

/* The socket to read the dump from (--tls: the helper's), or -1 (logged). */
static int tls_accept(const struct opts *o, int sk, struct tls_helper *h)
{
	char peer[INET6_ADDRSTRLEN + 32], who[sizeof(peer) + 16];

	name_peer(sk, peer, sizeof(peer));
	pr_info("Page server: %s connected", peer);
	h->fd = -1;
	if (mismatch(o, sk, peer)) {
		close(sk);
		return -1;
	}
	if (!o->tls.on)
		return sk;
	snprintf(who, sizeof(who), "Page server: %s", peer);
	return tls_wrap(sk, &o->tls, NULL, who, h) ? -1 : h->fd;
}

int page_server_serve(const struct opts *o, int lsk)
{
	int sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC), ret;
	struct tls_helper h;

	close(lsk);
	if (sk < 0) {
		pr_perror("Page server: can't accept the dump's connection");
		return -1;
	}
	sk = tls_accept(o, sk, &h);
	if (sk < 0)
		return -1;
	ret = ps_receive(o->images_dirfd, sk);
	if (h.fd >= 0)
		tls_unwrap(&h);
	else
		close(sk);
	return ret;
}

/*
 * --prev-images-dir: the images received are a round of a pre-dump chain
 * whose previous round this server's images directory names (relative to
 * it); restore follows the link to the pages left there.
 */
int cr_page_server(const struct opts *o)
{
	int lsk, port, ret;

	if (o->prev_images_dir && img_link_parent(o->images_dirfd, o->prev_images_dir))
		return -1;
	lsk = page_server_listen(o, &port);
	if (lsk >= 0 && announce(o, port)) {
		close(lsk);
		lsk = -1;
	}
	ret = lsk < 0 ? -1 : page_server_serve(o, lsk);
	/* no checkpoint here: no link of one either */
	if (ret && o->prev_images_dir)
		unlinkat(o->images_dirfd, "parent", 0);
	return ret;
}
