/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_INET_OPT_H
#define CRIU_PARTS_FILE_INET_OPT_H

/*
 * The socket options of TCP and UDP sockets (file-inet-opt.c), for
 * file-inet.c, which saves and reopens the sockets.
 */
#include <sys/types.h>

#include "fdinfo.pb-c.h"

/* every option of @e's kind of socket, into @e; -1 logged */
int inet_opts_read(int sk, InetSkEntry *e);
void inet_opts_free(InetSkEntry *e);
/* an image's options are all of the table and of its kind of socket */
int inet_opts_validate(const InetSkEntry *e);
/* set on a new socket, in its task; -1 logged */
int inet_opts_set(pid_t pid, int sk, const InetSkEntry *e);
/* SO_SNDBUF and SO_RCVBUF alone, as @e has them (after a TCP queue refill); -1 logged */
int inet_opts_set_bufs(pid_t pid, int sk, const InetSkEntry *e);
/* SO_BINDTODEVICE (its link may come later) and TCP_CONGESTION, right before bind() */
int inet_opts_set_late(pid_t pid, int sk, const InetSkEntry *e);

#endif
