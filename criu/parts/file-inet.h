/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_INET_H
#define CRIU_PARTS_FILE_INET_H

/*
 * TCP and UDP sockets: file-inet.c saves and reopens them, file-inet-opt.c
 * their socket options, file-inet-tcp.c established connections.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include "fdinfo.pb-c.h"

/* every option of @e's kind of socket, into @e; -1 logged */
int inet_opts_read(int sk, InetSkEntry *e);
void inet_opts_free(InetSkEntry *e);
/* an image's options are all of the table and of its kind of socket */
int inet_opts_validate(const InetSkEntry *e);
/* set on a new socket, in its task; -1 logged */
int inet_opts_set(pid_t pid, int sk, const InetSkEntry *e);
/* SO_BINDTODEVICE (its link may come later) and TCP_CONGESTION, right before bind() */
int inet_opts_set_late(pid_t pid, int sk, const InetSkEntry *e);

/*
 * --tcp-established: @sk (criu's reference to fd @fd of task @pid) goes
 * into repair mode until tcp_conn_after_dump(), and its state into
 * @e->conn; -1 logged
 */
int tcp_conn_dump(pid_t pid, int fd, int sk, InetSkEntry *e);
void tcp_conn_free(InetSkEntry *e);
/* the dump is over: @runs, the tree goes on (repair mode is left), or it is gone */
void tcp_conn_after_dump(int runs);
/* an image's connection agrees with its socket (1) or not */
int tcp_conn_validate(const InetSkEntry *e);
/* the connection on new socket @sk, its options set; -1 logged */
int tcp_conn_restore(pid_t pid, int sk, const InetSkEntry *e, const struct sockaddr *src,
		     const struct sockaddr *dst, socklen_t len);

#endif
