// SPDX-License-Identifier: GPL-2.0
/*
 * XSAVE areas across CPUs (Intel SDM vol. 1, chapter 13; AMD APM vol. 2,
 * 11.5): the 512-byte legacy region (x87, MXCSR, XMM), the 64-byte
 * header (XSTATE_BV: the components not in their initial state; XCOMP_BV:
 * bit 63 for the compacted format) and the state components 2..63, each
 * where CPUID 0xD.i says. Those offsets differ between CPUs (an AMD EPYC
 * puts PKRU at 2432, an Intel Xeon at 2688) and so does the size of the
 * whole area, which PTRACE_SETREGSET wants exactly: registers saved on one
 * CPU are taken apart by component and put together again in the layout
 * of the CPU that loads them.
 */
#include <cpuid.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "task/xsave.h"

#define XSAVE_HDR_BV		0	/* within the header */
#define XSAVE_HDR_COMP		8
#define OSXSAVE_BIT		27	/* CPUID 1.ecx: XGETBV usable */
#define CPUID_D_SUPERVISOR	(1u << 0)	/* 0xD.i ecx: an IA32_XSS component */
#define CPUID_D_ALIGN64		(1u << 1)	/* 0xD.i ecx: compacted: 64-byte aligned */

/* By XCR0 bit (SDM vol. 1, 13.1; the names of the kernel's xfeatures). */
static const char *const names[] = {
	"x87", "sse", "avx", "mpx_bndregs", "mpx_bndcsr", "avx512_opmask",
	"avx512_zmm_hi256", "avx512_hi16_zmm", "pt", "pkru", "pasid", "cet_user",
	"cet_supervisor", "hdc", "uintr", "lbr", "hwp", "amx_tilecfg",
	"amx_tiledata", "apx",
};

const char *xsave_feature_name(int bit)
{
	return bit >= 0 && bit < (int)ARRAY_SIZE(names) ? names[bit] : NULL;
}

const char *xsave_features_str(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;
	int bit;

	if (!len)
		return buf;
	buf[0] = 0;
	for (bit = 0; bit < XSAVE_NR && off < len; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		if (xsave_feature_name(bit))
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					xsave_feature_name(bit));
		else
			off += snprintf(buf + off, len - off, "%sxfeature %d", off ? ", " : "",
					bit);
	}
	return buf;
}

void xsave_layout_set(struct xsave_layout *l, int i, uint32_t eax, uint32_t ebx,
		      uint32_t ecx)
{
	if (i < XSAVE_FIRST_EXT || i >= XSAVE_NR)
		return;
	l->csize[i] = eax;
	/* a supervisor component has no place in the standard format */
	l->offset[i] = ecx & CPUID_D_SUPERVISOR ? 0 : ebx;
	if (ecx & CPUID_D_ALIGN64)
		l->align64 |= 1ULL << i;
	else
		l->align64 &= ~(1ULL << i);
}

