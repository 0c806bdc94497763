// SPDX-License-Identifier: GPL-2.0-only
/* sk_packet_ring.c with a TPACKET_V1 ring, whose frame status is a long. */
#define RING_VERSION	TPACKET_V1
#include "sk_packet_ring.c"
