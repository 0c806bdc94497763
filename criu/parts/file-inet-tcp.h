/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_INET_TCP_H
#define CRIU_PARTS_FILE_INET_TCP_H

/*
 * Established TCP connections through TCP_REPAIR (file-inet-tcp.c), for
 * file-inet.c, which saves and reopens the sockets.
 */
#include <libnet.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fdinfo.pb-c.h"

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
/* 1: a connection in TCP state @state is saved (established, half closed, closing) */
int tcp_conn_state_ok(uint32_t state);
/*
 * The shutdown bits (RCV_SHUTDOWN 1, SEND_SHUTDOWN 2) of connection @e that
 * its FINs, made again by tcp_conn_resume(), give back: not the caller's
 */
unsigned int tcp_conn_fin_bits(const InetSkEntry *e);
/* the connection on new socket @sk, its options set; -1 logged */
int tcp_conn_restore(pid_t pid, int sk, const InetSkEntry *e, const struct sockaddr *src,
		     const struct sockaddr *dst, socklen_t len);

/*
 * every task restored: the bytes connections had never sent go out now,
 * then the FINs of the half-closed ones; -1 logged
 */
int tcp_conn_resume(void);
/* the restore is over (or failed): what tcp_conn_resume() would have sent goes */
void tcp_conn_restored(void);


/*
 * For what the restore sends a socket as if from its peer (a TCP FIN, UDP
 * datagrams): the IPv4 address in @a of @e (AF_INET, or an IPv4-mapped
 * IPv6 one), else NULL; a libnet raw context in @sk's network namespace
 * (IPv4 where @e's own address is one), NULL logged.
 */
const uint8_t *inet_v4_of(const InetSkEntry *e, const ProtobufCBinaryData *a);
libnet_t *inet_raw_for(pid_t pid, int sk, const InetSkEntry *e);

#endif
