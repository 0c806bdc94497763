/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_TLS_H
#define CRIU_IMAGE_TLS_H

/*
 * --tls on the page server's connection: the TCP socket goes to the
 * helper criu-tls (GnuTLS; criu/tls/criu-tls.c, next to the criu binary),
 * and criu speaks its plain protocol on the socket returned, as it does
 * on a plain connection (Documentation/page-server.md, "TLS").
 */
#include <sys/types.h>

#include "core/opts.h"

struct tls_helper {
	int fd;		/* criu's plain end; -1: none */
	pid_t pid;
};

/*
 * The handshake on connected @sk as the dump (@host: the server's address,
 * matched against its certificate) or as the page server (@host NULL).
 * @who starts the error line ("Page server A:P"). @sk is closed here
 * (the helper has it). 0: h->fd is the plain end; -1: one error line.
 */
int tls_wrap(int sk, const struct tls_opts *o, const char *host, const char *who,
	     struct tls_helper *h);
/* Closes the plain end and reaps the helper once it has closed TLS. */
void tls_unwrap(struct tls_helper *h);

#endif
