// SPDX-License-Identifier: GPL-2.0-only
/*
 * A packet socket with an mmap()ed RX ring (TPACKET_V2; RING_VERSION picks
 * another, RING_TYPE a datagram socket): a raw one for protocol 0x88b5
 * bound to lo, 8 frames of 2 KiB in
 * 4 blocks, a filter that keeps frames whose payload starts with 'p' or 'n'.
 * Five frames come; the program releases the first two and still owns the
 * other three, whose order it keeps in its own index (2). A frame its
 * filter drops comes last.
 * After the restore the ring is mapped where it was, the three frames are
 * still the program's, with their data, the two released ones the
 * kernel's; once it releases them, five new frames come in the ring where
 * the kernel would have put them: frames 5, 6, 7, 0, 1, in order; and
 * PACKET_STATISTICS, read (cleared) before the dump, counts nothing.
 * With SHARED, a child forked before the dump maps the ring too (and has
 * the socket's fd): after the restore it sees the three frames the
 * program owns, and a byte it writes in the ring the program reads.
 */
#include <poll.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "zdtm.h"
#include "sk_packet_lo.h"
#ifdef SHARED
#include "files_lib.h"
#endif

#ifndef RING_VERSION
#define RING_VERSION	TPACKET_V2
#endif
#ifndef RING_TYPE
#define RING_TYPE	SOCK_RAW
#endif
/* where the payload starts for the filter: a datagram socket sees no link header */
#define PAYLOAD		(RING_TYPE == SOCK_RAW ? ETH_HLEN : 0)
#define PROTO		0x88b5
#define FRAME		2048
#define BLOCK		4096
#define NR		8

static uint8_t *ring;

static volatile uint32_t *status(int i)
{
	return (volatile uint32_t *)(ring + (i / (BLOCK / FRAME)) * BLOCK + (i % (BLOCK / FRAME)) * FRAME);
}

/* the payload of frame @i, past its headers */
static const char *payload(int i)
{
	uint8_t *f = (uint8_t *)status(i);

	if (RING_VERSION == TPACKET_V1)
		return (const char *)f + ((struct tpacket_hdr *)f)->tp_net;
	return (const char *)f + ((struct tpacket2_hdr *)f)->tp_net;
}

/* frame @i becomes the program's, with @text */
static void wait_frame(int i, const char *text)
{
	struct timespec ts = { 0, 1000000 };
	int ms;

	for (ms = 0; ms < 5000 && !(*status(i) & TP_STATUS_USER); ms++)
		nanosleep(&ts, NULL);
	if (!(*status(i) & TP_STATUS_USER))
		fail("'%s' did not come in frame %d", text, i);
	if (strncmp(payload(i), text, strlen(text)))
		fail("frame %d has '%.16s', not '%s'", i, payload(i), text);
}

#ifdef SHARED
static const char *child_check(void)
{
	int i;

	for (i = 2; i < 5; i++)
		if (!(*status(i) & TP_STATUS_USER) || strncmp(payload(i), i == 2 ? "pkt-2" :
							     i == 3 ? "pkt-3" : "pkt-4", 5))
			return "the child does not see the frames the program owns";
	ring[NR * FRAME - 1] = 'c';
	return NULL;
}
#endif

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, PAYLOAD),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'p', 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'n', 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = 5, .filter = code };
	struct sockaddr_ll lo = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO),
				  .sll_ifindex = 1 };
	struct tpacket_req req = { .tp_block_size = BLOCK, .tp_block_nr = NR * FRAME / BLOCK,
				   .tp_frame_size = FRAME, .tp_frame_nr = NR };
	static const char *const old[] = { "pkt-0", "pkt-1", "pkt-2", "pkt-3", "pkt-4" };
	static const char *const new[] = { "new-0", "new-1", "new-2", "new-3", "new-4" };
	int sk, out, v = RING_VERSION, i;
	struct tpacket_stats st;
	uint8_t *before;
	socklen_t len;

	test_init(argc, argv);
	sk = socket(AF_PACKET, RING_TYPE, htons(PROTO));
	out = socket(AF_PACKET, SOCK_RAW, 0);
	if (sk < 0 || out < 0)
		fail_errno("a packet socket");
	if (bind(sk, (struct sockaddr *)&lo, sizeof(lo)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(sk, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) ||
	    setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		fail_errno("the ring");
	ring = mmap(NULL, NR * FRAME, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (ring == MAP_FAILED)
		fail_errno("mmap of the ring");
	before = ring;
	for (i = 0; i < 5; i++) {
		lo_frame(out, PROTO, old[i]);
		wait_frame(i, old[i]);
	}
	lo_frame(out, PROTO, "x: the filter drops it");
	*status(0) = TP_STATUS_KERNEL;
	*status(1) = TP_STATUS_KERNEL;
	len = sizeof(st);
	if (getsockopt(sk, SOL_PACKET, PACKET_STATISTICS, &st, &len))	/* clears them */
		fail_errno("PACKET_STATISTICS");
#ifdef SHARED
	pid_t child = fork_checker(NULL, child_check);
#endif
	test_ready();
	test_waitsig();
#ifdef SHARED
	end_checker(child);
	if (ring[NR * FRAME - 1] != 'c')
		fail("the child's ring is not the program's");
#endif

	len = sizeof(v);
	if (getsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, &len) || v != RING_VERSION)
		fail("the version is %d, not %d", v, RING_VERSION);
	len = sizeof(st);
	if (getsockopt(sk, SOL_PACKET, PACKET_STATISTICS, &st, &len) || st.tp_packets ||
	    st.tp_drops)
		fail("PACKET_STATISTICS counts %u packets, %u drops since it was read", st.tp_packets,
		     st.tp_drops);
	if (*status(0) != TP_STATUS_KERNEL || *status(1) != TP_STATUS_KERNEL)
		fail("a released frame is not the kernel's (%#x, %#x)", *status(0), *status(1));
	for (i = 2; i < 5; i++) {
		if (!(*status(i) & TP_STATUS_USER))
			fail("frame %d is no longer the program's (%#x)", i, *status(i));
		if (strncmp(payload(i), old[i], strlen(old[i])))
			fail("frame %d has '%.16s', not '%s'", i, payload(i), old[i]);
		*status(i) = TP_STATUS_KERNEL;
	}
	if (*status(5) != TP_STATUS_KERNEL)
		fail("frame 5 has '%.16s' before anything was sent", payload(5));
	for (i = 0; i < 5; i++) {
		lo_frame(out, PROTO, i == 2 ? "x: dropped" : new[i]);
		if (i == 2)
			lo_frame(out, PROTO, new[i]);
		wait_frame((5 + i) % NR, new[i]);
	}
	if (ring != before)
		fail("the ring moved");
	pass();
	return 0;
}
