// SPDX-License-Identifier: GPL-2.0-only
/*
 * A packet socket with an mmap()ed TPACKET_V3 RX ring: a raw one for
 * protocol 0x88b5 bound to lo, 4 blocks of 4 KiB retired after 10 ms.
 * Two frames came, one at a time, each in a block of its own (retired by
 * the timer); the program gave block 0 back and still owns block 1. The
 * kernel fills block 2 next.
 * After the restore the ring is mapped where it was, block 1 is still the
 * program's with its frame, block 0 the kernel's, and, once the program
 * gives block 1 back, three new frames come one at a time in blocks 2, 3
 * and 0, in order.
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

#define PROTO		0x88b5
#define BLOCK		4096
#define NR		4

static uint8_t *ring;

static struct tpacket_hdr_v1 *blk(int i)
{
	return &((struct tpacket_block_desc *)(ring + i * BLOCK))->hdr.bh1;
}

/* the payload of the first frame of block @i */
static const char *payload(int i)
{
	struct tpacket3_hdr *h = (void *)((uint8_t *)blk(i) - offsetof(struct tpacket_block_desc, hdr) +
					  blk(i)->offset_to_first_pkt);

	return (const char *)h + h->tp_net;
}

/* block @i becomes the program's, with @text in its one frame */
static void wait_block(int i, const char *text)
{
	struct timespec ts = { 0, 1000000 };
	int ms;

	for (ms = 0; ms < 5000 && !(blk(i)->block_status & TP_STATUS_USER); ms++)
		nanosleep(&ts, NULL);
	if (!(blk(i)->block_status & TP_STATUS_USER))
		fail("'%s' did not come in block %d", text, i);
	if (blk(i)->num_pkts != 1 || strncmp(payload(i), text, strlen(text)))
		fail("block %d has %u frames, the first '%.16s', not '%s'", i, blk(i)->num_pkts,
		     payload(i), text);
}

int main(int argc, char **argv)
{
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO),
				  .sll_ifindex = 1 };
	struct tpacket_req3 req = { .tp_block_size = BLOCK, .tp_block_nr = NR,
				    .tp_frame_size = 2048, .tp_frame_nr = NR * BLOCK / 2048,
				    .tp_retire_blk_tov = 10 };
	static const char *const new[] = { "new-0", "new-1", "new-2" };
	int sk, out, v = TPACKET_V3, i;
	socklen_t len;

	test_init(argc, argv);
	sk = socket(AF_PACKET, SOCK_RAW, htons(PROTO));
	out = socket(AF_PACKET, SOCK_RAW, 0);
	if (sk < 0 || out < 0)
		fail_errno("a packet socket");
	if (bind(sk, (struct sockaddr *)&lo, sizeof(lo)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		fail_errno("the ring");
	ring = mmap(NULL, NR * BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (ring == MAP_FAILED)
		fail_errno("mmap of the ring");
	lo_frame(out, PROTO, "pkt-0");
	wait_block(0, "pkt-0");
	lo_frame(out, PROTO, "pkt-1");
	wait_block(1, "pkt-1");
	blk(0)->block_status = TP_STATUS_KERNEL;
	test_ready();
	test_waitsig();

	len = sizeof(v);
	if (getsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, &len) || v != TPACKET_V3)
		fail("the version is %d, not TPACKET_V3", v);
	if (blk(0)->block_status != TP_STATUS_KERNEL)
		fail("block 0 is not the kernel's (%#x)", blk(0)->block_status);
	wait_block(1, "pkt-1");
	blk(1)->block_status = TP_STATUS_KERNEL;
	for (i = 0; i < 3; i++) {
		lo_frame(out, PROTO, new[i]);
		wait_block((2 + i) % NR, new[i]);
	}
	pass();
	return 0;
}
