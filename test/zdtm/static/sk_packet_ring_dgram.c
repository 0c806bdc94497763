// SPDX-License-Identifier: GPL-2.0-only
/* sk_packet_ring.c with a datagram socket (no link header in the frames). */
#define RING_TYPE	SOCK_DGRAM
#include "sk_packet_ring.c"
