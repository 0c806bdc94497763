// SPDX-License-Identifier: GPL-2.0
/*
 * The XSAVE translation (criu/task/xsave.c) over every pair of the layouts
 * in xsave/ (CPUID 0xD recorded in QEMU guests of several -cpu models and
 * on the host by xsave/record.sh; two written from the manuals): an area
 * written on one CPU, taken apart and put together for the other, holds
 * every component the other has, byte for byte, at the other's offsets,
 * and names the ones it lacks; the compacted format reads the same.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "task/xsave.h"
#include "unit.h"

#define MAX_LAYOUTS	32

struct named_layout {
	char name[64];
	struct xsave_layout l;
	long ptrace_size;	/* the kernel's area, as probe.c saw it */
};

static struct named_layout layouts[MAX_LAYOUTS];
static int nr_layouts;

static int parse_layout(FILE *f, struct named_layout *n)
{
	unsigned int sub, a, b, c, d;
	unsigned long long x;
	char line[256];

	memset(&n->l, 0, sizeof(n->l));
	n->ptrace_size = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "xcr0 %llx", &x) == 1)
			n->l.xcr0 = x;
		else if (sscanf(line, "ptrace_size %ld", &n->ptrace_size) == 1)
			;
		else if (sscanf(line, "0xd.%u %x %x %x %x", &sub, &a, &b, &c, &d) == 5) {
			if (sub == 0)
				n->l.size = b;
			else
				xsave_layout_set(&n->l, sub, a, b, c);
		}
	}
	return n->l.size ? 0 : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named_layout *)a)->name,
		      ((const struct named_layout *)b)->name);
}

static void load_layouts(void)
{
	DIR *dir = opendir(XSAVE_LAYOUTS);
	struct dirent *de;
	char path[512];
	size_t len;
	FILE *f;

	if (!dir)
		return;
	while ((de = readdir(dir)) && nr_layouts < MAX_LAYOUTS) {
		len = strlen(de->d_name);
		if (len < 8 || strcmp(de->d_name + len - 7, ".layout"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", XSAVE_LAYOUTS, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		snprintf(layouts[nr_layouts].name, sizeof(layouts[0].name), "%.*s",
			 (int)(len - 7), de->d_name);
		if (!parse_layout(f, &layouts[nr_layouts]))
			nr_layouts++;
		fclose(f);
	}
	closedir(dir);
	qsort(layouts, nr_layouts, sizeof(layouts[0]), by_name);
}

/* A byte no two components (nor the legacy region) share at one index. */
static uint8_t pattern(int comp, size_t i)
{
	return (uint8_t)(comp * 37 + i * 7 + 1);
}

/* An area of layout @l with every component of @bv filled with its pattern. */
static uint8_t *make_area(const struct xsave_layout *l, uint64_t bv, uint64_t xcomp,
			  size_t len)
{
	uint8_t *a = calloc(1, len);
	size_t i;
	long off;
	int c;

	if (!a)
		return NULL;
	for (i = 0; i < XSAVE_SW_XCR0_OFF; i++)
		a[i] = pattern(0, i);
	memcpy(a + XSAVE_SW_XCR0_OFF, &l->xcr0, 8);
	memcpy(a + XSAVE_HDR_OFF, &bv, 8);
	memcpy(a + XSAVE_HDR_OFF + 8, &xcomp, 8);
	for (c = XSAVE_FIRST_EXT; c < XSAVE_NR; c++) {
		if (!(bv & (1ULL << c)))
			continue;
		off = xsave_offset(l, xcomp, c);
		if (off < 0 || (size_t)off + l->csize[c] > len) {
			free(a);
			return NULL;
		}
		for (i = 0; i < l->csize[c]; i++)
			a[off + i] = pattern(c, i);
	}
	return a;
}

static int holds_pattern(const uint8_t *p, int comp, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(comp, i))
			return 0;
	return 1;
}

static void test_layouts_recorded(void)
{
	int i;

	require(nr_layouts >= 8, "only %d layouts in %s", nr_layouts, XSAVE_LAYOUTS);
	for (i = 0; i < nr_layouts; i++) {
		const struct named_layout *n = &layouts[i];

		/* criu sizes the area by CPUID: the kernel must agree */
		expect(n->ptrace_size == n->l.size, "%s: ptrace's area %ld, CPUID 0xD.0 %u",
		       n->name, n->ptrace_size, n->l.size);
		expect((n->l.xcr0 & 3) == 3, "%s: xcr0 %#llx", n->name,
		       (unsigned long long)n->l.xcr0);
	}
}

