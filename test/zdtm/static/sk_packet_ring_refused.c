// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packet socket rings criu must refuse to dump (test_packet_ring.py): "v3",
 * a TPACKET_V3 RX ring (bound to 0x88b6 on lo, its blocks retired after
 * 20 s) with a frame in the block the kernel fills; "rxtx", RX and TX
 * rings on one socket; "part", an RX ring whose first page the program
 * unmapped; "txfull", a TX ring of which every frame was sent (the
 * kernel's place in it can't be told); "nofd", an RX ring still mapped
 * after the program closed the socket's only fd.
 * Each ring is mapped; after the refused dump the program still has it,
 * as it was.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "zdtm.h"
#include "sk_packet_lo.h"

#define PROTO	0x88b6
#define NR	4		/* frames of a page each */
#define DATA	(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

static void send_all(int sk, uint8_t *ring)
{
	struct timespec ts = { 0, 1000000 };
	struct tpacket2_hdr *h;
	int i, ms;

	for (i = 0; i < NR; i++) {
		h = (struct tpacket2_hdr *)(ring + i * 4096);
		*(uint16_t *)((uint8_t *)h + DATA + 12) = htons(PROTO);
		h->tp_len = ETH_HLEN + 32;
		h->tp_status = TP_STATUS_SEND_REQUEST;
	}
	if (send(sk, NULL, 0, 0) < 0)
		fail_errno("send through the ring");
	for (i = 0; i < NR; i++) {
		h = (struct tpacket2_hdr *)(ring + i * 4096);
		for (ms = 0; ms < 5000 && h->tp_status != TP_STATUS_AVAILABLE; ms++)
			nanosleep(&ts, NULL);
	}
}

/* a frame in block 0, which the kernel keeps filling (not retired) */
static void one_in_block(int sk, uint8_t *ring)
{
	struct tpacket_hdr_v1 *h = &((struct tpacket_block_desc *)ring)->hdr.bh1;
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_ifindex = 1,
				  .sll_protocol = htons(PROTO) };
	struct timespec ts = { 0, 1000000 };
	int out = socket(AF_PACKET, SOCK_RAW, 0), ms;

	if (bind(sk, (struct sockaddr *)&lo, sizeof(lo)) || out < 0)
		fail_errno("a socket for the V3 ring");
	lo_frame(out, PROTO, "v3");
	for (ms = 0; ms < 5000 && !__atomic_load_n(&h->num_pkts, __ATOMIC_ACQUIRE); ms++)
		nanosleep(&ts, NULL);
	if (h->num_pkts != 1 || h->block_status != TP_STATUS_KERNEL)
		fail("block 0 has %u frames, status %#x", h->num_pkts, h->block_status);
	close(out);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_ifindex = 1 };
	struct tpacket_req3 req = { .tp_block_size = 4096, .tp_block_nr = NR,
				    .tp_frame_size = 4096, .tp_frame_nr = NR,
				    .tp_retire_blk_tov = 20000 };
	int v = strcmp(what, "v3") ? TPACKET_V2 : TPACKET_V3, rx = strcmp(what, "txfull");
	size_t size = NR * 4096 * (strcmp(what, "rxtx") ? 1 : 2);
	uint8_t *ring, *keep;
	socklen_t len;

	test_init(argc, argv);
	int sk = socket(AF_PACKET, SOCK_RAW, 0);

	if (sk < 0 || bind(sk, (struct sockaddr *)&lo, sizeof(lo)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		fail_errno("a packet socket");
	if ((rx && setsockopt(sk, SOL_PACKET, PACKET_RX_RING, &req,
			      v == TPACKET_V3 ? sizeof(req) : sizeof(struct tpacket_req))) ||
	    ((!rx || !strcmp(what, "rxtx")) &&
	     setsockopt(sk, SOL_PACKET, PACKET_TX_RING, &req, sizeof(struct tpacket_req))))
		fail_errno("the rings (%s)", what);
	ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (ring == MAP_FAILED)
		fail_errno("mmap of the rings");
	keep = ring;
	if (!strcmp(what, "part")) {
		if (munmap(ring, 4096))
			fail_errno("munmap of a page of the ring");
		keep = ring + 4096;
	}
	if (!rx)
		send_all(sk, ring);
	if (!strcmp(what, "nofd"))
		close(sk);
	if (v == TPACKET_V3)
		one_in_block(sk, ring);
	keep[100] = 'k';
	test_ready();
	test_waitsig();
	len = sizeof(v);
	if (keep[100] != 'k' || (strcmp(what, "nofd") &&
				 (getsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, &len) ||
				  v != (strcmp(what, "v3") ? TPACKET_V2 : TPACKET_V3))))
		fail("the ring is not as it was");
	pass();
	return 0;
}
