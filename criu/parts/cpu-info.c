// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU description of a checkpoint and the compatibility rules that
 * decide whether a checkpoint can go on running here (Documentation/cpu.md).
 *
 * Three checks, named as CRIU names them (--cpu-cap):
 *  fpu  every XSAVE component the saved registers use is enabled here (in
 *       XCR0): the registers can be loaded at all (parts/regs.c puts each
 *       component where this CPU has it, task/xsave.c);
 *  ins  every instruction set of the table below that the dumping CPU had,
 *       this one has: the program may have chosen code paths (glibc's
 *       ifuncs, its own CPUID dispatch) by them once, at its start, and
 *       would die of SIGILL later;
 *  cpu  the CPUID feature words and XCR0 are identical: nothing the
 *       program could have seen has changed.
 * The CPUID words compared are those of leaves 1, 7.0, 7.1, 0xD.1 and
 * 0x80000001; family, model and the rest are recorded for messages only.
 */
#include <cpuid.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "parts/cpu-info.h"
#include "task/xsave.h"

enum { R_EAX, R_EBX, R_ECX, R_EDX };

/* The leaves recorded, in image order. */
static const uint32_t leaves[CPUINFO_NR_LEAVES][2] = {
	{ 1, 0 }, { 7, 0 }, { 7, 1 }, { 0xd, 0 }, { 0xd, 1 }, { 0x80000001, 0 },
};

/* The feature words compared. */
enum cpu_word {
	W_1_EDX, W_1_ECX, W_7_0_EBX, W_7_0_ECX, W_7_0_EDX, W_7_1_EAX,
	W_D_1_EAX, W_81_ECX, W_81_EDX, W_NR,
};

static const struct {
	uint32_t leaf, subleaf;
	int reg;
	const char *name;
} words[W_NR] = {
	[W_1_EDX]	= { 1, 0, R_EDX, "1.edx" },
	[W_1_ECX]	= { 1, 0, R_ECX, "1.ecx" },
	[W_7_0_EBX]	= { 7, 0, R_EBX, "7.0.ebx" },
	[W_7_0_ECX]	= { 7, 0, R_ECX, "7.0.ecx" },
	[W_7_0_EDX]	= { 7, 0, R_EDX, "7.0.edx" },
	[W_7_1_EAX]	= { 7, 1, R_EAX, "7.1.eax" },
	[W_D_1_EAX]	= { 0xd, 1, R_EAX, "0xd.1.eax" },
	[W_81_ECX]	= { 0x80000001, 0, R_ECX, "0x80000001.ecx" },
	[W_81_EDX]	= { 0x80000001, 0, R_EDX, "0x80000001.edx" },
};

/*
 * The "ins" set: features that are instructions (or registers) a user
 * program can execute and that fault where absent. Left out on purpose:
 * performance hints (erms, fsrm), instructions that are NOPs where absent
 * (hle, cldemote), and what only the kernel uses (xsaves, pcid, ...).
 * Names are those of /proc/cpuinfo.
 */
