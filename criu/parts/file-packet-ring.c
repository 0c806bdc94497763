// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap()ed rings of a packet socket (PACKET_RX_RING, PACKET_TX_RING),
 * for file-packet.c.
 *
 * A ring is frames in blocks of pages the kernel allocates with the ring
 * (setsockopt()) and the task maps; each frame starts with a header whose
 * first word, tp_status, says who owns it. RX: TP_STATUS_KERNEL (0), free
 * for the kernel to fill, or TP_STATUS_USER, filled and not released yet
 * by the task. TX: TP_STATUS_AVAILABLE (0), the task's to write, or
 * TP_STATUS_SEND_REQUEST, queued for the next send(). The kernel walks
 * the frames in order from its place in the ring, which starts at frame 0
 * with the ring and which user space can neither read nor set: RX, it
 * stops (drops packets) at a frame the task still owns; TX, it sends from
 * its place up to the first frame not queued.
 *
 * Dump (TPACKET_V1, V2; criu maps the rings itself, another mapping of the
 * same pages): RX, the frames the task owns, whole, and the kernel's place:
 * the frame after the one filled last, the one of the latest timestamp (a
 * frame the task released keeps its header); a frame the kernel was
 * filling right then (a packet that came while the tree was frozen) is
 * lost, as any packet in flight. TX, the whole ring, and the kernel's
 * place: the first frame queued, or, none queued, the first never used,
 * the task having used them from 0 in order (as packet_mmap.rst shows);
 * a frame the kernel was sending counts as sent. TPACKET_V3 RX rings go
 * by blocks (the kernel fills one block, retires it to the task when full
 * or when its retire timer fires, and opens the next): saved are the
 * blocks the task owns, whole, and the kernel's place is the block it
 * opened last, of the highest sequence number, which must be empty.
 *
 * Restore: the task sets the rings up on its new socket, before its memory
 * areas are mapped (mm.c maps them again from the task's fd). Then criu
 * moves the kernel's place where it was. RX: bound to lo with protocol
 * PRIME_PROTO, the socket sends itself that many frames through lo, each
 * waited for in its frame (V3: in its block, retired by the timer); a
 * filter that drops everything then keeps the
 * ring still while criu clears those frames and writes back the ones the
 * task owned; the socket is bound as it was and gets its own filter. TX:
 * that many frames of protocol PRIME_PROTO queued from frame 0 and sent
 * through lo at once, then the ring as the task wrote it. Whoever captures
 * on lo or listens to PRIME_PROTO there sees those frames.
 *
 * Refused, by name: a TPACKET_V3 block the kernel fills that holds packets
 * (not the task's yet; the kernel's offset in the block can't be set) or
 * a full V3 ring, TPACKET_V3 TX rings, RX and TX rings on one socket,
 * rings mapped in part, RX frames of equal timestamps and a TX ring whose
 * frames were all used (the kernel's place can't be told). The sequence
 * numbers of the blocks the kernel opens after a restore start again at
 * 1, and its retire timer starts anew.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-packet-ring.h"
#include "proc/proc.h"

/*
 * the ethertype of the frames that move the kernel's place: one IEEE
 * reserves, which no protocol uses, so that no other socket bound to a
 * protocol gets them (only captures of every protocol on lo see them)
 */
#define PRIME_PROTO	0xffff
#define RING_MAX	(1ULL << 30)	/* a sanity bound on a ring's bytes */
#define PRIME_WAIT_MS	2000		/* for one frame sent through lo */

struct ring {
	uint8_t *map;		/* every ring of the socket (RX first): what mmap() takes */
	uint64_t size;
	uint8_t *base;		/* this ring's first block */
	uint32_t fsize, bsize, fpb, nr;
	int v1;			/* TPACKET_V1: tp_status is a long */
	int v3;			/* TPACKET_V3: a "frame" here is a block */
	uint32_t tov;		/* V3: the retire timer, ms */
};

static int version_of(const PacketSkEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_opts; i++)
		if (e->opts[i]->name == PACKET_VERSION)
			return e->opts[i]->val;
	return TPACKET_V1;
}

static uint64_t ring_bytes(const PacketRingEntry *r)
{
	return r ? (uint64_t)r->block_size * r->block_nr : 0;
}

/* Maps every ring of @sk, @g the RX one (@tx: the TX one); -1 with errno. */
static int ring_map(int sk, const PacketSkEntry *e, int tx, int prot, struct ring *g)
{
	const PacketRingEntry *r = tx ? e->tx_ring : e->rx_ring;

	g->size = ring_bytes(e->rx_ring) + ring_bytes(e->tx_ring);
	g->v1 = version_of(e) == TPACKET_V1;
	g->v3 = version_of(e) == TPACKET_V3;
	g->fsize = g->v3 ? r->block_size : r->frame_size;
	g->bsize = r->block_size;
	g->fpb = r->block_size / g->fsize;
	g->nr = g->v3 ? r->block_nr : r->frame_nr;
	g->tov = r->retire_blk_tov;
	g->map = mmap(NULL, g->size, prot, MAP_SHARED, sk, 0);
	g->base = g->map + (tx ? ring_bytes(e->rx_ring) : 0);
	return g->map == MAP_FAILED ? -1 : 0;
}

static uint8_t *frame_at(const struct ring *g, uint32_t i)
{
	return g->base + (uint64_t)(i / g->fpb) * g->bsize + (uint64_t)(i % g->fpb) * g->fsize;
}

static struct tpacket_hdr_v1 *block_hdr(const struct ring *g, uint32_t i)
{
	return &((struct tpacket_block_desc *)frame_at(g, i))->hdr.bh1;
}

/* the status word of frame (V3: block) @i */
static uint32_t *status_word(const struct ring *g, uint32_t i)
{
	/* the low word of V1's long: little-endian */
	return g->v3 ? &block_hdr(g, i)->block_status : (uint32_t *)frame_at(g, i);
}

static unsigned long frame_status(const struct ring *g, uint32_t i)
{
	const uint8_t *f = frame_at(g, i);

	if (g->v3)
		return block_hdr(g, i)->block_status;
	return g->v1 ? ((const struct tpacket_hdr *)f)->tp_status :
		       ((const struct tpacket2_hdr *)f)->tp_status;
}

/* when the kernel filled frame @i (ns); 0: never filled */
static uint64_t frame_time(const struct ring *g, uint32_t i)
{
	const struct tpacket_hdr *h1 = (const void *)frame_at(g, i);
	const struct tpacket2_hdr *h2 = (const void *)h1;

	if (g->v1)
		return h1->tp_mac ? h1->tp_sec * 1000000000ULL + h1->tp_usec * 1000ULL + 1 : 0;
	return h2->tp_mac ? h2->tp_sec * 1000000000ULL + h2->tp_nsec + 1 : 0;
}

/* ------------------------------------------------------ dump */

PacketRingEntry *pk_ring_entry(const struct packet_diag_ring *r)
{
	PacketRingEntry *e = xzalloc(sizeof(*e));

	if (!e)
		return NULL;
	packet_ring_entry__init(e);
	e->block_size = r->pdr_block_size;
	e->block_nr = r->pdr_block_nr;
	e->frame_size = r->pdr_frame_size;
	e->frame_nr = r->pdr_frame_nr;
	e->has_retire_blk_tov = e->has_sizeof_priv = e->has_feature_req_word = 1;
	e->retire_blk_tov = r->pdr_retire_tmo;
	e->sizeof_priv = r->pdr_sizeof_priv;
	e->feature_req_word = r->pdr_features;
	return e;
}

/* every mapping of the socket in task @pid is of all its rings */
static int mapped_whole(pid_t pid, const PacketSkEntry *e, uint64_t size, const char **why)
{
	struct proc_maps maps;
	int i;

	if (proc_read_maps(pid, 0, &maps))
		return -1;
	for (i = 0; i < maps.nr; i++)
		if (maps.vma[i].ino == e->ino && maps.vma[i].path &&
		    !strncmp(maps.vma[i].path, "socket:[", 8) &&
		    (maps.vma[i].pgoff || maps.vma[i].end - maps.vma[i].start != size))
			*why = "with its rings mapped in part, which is not supported";
	proc_maps_free(&maps);
	return 0;
}

static int save_frame(PacketSkEntry *e, const struct ring *g, uint32_t i)
{
	PacketFrameEntry *fe;
	void *more;

	more = realloc(e->rx_frames, (e->n_rx_frames + 1) * sizeof(*e->rx_frames));
	if (!more)
		return -1;
	e->rx_frames = more;
	fe = xzalloc(sizeof(*fe) + g->fsize);
	if (!fe)
		return -1;
	packet_frame_entry__init(fe);
	fe->index = i;
	fe->data.len = g->fsize;
	fe->data.data = (uint8_t *)(fe + 1);
	memcpy(fe->data.data, frame_at(g, i), g->fsize);
	e->rx_frames[e->n_rx_frames++] = fe;
	return 0;
}

/* the owned frames and the kernel's place, from @g */
static int read_frames(PacketSkEntry *e, const struct ring *g, const char **why)
{
	uint64_t t, last_t = 0;
	uint32_t i, last = 0;
	int ties = 0;

	for (i = 0; i < g->nr; i++) {
		t = frame_time(g, i);
		if (t && t == last_t)
			ties++;
		if (t > last_t) {
			last_t = t;
			last = i;
			ties = 0;
		}
		if ((frame_status(g, i) & TP_STATUS_USER) && save_frame(e, g, i))
			return -1;
	}
	if (ties)
		*why = "with RX frames of equal timestamps: the frame the kernel fills next "
		       "can't be told";
	e->has_rx_head = 1;
	e->rx_head = last_t ? (last + 1) % g->nr : 0;
	return 0;
}

/*
 * TPACKET_V3: the block the kernel fills now is the one it opened last,
 * of the highest sequence number; it must be open (the kernel's) and
 * empty: packets in it are not the task's yet, nor can they be put back.
 */
static int read_blocks(PacketSkEntry *e, const struct ring *g, const char **why)
{
	uint32_t i, cur = 0;
	uint64_t top = 0;

	for (i = 0; i < g->nr; i++) {
		if (block_hdr(g, i)->seq_num > top) {
			top = block_hdr(g, i)->seq_num;
			cur = i;
		}
		if ((frame_status(g, i) & TP_STATUS_USER) && save_frame(e, g, i))
			return -1;
	}
	if (frame_status(g, cur) & TP_STATUS_USER)
		*why = "with a full TPACKET_V3 RX ring: the block the kernel fills next can't be "
		       "told";
	else if (block_hdr(g, cur)->num_pkts)
		*why = "with packets in the TPACKET_V3 RX block the kernel fills (not retired "
		       "yet), which is not supported";
	e->has_rx_head = 1;
	e->rx_head = cur;
	return 0;
}

static uint32_t frame_len(const struct ring *g, uint32_t i)
{
	const uint8_t *f = frame_at(g, i);

	return g->v1 ? ((const struct tpacket_hdr *)f)->tp_len :
		       ((const struct tpacket2_hdr *)f)->tp_len;
}

static void set_status(const struct ring *g, uint32_t i, uint32_t st)
{
	__atomic_store_n(status_word(g, i), st, __ATOMIC_RELEASE);
}

/*
 * The TX frame the kernel sends next: the first of the frames the task
 * queued (TP_STATUS_SEND_REQUEST) and did not send yet; with none queued,
 * the first never used, when the task used the frames from 0 in order and
 * never went round. -1: it can't be told.
 */
static int tx_head(const struct ring *g, uint32_t *head)
{
	uint32_t i, runs = 0, used = 0, prefix = 0;
	unsigned long st;

	for (i = 0; i < g->nr; i++) {
		st = frame_status(g, i);
		if (st == TP_STATUS_SEND_REQUEST &&
		    frame_status(g, (i + g->nr - 1) % g->nr) != TP_STATUS_SEND_REQUEST) {
			runs++;
			*head = i;
		}
		if (st || frame_len(g, i)) {
			used++;
			prefix += prefix == i;
		}
	}
	if (runs)
		return runs == 1 ? 0 : -1;
	*head = used;
	return prefix == used && used < g->nr ? 0 : -1;
}

/* the whole TX ring: the frames the task wrote, queued or not */
static int read_tx(PacketSkEntry *e, const struct ring *g, const char **why)
{
	uint64_t size = (uint64_t)g->bsize * (g->nr / g->fpb);
	struct ring copy = *g;
	uint32_t i;

	if (tx_head(g, &e->tx_head)) {
		*why = "with a TX ring whose frames were all used (or queued out of order): the "
		       "frame the kernel sends next can't be told";
		return 0;
	}
	e->has_tx_head = e->has_tx_data = 1;
	e->tx_data.data = xmalloc(size);
	if (!e->tx_data.data)
		return -1;
	e->tx_data.len = size;
	memcpy(e->tx_data.data, g->base, size);
	/* a frame the kernel was sending: sent, or lost in flight */
	copy.base = e->tx_data.data;
	for (i = 0; i < g->nr; i++)
		if (frame_status(&copy, i) == TP_STATUS_SENDING)
			set_status(&copy, i, TP_STATUS_AVAILABLE);
	return 0;
}

static int ring_sane(pid_t pid, const PacketSkEntry *e, const PacketRingEntry *r)
{
	if (r && (!r->frame_size || r->frame_size > r->block_size)) {
		pr_err("Task %d: packet socket:[%lu] has a ring of frames of %u bytes in blocks "
		       "of %u", pid, e->ino, r->frame_size, r->block_size);
		return -1;
	}
	return 0;
}

/* why rings of this shape can't be saved, or NULL */
static const char *unsupported(const PacketSkEntry *e)
{
	if (e->rx_ring && e->tx_ring)
		return "with RX and TX rings together, which is not supported";
	if (version_of(e) == TPACKET_V3 && e->tx_ring)
		return "with a TPACKET_V3 TX ring, which is not supported";
	return NULL;
}

int pk_ring_read(pid_t pid, int sk, PacketSkEntry *e, const char **why)
{
	struct ring g;
	int ret;

	*why = NULL;
	if (!e->rx_ring && !e->tx_ring)
		return 0;
	*why = unsupported(e);
	if (*why)
		return 0;
	if (ring_sane(pid, e, e->rx_ring) || ring_sane(pid, e, e->tx_ring) ||
	    mapped_whole(pid, e, ring_bytes(e->rx_ring) + ring_bytes(e->tx_ring), why))
		return -1;
	if (*why)
		return 0;
	if (ring_map(sk, e, !!e->tx_ring, PROT_READ, &g)) {
		pr_perror("Task %d: can't map the ring of packet socket:[%lu]", pid, e->ino);
		return -1;
	}
	ret = e->tx_ring ? read_tx(e, &g, why) : g.v3 ? read_blocks(e, &g, why) :
	      read_frames(e, &g, why);
	munmap(g.map, g.size);
	if (ret)
		pr_err("Task %d: no memory for the frames of packet socket:[%lu]", pid, e->ino);
	return ret;
}

void pk_ring_free(PacketSkEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_rx_frames; i++)
		free(e->rx_frames[i]);
	free(e->rx_frames);
	free(e->tx_data.data);
	free(e->rx_ring);
	free(e->tx_ring);
}