/* The area of @s using every component it enabled, moved to @d. */
static void move(const struct named_layout *s, const struct named_layout *d)
{
	uint64_t bv = s->l.xcr0, dropped, hdr[8];
	struct xsave_state st, back;
	uint8_t *src, *dst;
	char err[256];
	int c;

	src = make_area(&s->l, bv, 0, s->l.size);
	dst = malloc(d->l.size);
	require(src && dst, "%s: no area", s->name);
	memset(dst, 0xee, d->l.size);
	memcpy(dst + XSAVE_SW_XCR0_OFF, &d->l.xcr0, 8);
	require(!xsave_split(&s->l, src, s->l.size, &st, err, sizeof(err)), "%s: %s",
		s->name, err);
	require(!xsave_build(&d->l, &st, dst, d->l.size, &dropped, err, sizeof(err)),
		"%s -> %s: %s", s->name, d->name, err);
	expect(dropped == (bv & ~d->l.xcr0), "%s -> %s: dropped %#llx", s->name, d->name,
	       (unsigned long long)dropped);
	expect(holds_pattern(dst, 0, XSAVE_SW_XCR0_OFF), "%s -> %s: legacy region", s->name,
	       d->name);
	expect(!memcmp(dst + XSAVE_SW_XCR0_OFF, &d->l.xcr0, 8),
	       "%s -> %s: the kernel's software bytes were overwritten", s->name, d->name);
	memcpy(hdr, dst + XSAVE_HDR_OFF, sizeof(hdr));
	expect(hdr[0] == (bv & d->l.xcr0), "%s -> %s: XSTATE_BV %#llx", s->name, d->name,
	       (unsigned long long)hdr[0]);
	for (c = 1; c < 8; c++)
		expect(!hdr[c], "%s -> %s: header word %d is %#llx", s->name, d->name, c,
		       (unsigned long long)hdr[c]);
	for (c = XSAVE_FIRST_EXT; c < XSAVE_NR; c++)
		if (bv & d->l.xcr0 & (1ULL << c))
			expect(holds_pattern(dst + d->l.offset[c], c, d->l.csize[c]),
			       "%s -> %s: component %d at %u", s->name, d->name, c,
			       d->l.offset[c]);
	/* and what the kernel of @d would hand back reads the same */
	require(!xsave_split(&d->l, dst, d->l.size, &back, err, sizeof(err)),
		"%s -> %s, read back: %s", s->name, d->name, err);
	expect(back.xstate_bv == hdr[0], "%s -> %s: read back %#llx", s->name, d->name,
	       (unsigned long long)back.xstate_bv);
	for (c = XSAVE_FIRST_EXT; c < XSAVE_NR; c++)
		if (back.xstate_bv & (1ULL << c))
			expect(back.comp_size[c] == st.comp_size[c] &&
			       holds_pattern(back.comp[c], c, back.comp_size[c]),
			       "%s -> %s: component %d read back", s->name, d->name, c);
	free(src);
	free(dst);
}

static void test_every_pair(void)
{
	int i, j, n = 0;

	for (i = 0; i < nr_layouts; i++)
		for (j = 0; j < nr_layouts; j++, n++)
			move(&layouts[i], &layouts[j]);
	expect(n == nr_layouts * nr_layouts, "%d pairs", n);
}

/* Only the components a thread uses travel: a subset fits a smaller area. */
static void test_used_subset(void)
{
	const struct named_layout *big = NULL, *small = NULL;
	uint64_t dropped;
	struct xsave_state st;
	uint8_t *src, *dst;
	char err[256];
	int i;

	for (i = 0; i < nr_layouts; i++) {
		if (!strcmp(layouts[i].name, "qemu-max"))
			big = &layouts[i];
		if (!strcmp(layouts[i].name, "qemu-Haswell"))
			small = &layouts[i];
	}
	require(big && small, "qemu-max and qemu-Haswell are recorded");
	/* AVX in use, PKRU and MPX in their initial state */
	src = make_area(&big->l, 0x7, 0, big->l.size);
	dst = calloc(1, small->l.size);
	require(src && dst, "areas");
	require(!xsave_split(&big->l, src, big->l.size, &st, err, sizeof(err)), "%s", err);
	require(!xsave_build(&small->l, &st, dst, small->l.size, &dropped, err, sizeof(err)),
		"%s", err);
	expect(!dropped, "dropped %#llx", (unsigned long long)dropped);
	expect(holds_pattern(dst + 576, 2, 256), "AVX at 576");
	free(src);
	free(dst);
}