static const struct cpu_feature {
	const char *name;
	uint8_t word, bit;
} ins_features[] = {
	{ "fpu", W_1_EDX, 0 }, { "tsc", W_1_EDX, 4 }, { "cx8", W_1_EDX, 8 },
	{ "cmov", W_1_EDX, 15 }, { "mmx", W_1_EDX, 23 }, { "fxsr", W_1_EDX, 24 },
	{ "sse", W_1_EDX, 25 }, { "sse2", W_1_EDX, 26 },
	{ "pni", W_1_ECX, 0 }, { "pclmulqdq", W_1_ECX, 1 }, { "ssse3", W_1_ECX, 9 },
	{ "fma", W_1_ECX, 12 }, { "cx16", W_1_ECX, 13 }, { "sse4_1", W_1_ECX, 19 },
	{ "sse4_2", W_1_ECX, 20 }, { "movbe", W_1_ECX, 22 }, { "popcnt", W_1_ECX, 23 },
	{ "aes", W_1_ECX, 25 }, { "xsave", W_1_ECX, 26 }, { "avx", W_1_ECX, 28 },
	{ "f16c", W_1_ECX, 29 }, { "rdrand", W_1_ECX, 30 },
	{ "fsgsbase", W_7_0_EBX, 0 }, { "bmi1", W_7_0_EBX, 3 }, { "avx2", W_7_0_EBX, 5 },
	{ "bmi2", W_7_0_EBX, 8 }, { "rtm", W_7_0_EBX, 11 }, { "avx512f", W_7_0_EBX, 16 },
	{ "avx512dq", W_7_0_EBX, 17 }, { "rdseed", W_7_0_EBX, 18 }, { "adx", W_7_0_EBX, 19 },
	{ "avx512ifma", W_7_0_EBX, 21 }, { "clflushopt", W_7_0_EBX, 23 },
	{ "clwb", W_7_0_EBX, 24 }, { "avx512pf", W_7_0_EBX, 26 },
	{ "avx512er", W_7_0_EBX, 27 }, { "avx512cd", W_7_0_EBX, 28 },
	{ "sha_ni", W_7_0_EBX, 29 }, { "avx512bw", W_7_0_EBX, 30 },
	{ "avx512vl", W_7_0_EBX, 31 },
	{ "avx512vbmi", W_7_0_ECX, 1 }, { "pku", W_7_0_ECX, 3 }, { "ospke", W_7_0_ECX, 4 },
	{ "waitpkg", W_7_0_ECX, 5 }, { "avx512_vbmi2", W_7_0_ECX, 6 },
	{ "gfni", W_7_0_ECX, 8 }, { "vaes", W_7_0_ECX, 9 }, { "vpclmulqdq", W_7_0_ECX, 10 },
	{ "avx512_vnni", W_7_0_ECX, 11 }, { "avx512_bitalg", W_7_0_ECX, 12 },
	{ "avx512_vpopcntdq", W_7_0_ECX, 14 }, { "rdpid", W_7_0_ECX, 22 },
	{ "movdiri", W_7_0_ECX, 27 }, { "movdir64b", W_7_0_ECX, 28 },
	{ "avx512_4vnniw", W_7_0_EDX, 2 }, { "avx512_4fmaps", W_7_0_EDX, 3 },
	{ "avx512_vp2intersect", W_7_0_EDX, 8 }, { "serialize", W_7_0_EDX, 14 },
	{ "tsxldtrk", W_7_0_EDX, 16 }, { "amx_bf16", W_7_0_EDX, 22 },
	{ "avx512_fp16", W_7_0_EDX, 23 }, { "amx_tile", W_7_0_EDX, 24 },
	{ "amx_int8", W_7_0_EDX, 25 },
	{ "sha512", W_7_1_EAX, 0 }, { "sm3", W_7_1_EAX, 1 }, { "sm4", W_7_1_EAX, 2 },
	{ "avx_vnni", W_7_1_EAX, 4 }, { "avx512_bf16", W_7_1_EAX, 5 },
	{ "cmpccxadd", W_7_1_EAX, 7 }, { "amx_fp16", W_7_1_EAX, 21 },
	{ "avx_ifma", W_7_1_EAX, 23 },
	{ "xsaveopt", W_D_1_EAX, 0 }, { "xsavec", W_D_1_EAX, 1 }, { "xgetbv1", W_D_1_EAX, 2 },
	{ "lahf_lm", W_81_ECX, 0 }, { "abm", W_81_ECX, 5 }, { "sse4a", W_81_ECX, 6 },
	{ "3dnowprefetch", W_81_ECX, 8 }, { "xop", W_81_ECX, 11 }, { "fma4", W_81_ECX, 16 },
	{ "tbm", W_81_ECX, 21 },
	{ "rdtscp", W_81_EDX, 27 }, { "lm", W_81_EDX, 29 },
};

#define OSXSAVE_BIT	27	/* CPUID 1.ecx: XGETBV usable */

/* ---------------------------------------------------------------- this CPU */

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static void read_brand(struct cpuinfo_host *h, uint32_t xmax)
{
	uint32_t r[4];
	char *s = h->model_name;
	int i;

	if (xmax < 0x80000004)
		return;
	for (i = 0; i < 3; i++) {
		cpuid(0x80000002 + i, 0, r);
		memcpy(h->model_name + 16 * i, r, 16);
	}
	h->model_name[48] = 0;
	while (*s == ' ')
		s++;
	memmove(h->model_name, s, strlen(s) + 1);
	h->e.model_name = h->model_name;
}

static void put_leaf(struct cpuinfo_host *h, uint32_t leaf, uint32_t sub, int read)
{
	CpuidLeaf *l = &h->leaf[h->e.n_leaves];
	uint32_t r[4];

	cpuid_leaf__init(l);
	l->leaf = leaf;
	l->subleaf = sub;
	h->pleaf[h->e.n_leaves++] = l;
	if (!read)
		return;
	cpuid(leaf, sub, r);
	l->eax = r[0];
	l->ebx = r[1];
	l->ecx = r[2];
	l->edx = r[3];
}