/* ------------------------------------------------------------- restore */

static int ring_valid(const PacketRingEntry *r)
{
	return !r || (r->block_size && !(r->block_size % 4096) && r->block_nr &&
		      r->frame_size >= TPACKET_HDRLEN && r->frame_size <= r->block_size &&
		      (uint64_t)(r->block_size / r->frame_size) * r->block_nr == r->frame_nr &&
		      ring_bytes(r) <= RING_MAX);
}

int pk_ring_valid(const PacketSkEntry *e)
{
	uint32_t nr, size;
	size_t i;
	int v3;

	if (!ring_valid(e->rx_ring) || !ring_valid(e->tx_ring))
		return -1;
	if (!e->n_rx_frames && !e->has_rx_head)
		goto tx;
	/* TPACKET_V3: the units are blocks */
	v3 = version_of(e) == TPACKET_V3;
	if (!e->rx_ring || e->rx_ring->retire_blk_tov > 60000)
		return -1;
	nr = v3 ? e->rx_ring->block_nr : e->rx_ring->frame_nr;
	size = v3 ? e->rx_ring->block_size : e->rx_ring->frame_size;
	if (e->rx_head >= nr)
		return -1;
	for (i = 0; i < e->n_rx_frames; i++)
		if (e->rx_frames[i]->index >= nr || e->rx_frames[i]->data.len != size)
			return -1;
tx:
	if ((e->has_tx_head || e->has_tx_data) &&
	    (!e->tx_ring || e->rx_ring || e->tx_head >= e->tx_ring->frame_nr ||
	     e->tx_data.len != ring_bytes(e->tx_ring)))
		return -1;
	return 0;
}

