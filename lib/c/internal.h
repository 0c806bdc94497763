/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef LIBCRIU_INTERNAL_H
#define LIBCRIU_INTERNAL_H

#include <sys/types.h>

#include "criu.h"

struct criu_opts {
	CriuOpts *rpc;
	int (*notify)(char *action, criu_notify_arg_t na);
	enum criu_service_comm comm;
	char *address;		/* CRIU_COMM_SK */
	int fd;			/* CRIU_COMM_FD */
	char *binary;		/* CRIU_COMM_BIN */
	pid_t swrk;		/* the criu of the request under way */
};

/* The options of the criu_set_* calls (criu_init_opts). */
extern criu_opts *libcriu_global;

/* A whole request on a connection of its own: 0 or criu.h's codes. */
int libcriu_call(criu_opts *opts, CriuReq *req, CriuResp **resp);
/* One request on a connection that stays open (criu_dump_iters). */
int libcriu_connect(criu_opts *opts);
int libcriu_call_on(criu_opts *opts, int sk, CriuReq *req, CriuResp **resp);
void libcriu_disconnect(criu_opts *opts, int sk);
/* Frees @resp, sets errno to criu's cr_errno; returns @ret. */
int libcriu_finish(CriuResp *resp, int ret);
int libcriu_orphan_fd(void);

#endif