/* The XSAVE layout: 0xD.i for each component the CPU knows or the kernel enabled. */
static void read_xsave_leaves(struct cpuinfo_host *h)
{
	uint64_t known = ((uint64_t)h->leaf[3].edx << 32) | h->leaf[3].eax | h->e.xfeatures;
	int i;

	for (i = XSAVE_FIRST_EXT; i < XSAVE_NR; i++)
		if (known & (1ULL << i))
			put_leaf(h, 0xd, i, 1);
}

int cpuinfo_host_read(struct cpuinfo_host *h, const char *online)
{
	uint32_t r[4], max, xmax, sub7 = 0, eax1;
	int i;

	memset(h, 0, sizeof(*h));
	cpuinfo_entry__init(&h->e);
	cpuid(0, 0, r);
	max = r[0];
	memcpy(h->vendor, &r[1], 4);
	memcpy(h->vendor + 4, &r[3], 4);
	memcpy(h->vendor + 8, &r[2], 4);
	cpuid(0x80000000, 0, r);
	xmax = r[0] >= 0x80000000 ? r[0] : 0;
	if (max >= 7) {
		cpuid(7, 0, r);
		sub7 = r[0];
	}
	for (i = 0; i < CPUINFO_NR_LEAVES; i++) {
		uint32_t leaf = leaves[i][0], sub = leaves[i][1];

		/* absent leaves answer garbage, not zeros */
		put_leaf(h, leaf, sub, !(leaf >= 0x80000000 ? leaf > xmax : leaf > max) &&
			 !(leaf == 7 && sub > sub7));
	}
	h->e.vendor = h->vendor;
	h->e.leaves = h->pleaf;
	eax1 = h->leaf[0].eax;
	h->e.family = (eax1 >> 8) & 0xf;
	h->e.model = (eax1 >> 4) & 0xf;
	if (h->e.family == 6 || h->e.family == 0xf)
		h->e.model |= ((eax1 >> 16) & 0xf) << 4;
	if (h->e.family == 0xf)
		h->e.family += (eax1 >> 20) & 0xff;
	h->e.stepping = eax1 & 0xf;
	read_brand(h, xmax);
	if (h->leaf[0].ecx & (1u << OSXSAVE_BIT))
		h->e.xfeatures = xgetbv0();
	if (max >= 0xd)
		read_xsave_leaves(h);
	h->e.xsave_size = h->leaf[3].ebx;
	h->e.xsave_size_max = h->leaf[3].ecx;
	h->e.online_cpus = (char *)online;
	h->e.has_x86_64_level = 1;
	h->e.x86_64_level = cpuinfo_level(&h->e);
	return 0;
}

/* ----------------------------------------------------------- comparing */

int cpuinfo_validate(const CpuinfoEntry *e)
{
	if (strlen(e->vendor) > 12 || e->n_leaves > 128 ||
	    e->xsave_size > (1 << 20) || e->xsave_size_max > (1 << 20)) {
		pr_err("Image cpuinfo.img is invalid: vendor '%.16s', %zu CPUID leaves, "
		       "XSAVE size %u", e->vendor, e->n_leaves, e->xsave_size);
		return -1;
	}
	return 0;
}

static uint32_t word_of(const CpuinfoEntry *e, int w)
{
	size_t i;

	for (i = 0; i < e->n_leaves; i++) {
		const CpuidLeaf *l = e->leaves[i];

		if (l->leaf != words[w].leaf || l->subleaf != words[w].subleaf)
			continue;
		switch (words[w].reg) {
		case R_EAX: return l->eax;
		case R_EBX: return l->ebx;
		case R_ECX: return l->ecx;
		default: return l->edx;
		}
	}
	return 0;
}

/* A growing, bounded list of names for the one error line. */
struct why {
	char *buf;
	size_t len, off;
	int items, shown;
};

#define WHY_MAX_ITEMS	96	/* every instruction set of the table */

static void why_add(struct why *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->off >= w->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->off, w->len - w->off, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->off = min(w->off + n, w->len - 1);
}

static void why_section(struct why *w, const char *title)
{
	if (w->off)
		why_add(w, "; ");
	why_add(w, "%s", title);
	w->items = 0;
}

