/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef ZDTM_SK_PACKET_LO_H
#define ZDTM_SK_PACKET_LO_H

/* For the sk_packet_ring* programs: a frame of protocol @proto on lo. */
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "zdtm.h"

/* from and to lo's address (00:00:00:00:00:00), @text as its payload */
static inline void lo_frame(int out, int proto, const char *text)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = 1,
				  .sll_protocol = htons(proto), .sll_halen = ETH_ALEN };
	unsigned char f[ETH_HLEN + 32] = { 0 };

	*(uint16_t *)(f + 12) = htons(proto);
	memcpy(f + ETH_HLEN, text, strlen(text));
	if (sendto(out, f, sizeof(f), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(f))
		fail_errno("send '%s' on lo", text);
}

#endif
