/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_XSAVE_H
#define CRIU_TASK_XSAVE_H

/*
 * The XSAVE area of a thread, taken apart into its state components and
 * put together again for another CPU (Documentation/cpu.md, "The XSAVE
 * area"). Where each component lies differs between CPUs: CPUID leaf 0xD
 * says it. The area ptrace hands (NT_X86_XSTATE) is in the standard
 * format; the compacted one is read too, should a kernel hand it.
 */
#include <stddef.h>
#include <stdint.h>

#define XSAVE_NR		64	/* XCR0 bits */
#define XSAVE_LEGACY_SIZE	512	/* x87, MXCSR, XMM: the FXSAVE image */
#define XSAVE_HDR_OFF		512	/* the XSAVE header: XSTATE_BV, XCOMP_BV */
#define XSAVE_HDR_SIZE		64
#define XSAVE_EXT_OFF		576	/* the first component of the compacted format */
#define XSAVE_SW_XCR0_OFF	464	/* ptrace puts XCR0 in the software bytes */
#define XSAVE_FIRST_EXT		2	/* components 0 and 1 live in the legacy region */
#define XSAVE_LEGACY_MASK	3ULL
#define XSAVE_COMPACTED		(1ULL << 63)	/* XCOMP_BV: the compacted format */
#define XSAVE_AREA_MAX		(64 << 10)
/*
 * PKRU, the protection keys' rights: it matters only to memory that has a
 * key, which a dump refuses (parts/cpu-use.c), so a CPU without it takes
 * the registers without it (parts/cpu-info.c, parts/regs.c)
 */
#define XSAVE_PKRU		(1ULL << 9)
/*
 * MPX's bound registers and configuration (Linux dropped MPX in 5.6, but
 * older kernels still enable its components): while BNDCFGU's enable bit
 * is clear, BND instructions do nothing and the registers change nothing,
 * so a CPU without them takes the registers without them (parts/regs.c
 * judges, by that bit)
 */
#define XSAVE_MPX		((1ULL << 3) | (1ULL << 4))

/* Where the components of this CPU's XSAVE area are (CPUID 0xD). */
struct xsave_layout {
	uint64_t xcr0;			/* the components the kernel enabled */
	uint32_t size;			/* standard-format area for xcr0 (0xD.0 ebx) */
	uint32_t offset[XSAVE_NR];	/* standard format (0xD.i ebx); 0: none */
	uint32_t csize[XSAVE_NR];	/* component size (0xD.i eax) */
	uint64_t align64;		/* compacted format: bit i on a 64-byte boundary */
};

/* A thread's XSAVE state: the legacy region and each component in use. */
struct xsave_state {
	uint8_t legacy[XSAVE_LEGACY_SIZE];
	uint64_t xstate_bv;		/* components not in their initial state */
	const uint8_t *comp[XSAVE_NR];	/* for each bit >= 2 of xstate_bv */
	uint32_t comp_size[XSAVE_NR];
};

/* Fills @l from CPUID 0xD and XCR0 of this CPU; 0, or -1 (logged). */
int xsave_layout_host(struct xsave_layout *l);

/* Records component @i as CPUID 0xD.i answers it (eax, ebx, ecx). */
void xsave_layout_set(struct xsave_layout *l, int i, uint32_t eax, uint32_t ebx,
		      uint32_t ecx);

/* The name of XSAVE component @bit ("avx512_opmask"), NULL if unknown. */
const char *xsave_feature_name(int bit);
/* Writes the names of the bits of @mask, comma-separated, into @buf. */
const char *xsave_features_str(uint64_t mask, char *buf, size_t len);

/*
 * Where component @i lies in an area whose XCOMP_BV is @xcomp_bv (the
 * standard format when bit 63 is clear); -1 when @l has no such component.
 */
long xsave_offset(const struct xsave_layout *l, uint64_t xcomp_bv, int i);

/*
 * Takes an area of @len bytes written by this CPU (layout @l) apart: the
 * components point into @area. 0, or -1 with the reason in @err.
 */
int xsave_split(const struct xsave_layout *l, const void *area, size_t len,
		struct xsave_state *st, char *err, size_t errlen);

/*
 * Builds in @area (@len bytes, the size the kernel wants; its software
 * bytes are kept) the standard-format area of layout @l holding @st.
 * Components @l lacks are left out and reported in *@dropped. 0, or -1
 * with the reason in @err (a component of another size, an area too small).
 */
/* 1 when the saved state enables MPX for user code (BNDCFGU.EN). */
int xsave_mpx_enabled(const struct xsave_state *st);

int xsave_build(const struct xsave_layout *l, const struct xsave_state *st, void *area,
		size_t len, uint64_t *dropped, char *err, size_t errlen);

#endif