static void why_item(struct why *w, const char *fmt, ...)
{
	char item[64];
	va_list ap;

	if (w->items++ == WHY_MAX_ITEMS) {
		why_add(w, ", ...");
		return;
	}
	if (w->items > WHY_MAX_ITEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	why_add(w, "%s%s", w->items > 1 ? ", " : " ", item);
}

static void why_xfeatures(struct why *w, uint64_t mask)
{
	int bit;

	for (bit = 0; bit < 64; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		if (xsave_feature_name(bit))
			why_item(w, "%s", xsave_feature_name(bit));
		else
			why_item(w, "xfeature %d", bit);
	}
}

static const char *feature_name(int word, int bit)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ins_features); i++)
		if (ins_features[i].word == word && ins_features[i].bit == bit)
			return ins_features[i].name;
	return NULL;
}

static void why_bits(struct why *w, int word, uint32_t bits)
{
	const char *name;
	int bit;

	for (bit = 0; bit < 32; bit++) {
		if (!(bits & (1u << bit)))
			continue;
		name = feature_name(word, bit);
		if (name)
			why_item(w, "%s", name);
		else
			why_item(w, "cpuid %s bit %d", words[word].name, bit);
	}
}

static int check_fpu(const CpuinfoEntry *host, const struct cpu_need *need,
		     struct why *w)
{
	/*
	 * no memory of the task has a protection key: PKRU goes without loss;
	 * MPX's go when MPX was off, which only the registers tell (regs.c)
	 */
	uint64_t miss = need->xfeatures & ~host->xfeatures & ~(XSAVE_PKRU | XSAVE_MPX);
	int bad = 0;

	/* where they lie and the area's size may differ: regs.c converts */
	if (miss) {
		why_section(w, "XSAVE components");
		why_xfeatures(w, miss);
		bad = 1;
	}
	return bad;
}

/*
 * The features glibc.cpu.hwcaps can take away from glibc: the names its
 * x86 tunable callback honours (glibc 2.33 to 2.36, case-sensitive: glibc
 * ignores "-avx512f" and every name not listed), that are in our table.
 */
static const struct {
	const char *glibc, *ours;
} glibc_masks[] = {
	{ "AVX", "avx" }, { "CX8", "cx8" }, { "FMA", "fma" }, { "RTM", "rtm" },
	{ "AVX2", "avx2" }, { "BMI1", "bmi1" }, { "BMI2", "bmi2" }, { "CMOV", "cmov" },
	{ "FMA4", "fma4" }, { "SSE2", "sse2" }, { "LZCNT", "abm" }, { "MOVBE", "movbe" },
	{ "SSSE3", "ssse3" }, { "XSAVE", "xsave" }, { "POPCNT", "popcnt" },
	{ "SSE4_1", "sse4_1" }, { "SSE4_2", "sse4_2" }, { "XSAVEC", "xsavec" },
	{ "AVX512F", "avx512f" }, { "AVX512CD", "avx512cd" }, { "AVX512BW", "avx512bw" },
	{ "AVX512DQ", "avx512dq" }, { "AVX512ER", "avx512er" }, { "AVX512PF", "avx512pf" },
	{ "AVX512VL", "avx512vl" },
};

/* The x86-64 psABI levels (v2, v3, v4: each adds to the one below). */
static const char *const level_features[5][10] = {
	[1] = { "lm", "cmov", "cx8", "fpu", "fxsr", "mmx", "sse", "sse2" },
	[2] = { "cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3" },
	[3] = { "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave" },
	[4] = { "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl" },
};
#define XSTATE_AVX	0x6ULL		/* sse, avx */
#define XSTATE_AVX512	0xe6ULL		/* and avx512_opmask, _zmm_hi256, _hi16_zmm */
#define XSTATE_AMX	0x60000ULL	/* amx_tilecfg, amx_tiledata */
/* ... and the XSAVE components the kernel must enable for them */
static const uint64_t level_xcr0[5] = { 0, 0, 0, XSTATE_AVX, XSTATE_AVX512 };

static const struct cpu_feature *find_feature(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ins_features); i++)
		if (!strcmp(name, ins_features[i].name))
			return &ins_features[i];
	return NULL;
}

/* The feature bits of levels 1..@level. */
static void level_words(int level, uint32_t out[W_NR])
{
	const struct cpu_feature *f;
	int l, i;

	for (l = 1; l <= level && l < 5; l++)
		for (i = 0; i < 10 && level_features[l][i]; i++) {
			f = find_feature(level_features[l][i]);
			out[f->word] |= 1u << f->bit;
		}
}