static int set_one(int sk, int name, const PacketRingEntry *r, int v3)
{
	struct tpacket_req3 req = {
		.tp_block_size = r->block_size, .tp_block_nr = r->block_nr,
		.tp_frame_size = r->frame_size, .tp_frame_nr = r->frame_nr,
		.tp_retire_blk_tov = r->retire_blk_tov, .tp_sizeof_priv = r->sizeof_priv,
		.tp_feature_req_word = r->feature_req_word,
	};

	return setsockopt(sk, SOL_PACKET, name, &req,
			  v3 ? sizeof(req) : sizeof(struct tpacket_req));
}

int pk_ring_set(pid_t pid, int sk, const PacketSkEntry *e)
{
	int v3 = version_of(e) == TPACKET_V3;

	if ((e->rx_ring && set_one(sk, PACKET_RX_RING, e->rx_ring, v3)) ||
	    (e->tx_ring && set_one(sk, PACKET_TX_RING, e->tx_ring, v3))) {
		pr_perror("Task %d: can't set the rings of packet socket:[%lu] up", pid, e->ino);
		return -1;
	}
	return 0;
}

/* lo of the socket's network namespace, protocol PRIME_PROTO */
static int lo_addr(pid_t pid, int sk, const PacketSkEntry *e, struct sockaddr_ll *ll)
{
	struct ifreq ifr = { .ifr_name = "lo" };

	if (ioctl(sk, SIOCGIFINDEX, &ifr)) {
		pr_perror("Task %d: no lo to restore the ring of packet socket:[%lu] through",
			  pid, e->ino);
		return -1;
	}
	memset(ll, 0, sizeof(*ll));
	ll->sll_family = AF_PACKET;
	ll->sll_protocol = htons(PRIME_PROTO);
	ll->sll_ifindex = ifr.ifr_ifindex;
	ll->sll_halen = ETH_ALEN;
	return 0;
}

