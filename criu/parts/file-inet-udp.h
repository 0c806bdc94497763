/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_INET_UDP_H
#define CRIU_PARTS_FILE_INET_UDP_H

/*
 * The datagrams a UDP socket holds not read yet (file-inet-udp.c), for
 * file-inet.c, which saves and reopens the sockets.
 */
#include <sys/types.h>

#include "fdinfo.pb-c.h"

/* @sk (criu's reference to fd @fd of task @pid): its datagrams into @e->rqueue; -1 logged */
int udp_queue_dump(pid_t pid, int fd, int sk, InetSkEntry *e);
void udp_queue_free(InetSkEntry *e);
/* an image's queue agrees with its socket (1) or not */
int udp_queue_validate(const InetSkEntry *e);
/* the restored socket @sk: its datagrams are sent again at udp_queue_resume(); -1 logged */
int udp_queue_restore(pid_t pid, int sk, const InetSkEntry *e);
/* every task restored: each socket gets its datagrams again, in order; -1 logged */
int udp_queue_resume(void);
/* the restore is over (or failed): what udp_queue_resume() would have sent goes */
void udp_queue_restored(void);

#endif