int cpuinfo_level(const CpuinfoEntry *e)
{
	uint32_t need[W_NR];
	int l, w;

	for (l = 1; l < 5; l++) {
		memset(need, 0, sizeof(need));
		level_words(l, need);
		for (w = 0; w < W_NR; w++)
			if (need[w] & ~word_of(e, w))
				return l - 1;
		if ((e->xfeatures & level_xcr0[l]) != level_xcr0[l])
			return l - 1;
	}
	return 4;
}

/* The "-NAME" items of a glibc.cpu.hwcaps value that glibc honours, as feature bits. */
static void mask_words(const char *mask, uint32_t out[W_NR])
{
	const struct cpu_feature *f;
	const char *p, *end;
	size_t i, n;

	for (p = mask; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		n = end - p;
		for (i = 0; *p == '-' && i < ARRAY_SIZE(glibc_masks); i++) {
			if (strlen(glibc_masks[i].glibc) != n - 1 ||
			    strncmp(p + 1, glibc_masks[i].glibc, n - 1))
				continue;
			f = find_feature(glibc_masks[i].ours);
			out[f->word] |= 1u << f->bit;
		}
	}
}

/* glibc's name of @f for glibc.cpu.hwcaps, NULL if glibc can't be kept from it. */
static const char *glibc_name(const struct cpu_feature *f)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(glibc_masks); i++)
		if (!strcmp(f->name, glibc_masks[i].ours))
			return glibc_masks[i].glibc;
	return NULL;
}

static void add_name(char *buf, size_t len, const char *prefix, const char *name)
{
	size_t off = strlen(buf);

	snprintf(buf + off, len - off, "%s%s%s", off ? "," : "", prefix, name);
}

/* Why the missing instructions matter, and what makes such a task movable. */
static void why_advice(struct why *w, const struct cpu_need *need, const char *tunable,
		       const char *unmaskable, int host_level)
{
	why_add(w, " (the task may have chosen code paths by them when it started: glibc's "
		"ifuncs, libraries and JITs that read CPUID; it would die of SIGILL");
	if (need->hwcaps_level > (uint32_t)host_level)
		why_add(w, "; its libraries come from glibc-hwcaps/x86-64-v%u (%s), this CPU "
			"is x86-64-v%d", need->hwcaps_level, need->hwcaps_path ?: "",
			host_level);
	if (need->jit)
		why_add(w, "; it runs code generated at run time (%s): a JIT that reads "
			"CPUID itself, which no mask binds", need->jit);
	else if (tunable[0])
		why_add(w, "; start workloads with GLIBC_TUNABLES=glibc.cpu.hwcaps=%s to make "
			"them movable here, Documentation/cpu.md", tunable);
	if (unmaskable[0])
		why_add(w, "; no glibc tunable hides %s: only the program's own CPUID checks "
			"use them, --cpu-cap=fpu accepts that risk", unmaskable);
	why_add(w, ")");
}

/*
 * The XSAVE components an instruction set's registers live in: where the
 * kernel did not enable them (XCR0), its instructions fault (#UD) whatever
 * CPUID says, and glibc counts them unusable.
 */
static uint64_t state_of(const struct cpu_feature *f)
{
	static const char *const avx[] = {
		"avx", "avx2", "fma", "f16c", "vaes", "vpclmulqdq", "xop", "fma4",
	};
	size_t i;

	if (!strncmp(f->name, "avx512", 6))
		return XSTATE_AVX512;
	if (!strncmp(f->name, "amx_", 4))
		return XSTATE_AMX;
	if (!strncmp(f->name, "avx_", 4))
		return XSTATE_AVX;
	for (i = 0; i < ARRAY_SIZE(avx); i++)
		if (!strcmp(f->name, avx[i]))
			return XSTATE_AVX;
	return 0;
}

/*
 * RDPKRU and WRPKRU act on memory with a protection key, which a dump
 * refuses (parts/cpu-use.c): a destination without them (its CPU or its
 * kernel, CPUID's ospke) loses nothing the task had.
 */
static int pkeys_only(const struct cpu_feature *f)
{
	return !strcmp(f->name, "pku") || !strcmp(f->name, "ospke");
}

/* The CPU has the instruction set and its kernel enabled its registers. */
static int usable(const CpuinfoEntry *e, const struct cpu_feature *f)
{
	uint64_t state = state_of(f);

	return (word_of(e, f->word) & (1u << f->bit)) && (e->xfeatures & state) == state;
}