/* The compacted format reads as the standard one, component by component. */
static void test_compacted(void)
{
	struct xsave_state a, b;
	uint8_t *std, *cmp;
	uint64_t xcomp;
	char err[256];
	size_t len;
	int i, c;

	for (i = 0; i < nr_layouts; i++) {
		const struct named_layout *n = &layouts[i];

		xcomp = XSAVE_COMPACTED | n->l.xcr0;
		len = XSAVE_AREA_MAX;
		std = make_area(&n->l, n->l.xcr0, 0, n->l.size);
		cmp = make_area(&n->l, n->l.xcr0, xcomp, len);
		require(std && cmp, "%s: areas", n->name);
		require(!xsave_split(&n->l, std, n->l.size, &a, err, sizeof(err)), "%s: %s",
			n->name, err);
		require(!xsave_split(&n->l, cmp, len, &b, err, sizeof(err)), "%s: %s",
			n->name, err);
		for (c = XSAVE_FIRST_EXT; c < XSAVE_NR; c++)
			if (a.xstate_bv & (1ULL << c))
				expect(b.comp[c] && !memcmp(a.comp[c], b.comp[c], a.comp_size[c]),
				       "%s: component %d", n->name, c);
		free(std);
		free(cmp);
	}
}

/* Compacted offsets by the SDM's rule: packed in order, aligned where asked. */
static void test_compacted_offsets(void)
{
	struct xsave_layout l = { .xcr0 = 0x2e7 };
	uint64_t xcomp = XSAVE_COMPACTED | 0x2e7;

	xsave_layout_set(&l, 2, 256, 576, 0);
	xsave_layout_set(&l, 5, 64, 1088, 0);
	xsave_layout_set(&l, 6, 512, 1152, 0);
	xsave_layout_set(&l, 7, 1024, 1664, 0);
	xsave_layout_set(&l, 9, 8, 2688, 2);	/* 64-byte aligned */
	expect(xsave_offset(&l, xcomp, 2) == 576, "%ld", xsave_offset(&l, xcomp, 2));
	expect(xsave_offset(&l, xcomp, 5) == 832, "%ld", xsave_offset(&l, xcomp, 5));
	expect(xsave_offset(&l, xcomp, 6) == 896, "%ld", xsave_offset(&l, xcomp, 6));
	expect(xsave_offset(&l, xcomp, 9) == 2432, "%ld", xsave_offset(&l, xcomp, 9));
	/* without AVX-512 in XCOMP_BV, PKRU follows AVX, aligned up */
	xsave_layout_set(&l, 2, 248, 576, 0);
	expect(xsave_offset(&l, XSAVE_COMPACTED | 0x207, 9) == 832, "%ld",
	       xsave_offset(&l, XSAVE_COMPACTED | 0x207, 9));
	expect(xsave_offset(&l, 0, 9) == 2688, "standard %ld", xsave_offset(&l, 0, 9));
	expect(xsave_offset(&l, xcomp, 3) == -1, "no component 3");
	expect(xsave_offset(&l, XSAVE_COMPACTED | 0x7, 9) == -1, "9 not in XCOMP_BV");
}

static const struct named_layout *find(const char *name)
{
	int i;

	for (i = 0; i < nr_layouts; i++)
		if (!strcmp(layouts[i].name, name))
			return &layouts[i];
	return NULL;
}

