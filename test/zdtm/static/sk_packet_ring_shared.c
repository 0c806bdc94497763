// SPDX-License-Identifier: GPL-2.0-only
/* sk_packet_ring.c with a child that maps the ring too. */
#define SHARED
#include "sk_packet_ring.c"
