/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_PACKET_RING_H
#define CRIU_PARTS_FILE_PACKET_RING_H

/* The mmap()ed rings of a packet socket (file-packet-ring.c), for file-packet.c. */
#include <sys/types.h>
#include <linux/packet_diag.h>

#include "packet_sk.pb-c.h"

/* Dump: @r as saved; NULL logged. */
PacketRingEntry *pk_ring_entry(const struct packet_diag_ring *r);
/*
 * Dump: the frames the task owns and the frame the kernel fills next, read
 * through criu's reference @sk to the socket of task @pid; -1 logged, or
 * 0 with *@why set to what makes the rings impossible to save.
 */
int pk_ring_read(pid_t pid, int sk, PacketSkEntry *e, const char **why);
void pk_ring_free(PacketSkEntry *e);

/* Restore: the rings of @e are sane (0), or not (-1). */
int pk_ring_valid(const PacketSkEntry *e);
/* In the task, before its areas are mapped: the rings on new socket @sk; -1 logged. */
int pk_ring_set(pid_t pid, int sk, const PacketSkEntry *e);
/*
 * In criu, before the socket is bound: the kernel's place in the RX ring
 * moved where it was, the frames the task owned put back; the socket drops
 * every packet until its own filter is set (pk_ring_unblock). -1 logged.
 */
int pk_ring_fill(pid_t pid, int sk, const PacketSkEntry *e);
int pk_ring_unblock(pid_t pid, int sk, const PacketSkEntry *e);

#endif