/*
 * The instruction sets the dumping CPU had and this one lacks, but those
 * the task's glibc was told to ignore (need->mask), unless its libraries'
 * level needs them or it runs JIT code: those are listed in need->excused.
 */
static int check_ins(const CpuinfoEntry *img, const CpuinfoEntry *host,
		     struct cpu_need *need, struct why *w)
{
	uint32_t masked[W_NR] = { 0 }, needed[W_NR] = { 0 };
	char tunable[512] = "", unmaskable[512] = "";
	size_t i;
	int bad = 0;

	if (need->mask && !need->jit)
		mask_words(need->mask, masked);
	level_words(need->hwcaps_level, needed);
	need->excused[0] = 0;
	for (i = 0; i < ARRAY_SIZE(ins_features); i++) {
		const struct cpu_feature *f = &ins_features[i];
		uint32_t bit = 1u << f->bit;

		if (!usable(img, f) || usable(host, f) || pkeys_only(f))
			continue;
		if (masked[f->word] & ~needed[f->word] & bit) {
			add_name(need->excused, sizeof(need->excused), "", f->name);
			continue;
		}
		if (!bad)
			why_section(w, "instructions");
		/* CPUID has it here, the kernel did not enable its registers */
		why_item(w, "%s%s", f->name,
			 word_of(host, f->word) & bit ? " (registers not enabled here)" : "");
		if (glibc_name(f))
			add_name(tunable, sizeof(tunable), "-", glibc_name(f));
		else
			add_name(unmaskable, sizeof(unmaskable), "", f->name);
		bad = 1;
	}
	if (bad)
		why_advice(w, need, tunable, unmaskable, cpuinfo_level(host));
	return bad;
}

static int check_cpu(const CpuinfoEntry *img, const CpuinfoEntry *host, struct why *w)
{
	uint32_t a, b;
	int i, bad = 0, missing = 0, extra = 0;

	if (strcmp(img->vendor, host->vendor)) {
		why_section(w, "vendor");
		why_item(w, "%s (this CPU: %s)", img->vendor, host->vendor);
		bad = 1;
	}
	for (i = 0; i < W_NR; i++) {
		a = word_of(img, i);
		b = word_of(host, i);
		if (!(a & ~b))
			continue;
		if (!missing++)
			why_section(w, "CPUID features");
		why_bits(w, i, a & ~b);
	}
	for (i = 0; i < W_NR; i++) {
		a = word_of(img, i);
		b = word_of(host, i);
		if (!(b & ~a))
			continue;
		if (!extra++)
			why_section(w, "CPUID features this CPU has in addition");
		why_bits(w, i, b & ~a);
	}
	if (img->xfeatures != host->xfeatures) {
		why_section(w, "XCR0");
		why_item(w, "%#llx (this CPU: %#llx)", (unsigned long long)img->xfeatures,
			 (unsigned long long)host->xfeatures);
		bad = 1;
	}
	return bad || missing || extra;
}

int cpuinfo_compare_host(const CpuinfoEntry *img, const struct cpuinfo_host *h,
			 struct cpu_need *need, unsigned int caps, char *buf, size_t len)
{
	struct why w = { .buf = buf, .len = len };
	int bad = 0;

	if (!len)
		return -1;
	buf[0] = 0;
	if (caps & CPU_CAP_FPU)
		bad |= check_fpu(&h->e, need, &w);
	/* "cpu" reports every missing feature, "ins" ones among them too */
	if (caps & CPU_CAP_CPU)
		bad |= check_cpu(img, &h->e, &w);
	else if (caps & CPU_CAP_INS)
		bad |= check_ins(img, &h->e, need, &w);
	return bad;
}

int cpuinfo_compare(const CpuinfoEntry *img, struct cpu_need *need,
		    unsigned int caps, char *buf, size_t len)
{
	struct cpuinfo_host h;

	if (cpuinfo_host_read(&h, NULL))
		return -1;
	return cpuinfo_compare_host(img, &h, need, caps, buf, len);
}

char *cpuinfo_read_online(void)
{
	char *s = read_file(AT_FDCWD, CPU_ONLINE_PATH, NULL);

	if (!s) {
		pr_perror("Can't read %s", CPU_ONLINE_PATH);
		return NULL;
	}
	s[strcspn(s, "\n")] = 0;
	return s;
}