/* what the socket sends itself: a frame of protocol PRIME_PROTO, @off bytes in @buf */
static size_t prime_frame(const PacketSkEntry *e, uint8_t *buf)
{
	struct ethhdr *eh = (struct ethhdr *)buf;
	size_t off = e->type == SOCK_RAW ? ETH_HLEN : 0;

	memset(buf, 0, off);
	eh->h_proto = htons(PRIME_PROTO);
	memcpy(buf + off, "criu: the ring's place, restored", 32);
	return off + 32;
}

/* One frame of protocol PRIME_PROTO through lo (@ll), to the socket itself. */
static int send_self(int sk, const PacketSkEntry *e, struct sockaddr_ll *ll)
{
	uint8_t buf[ETH_HLEN + 32];
	size_t len = prime_frame(e, buf);

	return sendto(sk, buf, len, 0, (struct sockaddr *)ll, sizeof(*ll)) < 0 ? -1 : 0;
}

/* frame @i's status: TP_STATUS_USER in it (@want), or TP_STATUS_AVAILABLE (!@want) */
static int wait_status(const struct ring *g, uint32_t i, int want)
{
	struct timespec ts = { 0, 1000000 };
	uint32_t st, ms;

	/* a V3 block is the task's once its retire timer fired */
	for (ms = 0; ms < PRIME_WAIT_MS + (g->v3 ? 4 * g->tov : 0); ms++) {
		st = __atomic_load_n(status_word(g, i), __ATOMIC_ACQUIRE);
		if (want ? (st & TP_STATUS_USER) : st == TP_STATUS_AVAILABLE)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* The kernel's place moved to e->rx_head: frames through lo, one by one. */
static int prime(pid_t pid, int sk, const PacketSkEntry *e, const struct ring *g)
{
	struct sockaddr_ll ll;
	uint32_t i;

	if (!e->num) {
		pr_err("Task %d: packet socket:[%lu] receives nothing but its ring was filled up "
		       "to frame %u", pid, e->ino, e->rx_head);
		return -1;
	}
	if (lo_addr(pid, sk, e, &ll))
		return -1;
	if (bind(sk, (struct sockaddr *)&ll, sizeof(ll))) {
		pr_perror("Task %d: can't bind packet socket:[%lu] to lo", pid, e->ino);
		return -1;
	}
	for (i = 0; i < e->rx_head; i++) {
		if (send_self(sk, e, &ll)) {
			pr_perror("Task %d: can't send packet socket:[%lu] a frame through lo",
				  pid, e->ino);
			return -1;
		}
		if (wait_status(g, i, 1)) {
			pr_err("Task %d: frame %u of the ring of packet socket:[%lu] stays empty: "
			       "the frame sent through lo did not come", pid, i, e->ino);
			return -1;
		}
	}
	return 0;
}

/* drops everything: the ring stays as it is until the socket's own filter */
static int block(int sk)
{
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop };

	return setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/*
 * PACKET_STATISTICS counts from the last read, which clears them: the
 * frames criu sent are not the task's to count. (What the task had not
 * read at the dump is not known: reading it would clear it.)
 */
static int clear_stats(int sk)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	return getsockopt(sk, SOL_PACKET, PACKET_STATISTICS, &st, &len);
}

static int put_frames(pid_t pid, int sk, const PacketSkEntry *e, const struct ring *g)
{
	uint32_t i;
	size_t j;

	if (e->rx_head && prime(pid, sk, e, g))
		return -1;
	if (block(sk) || clear_stats(sk)) {
		pr_perror("Task %d: can't hold the ring of packet socket:[%lu] still", pid, e->ino);
		return -1;
	}
	if (e->rx_head && ((frame_status(g, e->rx_head) & TP_STATUS_USER) ||
			   (g->v3 && block_hdr(g, e->rx_head)->num_pkts))) {
		pr_err("Task %d: frames from elsewhere came in the ring of packet socket:[%lu] "
		       "(protocol %#06x on lo)", pid, e->ino, PRIME_PROTO);
		return -1;
	}
	for (i = 0; i < e->rx_head; i++)
		memset(frame_at(g, i), 0, g->fsize);
	for (j = 0; j < e->n_rx_frames; j++)
		memcpy(frame_at(g, e->rx_frames[j]->index), e->rx_frames[j]->data.data, g->fsize);
	return 0;
}

/*
 * The kernel's place in the TX ring moved to e->tx_head: that many frames
 * queued from 0 and sent through lo at once, unbound (nothing comes back).
 */
static int prime_tx(pid_t pid, int sk, const PacketSkEntry *e, const struct ring *g)
{
	size_t off = (g->v1 ? TPACKET_HDRLEN : TPACKET2_HDRLEN) - sizeof(struct sockaddr_ll);
	struct sockaddr_ll ll;
	struct tpacket2_hdr *h2;
	struct tpacket_hdr *h1;
	size_t len = 0;
	uint32_t i;

	if (g->fsize < off + ETH_HLEN + 32 || lo_addr(pid, sk, e, &ll))
		return -1;
	for (i = 0; i < e->tx_head; i++) {
		h1 = (struct tpacket_hdr *)frame_at(g, i);
		h2 = (struct tpacket2_hdr *)h1;
		memset(h1, 0, g->fsize);
		len = prime_frame(e, (uint8_t *)h1 + off);
		if (g->v1)
			h1->tp_len = len, h1->tp_mac = h1->tp_net = off;
		else
			h2->tp_len = len, h2->tp_mac = h2->tp_net = off;
		set_status(g, i, TP_STATUS_SEND_REQUEST);
	}
	if (sendto(sk, NULL, 0, 0, (struct sockaddr *)&ll, sizeof(ll)) < 0) {
		pr_perror("Task %d: can't send the TX ring of packet socket:[%lu] through lo", pid,
			  e->ino);
		return -1;
	}
	for (i = 0; i < e->tx_head; i++)
		if (wait_status(g, i, 0)) {
			pr_err("Task %d: frame %u of the TX ring of packet socket:[%lu] was not sent "
			       "(status %#lx)", pid, i, e->ino, frame_status(g, i));
			return -1;
		}
	return 0;
}

static int put_tx(pid_t pid, int sk, const PacketSkEntry *e, const struct ring *g)
{
	if (e->tx_head && prime_tx(pid, sk, e, g))
		return -1;
	memcpy(g->base, e->tx_data.data, e->tx_data.len);
	return 0;
}

int pk_ring_fill(pid_t pid, int sk, const PacketSkEntry *e)
{
	struct ring g;
	int ret;

	if ((!e->rx_ring && !e->tx_ring) || (e->tx_ring && !e->has_tx_data))
		return 0;
	if (ring_map(sk, e, !!e->tx_ring, PROT_READ | PROT_WRITE, &g)) {
		pr_perror("Task %d: can't map the ring of packet socket:[%lu]", pid, e->ino);
		return -1;
	}
	ret = e->tx_ring ? put_tx(pid, sk, e, &g) : put_frames(pid, sk, e, &g);
	munmap(g.map, g.size);
	return ret;
}

int pk_ring_unblock(pid_t pid, int sk, const PacketSkEntry *e)
{
	int none = 0;

	if (!e->rx_ring || e->n_filter)
		return 0;	/* the socket's own filter replaces the one that drops */
	if (setsockopt(sk, SOL_SOCKET, SO_DETACH_FILTER, &none, sizeof(none))) {
		pr_perror("Task %d: can't let packet socket:[%lu] receive", pid, e->ino);
		return -1;
	}
	return 0;
}
