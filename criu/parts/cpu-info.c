// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU description of a checkpoint and the compatibility rules that
 * decide whether a checkpoint can go on running here (Documentation/cpu.md).
 *
 * Three checks, named as CRIU names them (--cpu-cap):
 *  fpu  every XSAVE component the saved registers use is enabled here (in
 *       XCR0) and the XSAVE area has the same size: the registers can be
 *       loaded at all;
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

/* XSAVE state components by XCR0 bit (Intel SDM vol. 1, 13.1). */
static const char *const xfeature_names[] = {
	"x87", "sse", "avx", "mpx_bndregs", "mpx_bndcsr", "avx512_opmask",
	"avx512_zmm_hi256", "avx512_hi16_zmm", "pt", "pkru", "pasid", "cet_user",
	"cet_supervisor", "hdc", "uintr", "lbr", "hwp", "amx_tilecfg",
	"amx_tiledata", "apx",
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
		CpuidLeaf *l = &h->leaf[i];

		cpuid_leaf__init(l);
		l->leaf = leaf;
		l->subleaf = sub;
		h->pleaf[i] = l;
		/* absent leaves answer garbage, not zeros */
		if (leaf >= 0x80000000 ? leaf > xmax : leaf > max)
			continue;
		if (leaf == 7 && sub > sub7)
			continue;
		cpuid(leaf, sub, r);
		l->eax = r[0];
		l->ebx = r[1];
		l->ecx = r[2];
		l->edx = r[3];
	}
	h->e.vendor = h->vendor;
	h->e.leaves = h->pleaf;
	h->e.n_leaves = CPUINFO_NR_LEAVES;
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
	h->e.xsave_size = h->leaf[3].ebx;
	h->e.xsave_size_max = h->leaf[3].ecx;
	h->e.online_cpus = (char *)online;
	return 0;
}

/* ----------------------------------------------------------- comparing */

int cpuinfo_validate(const CpuinfoEntry *e)
{
	if (strlen(e->vendor) > 12 || e->n_leaves > 64 ||
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

#define WHY_MAX_ITEMS	16

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
		if (bit < (int)ARRAY_SIZE(xfeature_names))
			why_item(w, "%s", xfeature_names[bit]);
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
	uint64_t miss = need->xfeatures & ~host->xfeatures;
	int bad = 0;

	if (miss) {
		why_section(w, "XSAVE components");
		why_xfeatures(w, miss);
		bad = 1;
	}
	/* the kernel takes only an area of exactly its own size */
	if (need->xsave_size && need->xsave_size != host->xsave_size) {
		why_section(w, "XSAVE area");
		why_item(w, "of %u bytes (this CPU's: %u)", need->xsave_size,
			 host->xsave_size);
		bad = 1;
	}
	return bad;
}

static int check_ins(const CpuinfoEntry *img, const CpuinfoEntry *host, struct why *w)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < ARRAY_SIZE(ins_features); i++) {
		const struct cpu_feature *f = &ins_features[i];
		uint32_t bit = 1u << f->bit;

		if (!(word_of(img, f->word) & bit) || (word_of(host, f->word) & bit))
			continue;
		if (!bad)
			why_section(w, "instructions");
		why_item(w, "%s", f->name);
		bad = 1;
	}
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
			 const struct cpu_need *need, unsigned int caps, char *buf, size_t len)
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
		bad |= check_ins(img, &h->e, &w);
	return bad;
}

int cpuinfo_compare(const CpuinfoEntry *img, const struct cpu_need *need,
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
