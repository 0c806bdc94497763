// SPDX-License-Identifier: GPL-2.0-only
/*
 * A packet socket with an mmap()ed TX ring (TPACKET_V2): a raw one bound
 * to lo, 8 frames of 2 KiB in 4 blocks. Three frames were sent through it
 * (frames 0, 1, 2) and read by a datagram socket for protocol 0x88b6 on lo.
 * With QUEUED, frame 3 was queued (TP_STATUS_SEND_REQUEST) and not sent.
 * After the restore the ring is mapped where it was with the frames as
 * they were, and the next two frames the program queues (3, unless it was,
 * and 4) are the ones the kernel sends: the datagram socket gets them, in
 * order.
 */
#include <poll.h>
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

#define PROTO		0x88b6
#define FRAME		2048
#define BLOCK		4096
#define NR		8
#define DATA		(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

static uint8_t *ring;

static struct tpacket2_hdr *hdr(int i)
{
	return (struct tpacket2_hdr *)(ring + (i / (BLOCK / FRAME)) * BLOCK +
				       (i % (BLOCK / FRAME)) * FRAME);
}

static void queue(int i, const char *text)
{
	struct tpacket2_hdr *h = hdr(i);
	uint8_t *f = (uint8_t *)h + DATA;

	if (h->tp_status != TP_STATUS_AVAILABLE)
		fail("frame %d is not free (%#x)", i, h->tp_status);
	memset(f, 0, ETH_HLEN + 32);
	*(uint16_t *)(f + 12) = htons(PROTO);
	memcpy(f + ETH_HLEN, text, strlen(text));
	h->tp_len = ETH_HLEN + 32;
	__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
}

static void flush(int sk, int from, int to)
{
	struct timespec ts = { 0, 1000000 };
	int i, ms;

	if (send(sk, NULL, 0, 0) < 0)
		fail_errno("send through the ring");
	for (i = from; i < to; i++) {
		for (ms = 0; ms < 5000 && hdr(i)->tp_status != TP_STATUS_AVAILABLE; ms++)
			nanosleep(&ts, NULL);
		if (hdr(i)->tp_status != TP_STATUS_AVAILABLE)
			fail("frame %d was not sent (%#x)", i, hdr(i)->tp_status);
	}
}

static void got(int sk, const char *text)
{
	struct pollfd p = { .fd = sk, .events = POLLIN };
	char buf[64];
	ssize_t n;

	if (poll(&p, 1, 5000) != 1)
		fail("'%s' did not come", text);
	n = recv(sk, buf, sizeof(buf), 0);
	if (n < (ssize_t)strlen(text) || memcmp(buf, text, strlen(text)))
		fail("'%.16s' came, not '%s'", n > 0 ? buf : "", text);
}

int main(int argc, char **argv)
{
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_ifindex = 1 };
	struct tpacket_req req = { .tp_block_size = BLOCK, .tp_block_nr = NR * FRAME / BLOCK,
				   .tp_frame_size = FRAME, .tp_frame_nr = NR };
	static const char *const text[] = { "tx-0", "tx-1", "tx-2", "tx-3", "tx-4" };
	int sk, rx, v = TPACKET_V2, i;

	test_init(argc, argv);
	sk = socket(AF_PACKET, SOCK_RAW, 0);
	rx = socket(AF_PACKET, SOCK_DGRAM, htons(PROTO));
	if (sk < 0 || rx < 0)
		fail_errno("a packet socket");
	if (bind(sk, (struct sockaddr *)&lo, sizeof(lo)))
		fail_errno("bind to lo");
	lo.sll_protocol = htons(PROTO);
	if (bind(rx, (struct sockaddr *)&lo, sizeof(lo)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)))
		fail_errno("the ring");
	ring = mmap(NULL, NR * FRAME, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (ring == MAP_FAILED)
		fail_errno("mmap of the ring");
	for (i = 0; i < 3; i++)
		queue(i, text[i]);
	flush(sk, 0, 3);
	for (i = 0; i < 3; i++)
		got(rx, text[i]);
#ifdef QUEUED
	queue(3, text[3]);
#endif
	test_ready();
	test_waitsig();

	for (i = 0; i < 3; i++)
		if (hdr(i)->tp_status != TP_STATUS_AVAILABLE || hdr(i)->tp_len != ETH_HLEN + 32 ||
		    memcmp((uint8_t *)hdr(i) + DATA + ETH_HLEN, text[i], 4))
			fail("frame %d is not as the program wrote it", i);
#ifdef QUEUED
	if (hdr(3)->tp_status != TP_STATUS_SEND_REQUEST)
		fail("frame 3 is no longer queued (%#x)", hdr(3)->tp_status);
#else
	queue(3, text[3]);
#endif
	queue(4, text[4]);
	flush(sk, 3, 5);
	got(rx, text[3]);
	got(rx, text[4]);
	pass();
	return 0;
}