int xsave_layout_host(struct xsave_layout *l)
{
	uint32_t a, b, c, d, max;
	uint64_t known;
	int i;

	memset(l, 0, sizeof(*l));
	l->xcr0 = XSAVE_LEGACY_MASK;
	l->size = XSAVE_LEGACY_SIZE;
	max = __get_cpuid_max(0, NULL);
	if (max < 0xd)
		return 0;
	__cpuid_count(1, 0, a, b, c, d);
	if (c & (1u << OSXSAVE_BIT)) {
		asm volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
		l->xcr0 = ((uint64_t)d << 32) | a;
	}
	__cpuid_count(0xd, 0, a, b, c, d);
	l->size = b;
	known = ((uint64_t)d << 32) | a | l->xcr0;
	for (i = XSAVE_FIRST_EXT; i < XSAVE_NR; i++) {
		if (!(known & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		xsave_layout_set(l, i, a, b, c);
	}
	return 0;
}

long xsave_offset(const struct xsave_layout *l, uint64_t xcomp_bv, int i)
{
	long off = XSAVE_EXT_OFF;
	int j;

	if (i < XSAVE_FIRST_EXT || i >= XSAVE_NR || !l->csize[i])
		return -1;
	if (!(xcomp_bv & XSAVE_COMPACTED))
		return l->offset[i] ? (long)l->offset[i] : -1;
	if (!(xcomp_bv & (1ULL << i)))
		return -1;
	/* packed in bit order, each 64-byte aligned where CPUID says so */
	for (j = XSAVE_FIRST_EXT; j <= i; j++) {
		if (!(xcomp_bv & (1ULL << j)))
			continue;
		if (l->align64 & (1ULL << j))
			off = (off + 63) & ~63L;
		if (j < i)
			off += l->csize[j];
	}
	return off;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *name_of(int bit, char *buf, size_t len)
{
	if (xsave_feature_name(bit))
		return xsave_feature_name(bit);
	snprintf(buf, len, "xfeature %d", bit);
	return buf;
}

int xsave_split(const struct xsave_layout *l, const void *area, size_t len,
		struct xsave_state *st, char *err, size_t errlen)
{
	const uint8_t *p = area;
	uint64_t xcomp;
	char nb[32];
	long off;
	int i;

	memset(st, 0, sizeof(*st));
	if (len < XSAVE_EXT_OFF || len > XSAVE_AREA_MAX)
		return fail(err, errlen, "an XSAVE area of %zu bytes", len);
	memcpy(st->legacy, p, XSAVE_LEGACY_SIZE);
	memcpy(&st->xstate_bv, p + XSAVE_HDR_OFF + XSAVE_HDR_BV, 8);
	memcpy(&xcomp, p + XSAVE_HDR_OFF + XSAVE_HDR_COMP, 8);
	if (xcomp && (!(xcomp & XSAVE_COMPACTED) || (st->xstate_bv & ~xcomp)))
		return fail(err, errlen, "XSAVE header with XSTATE_BV %#llx, XCOMP_BV %#llx",
			    (unsigned long long)st->xstate_bv, (unsigned long long)xcomp);
	for (i = XSAVE_FIRST_EXT; i < XSAVE_NR; i++) {
		if (!(st->xstate_bv & (1ULL << i)))
			continue;
		off = xsave_offset(l, xcomp, i);
		if (!(l->xcr0 & (1ULL << i)) || off < 0)
			return fail(err, errlen, "XSAVE component %s is in use but not "
				    "enabled on this CPU (XCR0 %#llx)", name_of(i, nb, sizeof(nb)),
				    (unsigned long long)l->xcr0);
		if ((size_t)off + l->csize[i] > len)
			return fail(err, errlen, "XSAVE component %s at %ld (%u bytes) lies "
				    "beyond the area of %zu bytes", name_of(i, nb, sizeof(nb)),
				    off, l->csize[i], len);
		st->comp[i] = p + off;
		st->comp_size[i] = l->csize[i];
	}
	return 0;
}

int xsave_mpx_enabled(const struct xsave_state *st)
{
	uint64_t cfg = 0;

	/* component 4, BNDCSR: BNDCFGU, then BNDSTATUS */
	if (!(st->xstate_bv & (1ULL << 4)) || !st->comp[4] || st->comp_size[4] < 8)
		return 0;
	memcpy(&cfg, st->comp[4], sizeof(cfg));
	return cfg & 1;
}

int xsave_build(const struct xsave_layout *l, const struct xsave_state *st, void *area,
		size_t len, uint64_t *dropped, char *err, size_t errlen)
{
	uint8_t *p = area;
	uint64_t bv = st->xstate_bv & (l->xcr0 | XSAVE_LEGACY_MASK);
	char nb[32];
	int i;

	*dropped = st->xstate_bv & ~bv;
	if (len < XSAVE_EXT_OFF || len > XSAVE_AREA_MAX)
		return fail(err, errlen, "an XSAVE area of %zu bytes", len);
	/* the software bytes are the kernel's: it ignores them on the way in */
	memcpy(p, st->legacy, XSAVE_SW_XCR0_OFF);
	memset(p + XSAVE_HDR_OFF, 0, XSAVE_HDR_SIZE);
	for (i = XSAVE_FIRST_EXT; i < XSAVE_NR; i++) {
		if (!(bv & (1ULL << i)))
			continue;
		if (!l->offset[i] || l->csize[i] != st->comp_size[i])
			return fail(err, errlen, "XSAVE component %s has %u bytes here, %u "
				    "where it was saved", name_of(i, nb, sizeof(nb)),
				    l->offset[i] ? l->csize[i] : 0, st->comp_size[i]);
		if ((size_t)l->offset[i] + l->csize[i] > len)
			return fail(err, errlen, "XSAVE component %s at %u (%u bytes) lies "
				    "beyond this CPU's area of %zu bytes",
				    name_of(i, nb, sizeof(nb)), l->offset[i], l->csize[i], len);
		memcpy(p + l->offset[i], st->comp[i], st->comp_size[i]);
	}
	memcpy(p + XSAVE_HDR_OFF + XSAVE_HDR_BV, &bv, 8);
	return 0;
}
