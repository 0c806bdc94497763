// SPDX-License-Identifier: GPL-2.0
/*
 * criu page-server: listens on TCP, takes one dump's connection and hands
 * it to the receiver (image/psrecv.c), which writes the images into the
 * images directory (Documentation/page-server.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "core/daemon.h"
#include "core/log.h"
#include "image/imgout.h"

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

int page_server_serve(const struct opts *o, int lsk)
{
	int sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC), ret;

	close(lsk);
	if (sk < 0) {
		pr_perror("Page server: can't accept the dump's connection");
		return -1;
	}
	ret = ps_receive(o->images_dirfd, sk);
	close(sk);
	return ret;
}

int cr_page_server(const struct opts *o)
{
	int lsk, port;

	lsk = page_server_listen(o, &port);
	if (lsk < 0)
		return -1;
	if (announce(o, port)) {
		close(lsk);
		return -1;
	}
	return page_server_serve(o, lsk);
}
