// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C of images and page stores.
 *
 * With SSE4.2 the crc32 instruction does 8 bytes a step, but each step
 * waits for the previous one (3 cycles of latency, one issued a cycle), so
 * a single stream runs at a third of what the unit can do. Long buffers
 * are cut into three consecutive blocks summed at once, and the three
 * CRCs joined: a CRC register is a linear function of its inputs, so
 *
 *	crc(A B C) = Z(Z(crc(A)) ^ crc0(B)) ^ crc0(C)
 *
 * where crc0 starts from a zero register and Z is "append BLOCK zero
 * bytes", a fixed 32x32 bit matrix over GF(2), applied through four
 * 256-entry tables. Without SSE4.2: slicing by 8 tables.
 */
#include <pthread.h>
#include <string.h>

#include "image/crc32c.h"

#define POLY		0x82f63b78u	/* reflected Castagnoli */
#define BLOCK		4096		/* of each of the three streams */
#define SHORT_BLOCK	256		/* the same, for what is left */

struct shift {
	uint32_t t[4][256];		/* Z of each byte of the register */
};

static uint32_t sw_tab[8][256];
static struct shift shift_long, shift_short;
static int have_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* M applied to vector @v: M is given by its columns, the images of bit i. */
static uint32_t mat_apply(const uint32_t *m, uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; v; i++, v >>= 1)
		if (v & 1)
			r ^= m[i];
	return r;
}

/* @out = @m x @m */
static void mat_square(uint32_t *out, const uint32_t *m)
{
	int i;

	for (i = 0; i < 32; i++)
		out[i] = mat_apply(m, m[i]);
}

/* The tables of Z for @bytes zero bytes (a power of two). */
static void make_shift(struct shift *s, unsigned int bytes)
{
	uint32_t m[32], sq[32];
	unsigned int i, b, k, bits;

	/* one zero bit: shift right, fold the polynomial in if bit 0 was set */
	m[0] = POLY;
	for (i = 1; i < 32; i++)
		m[i] = 1u << (i - 1);
	for (bits = 1; bits < bytes * 8; bits *= 2) {
		mat_square(sq, m);
		memcpy(m, sq, sizeof(m));
	}
	for (k = 0; k < 4; k++)
		for (b = 0; b < 256; b++)
			s->t[k][b] = mat_apply(m, b << (8 * k));
}

static inline uint32_t shift_apply(const struct shift *s, uint32_t c)
{
	return s->t[0][c & 0xff] ^ s->t[1][(c >> 8) & 0xff] ^
	       s->t[2][(c >> 16) & 0xff] ^ s->t[3][c >> 24];
}

static void init(void)
{
	uint32_t c;
	int i, j;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		sw_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			sw_tab[j][i] = (sw_tab[j - 1][i] >> 8) ^ sw_tab[0][sw_tab[j - 1][i] & 0xff];
	make_shift(&shift_long, BLOCK);
	make_shift(&shift_short, SHORT_BLOCK);
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2");
}

/* The raw register update (no inversions), slicing by 8. */
static uint32_t sw_update(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t w;

	while (n && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ sw_tab[0][(c ^ *p++) & 0xff];
		n--;
	}
	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		w ^= c;
		c = sw_tab[7][w & 0xff] ^ sw_tab[6][(w >> 8) & 0xff] ^
		    sw_tab[5][(w >> 16) & 0xff] ^ sw_tab[4][(w >> 24) & 0xff] ^
		    sw_tab[3][(w >> 32) & 0xff] ^ sw_tab[2][(w >> 40) & 0xff] ^
		    sw_tab[1][(w >> 48) & 0xff] ^ sw_tab[0][w >> 56];
	}
	while (n--)
		c = (c >> 8) ^ sw_tab[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/* Three streams of @blk bytes each, as many rounds as fit. */
__attribute__((target("sse4.2")))
static uint32_t hw_rounds(uint32_t c, const uint8_t **pp, size_t *np, size_t blk,
			  const struct shift *z)
{
	const uint8_t *p = *pp;
	size_t n = *np, i, w = blk / 8;
	uint64_t c0, c1, c2, a, b, d;

	while (n >= 3 * blk) {
		c0 = c;
		c1 = c2 = 0;
		for (i = 0; i < w; i++) {
			memcpy(&a, p + 8 * i, 8);
			memcpy(&b, p + blk + 8 * i, 8);
			memcpy(&d, p + 2 * blk + 8 * i, 8);
			c0 = _mm_crc32_u64(c0, a);
			c1 = _mm_crc32_u64(c1, b);
			c2 = _mm_crc32_u64(c2, d);
		}
		c = shift_apply(z, shift_apply(z, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * blk;
		n -= 3 * blk;
	}
	*pp = p;
	*np = n;
	return c;
}

__attribute__((target("sse4.2")))
static uint32_t hw_update(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t w, c64;

	while (n && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8(c, *p++);
		n--;
	}
	c = hw_rounds(c, &p, &n, BLOCK, &shift_long);
	c = hw_rounds(c, &p, &n, SHORT_BLOCK, &shift_short);
	c64 = c;
	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		c64 = _mm_crc32_u64(c64, w);
	}
	c = (uint32_t)c64;
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#else
static uint32_t hw_update(uint32_t c, const uint8_t *p, size_t n)
{
	return sw_update(c, p, n);
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, init);
	if (have_hw)
		return ~hw_update(~crc, buf, len);
	return ~sw_update(~crc, buf, len);
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, init);
	return ~sw_update(~crc, buf, len);
}

int crc32c_hw(void)
{
	pthread_once(&once, init);
	return have_hw;
}