/* What can't be done says so, naming the component. */
static void test_refusals(void)
{
	const struct named_layout *spr = find("manual-Intel-Sapphire-Rapids");
	const struct named_layout *hsw = find("qemu-Haswell");
	struct xsave_layout odd;
	struct xsave_state st;
	uint64_t dropped, bad;
	uint8_t *a, *d;
	char err[256];

	require(spr && hsw, "layouts");
	a = make_area(&spr->l, spr->l.xcr0, 0, spr->l.size);
	d = calloc(1, spr->l.size);
	require(a && d, "areas");
	require(!xsave_split(&spr->l, a, spr->l.size, &st, err, sizeof(err)), "%s", err);
	/* AMX and AVX-512 don't fit a Haswell: dropped by name, caller decides */
	expect(!xsave_build(&hsw->l, &st, d, hsw->l.size, &dropped, err, sizeof(err)), "%s",
	       err);
	expect(dropped == 0x602e0, "dropped %#llx", (unsigned long long)dropped);
	expect(!strcmp(xsave_features_str(dropped, err, sizeof(err)),
		       "avx512_opmask, avx512_zmm_hi256, avx512_hi16_zmm, pkru, amx_tilecfg, "
		       "amx_tiledata"), "%s", err);
	/* a component of another size can't be moved */
	odd = spr->l;
	odd.csize[9] = 16;
	expect(xsave_build(&odd, &st, d, spr->l.size, &dropped, err, sizeof(err)) &&
	       strstr(err, "pkru has 16 bytes here, 8"), "%s", err);
	/* nor into an area the kernel made too small */
	expect(xsave_build(&spr->l, &st, d, 2048, &dropped, err, sizeof(err)) &&
	       strstr(err, "beyond"), "%s", err);
	/* an area using what its own CPU did not enable */
	bad = 1ULL << 40;
	memcpy(a + XSAVE_HDR_OFF, &bad, 8);
	expect(xsave_split(&spr->l, a, spr->l.size, &st, err, sizeof(err)) &&
	       strstr(err, "xfeature 40"), "%s", err);
	/* XCOMP_BV without the compacted bit, and one that omits an XSTATE_BV bit */
	bad = 0x7;
	memcpy(a + XSAVE_HDR_OFF, &bad, 8);
	memcpy(a + XSAVE_HDR_OFF + 8, &bad, 8);
	expect(xsave_split(&spr->l, a, spr->l.size, &st, err, sizeof(err)), "XCOMP_BV 7");
	bad = XSAVE_COMPACTED | 0x3;
	memcpy(a + XSAVE_HDR_OFF + 8, &bad, 8);
	expect(xsave_split(&spr->l, a, spr->l.size, &st, err, sizeof(err)), "AVX not compacted");
	expect(xsave_split(&spr->l, a, 100, &st, err, sizeof(err)), "100 bytes");
	free(a);
	free(d);
}

/*
 * MPX state is left out where a CPU lacks MPX only when MPX was off:
 * BNDCFGU's enable bit (bit 0 of BNDCSR, component 4) clear, or BNDCSR
 * in its initial state (not in XSTATE_BV).
 */
static void test_mpx_enabled(void)
{
	const struct named_layout *dnv = find("qemu-Denverton");
	struct xsave_state st;
	uint64_t cfg;
	uint8_t *a;
	char err[256];
	long off;

	require(dnv && (dnv->l.xcr0 & 0x18) == 0x18, "a layout with MPX");
	a = make_area(&dnv->l, 0x1b, 0, dnv->l.size);
	off = xsave_offset(&dnv->l, 0, 4);
	require(a && off > 0, "area");
	for (cfg = 0; cfg < 4; cfg++) {
		memcpy(a + off, &cfg, 8);
		require(!xsave_split(&dnv->l, a, dnv->l.size, &st, err, sizeof(err)), "%s", err);
		expect(xsave_mpx_enabled(&st) == (int)(cfg & 1), "BNDCFGU %#llx",
		       (unsigned long long)cfg);
	}
	/* BNDCSR in its initial state: not enabled, whatever its bytes say */
	cfg = 0x11;
	memcpy(a + off, &cfg, 8);
	cfg = 0x0b;
	memcpy(a + XSAVE_HDR_OFF, &cfg, 8);
	require(!xsave_split(&dnv->l, a, dnv->l.size, &st, err, sizeof(err)), "%s", err);
	expect(!xsave_mpx_enabled(&st), "BNDCSR not in XSTATE_BV");
	free(a);
}

static void unit_setup(void)
{
	log_open(NULL, LOG_ERR);
	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	load_layouts();
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_layouts_recorded),
	UNIT_TEST(test_every_pair),
	UNIT_TEST(test_used_subset),
	UNIT_TEST(test_compacted),
	UNIT_TEST(test_compacted_offsets),
	UNIT_TEST(test_refusals),
	UNIT_TEST(test_mpx_enabled),
};

UNIT_MAIN(tests)
