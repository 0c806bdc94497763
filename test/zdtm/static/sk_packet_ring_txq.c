// SPDX-License-Identifier: GPL-2.0-only
/* sk_packet_ring_tx.c with frame 3 queued, not sent, at the dump. */
#define QUEUED
#include "sk_packet_ring_tx.c"
