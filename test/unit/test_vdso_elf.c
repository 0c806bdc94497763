// SPDX-License-Identifier: GPL-2.0
/*
 * The vDSO's symbol table and the redirect (criu/core/vdso-elf.c), on the
 * vDSOs of three real kernels (test/unit/vdso/: this host's 6.18,
 * Debian's stock 6.1 and the project's patched 6.1, copied from their
 * [vdso] areas): every ordered pair redirected, each patched entry decoded
 * and followed, nothing else of the image touched; then the checks on
 * damaged images (cut short, bytes flipped), which must fail cleanly.
 */
#include <stdint.h>
#include <string.h>

#include "core/vdso-elf.h"
#include "unit.h"

#define IMG_MAX		16384
#define OLD_BASE	0x7f0000100000ULL
#define NEAR_BASE	0x7f0000040000ULL	/* where a new vDSO might go */

static void unit_setup(void)
{
}

struct kernel {
	const char *file;
	uint8_t img[IMG_MAX];
	size_t len;
	int entries;		/* distinct entry points */
	struct vdso_syms syms;
};

static struct kernel k[] = {
	{ .file = "6.18-host.so", .entries = 6 },	/* with getrandom */
	{ .file = "6.1-debian.so", .entries = 6 },	/* with sgx_enter_enclave */
	{ .file = "6.1-patched.so", .entries = 5 },
};

#define NK	((int)(sizeof(k) / sizeof(k[0])))

static int load(struct kernel *kn)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", VDSO_DIR, kn->file);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	kn->len = fread(kn->img, 1, sizeof(kn->img), f);
	fclose(f);
	return kn->len ? 0 : -1;
}

static void test_parse(void)
{
	/* offsets as readelf --dyn-syms shows them (first PT_LOAD at 0) */
	static const struct {
		int k;
		const char *name;
		uint64_t off;
	} want[] = {
		{ 0, "__vdso_clock_gettime", 0xaf0 }, { 0, "clock_gettime", 0xaf0 },
		{ 0, "__vdso_gettimeofday", 0x810 }, { 0, "__vdso_time", 0xac0 },
		{ 0, "__vdso_getcpu", 0xf00 }, { 0, "__vdso_clock_getres", 0xe80 },
		{ 0, "__vdso_getrandom", 0xf40 },
		{ 1, "__vdso_clock_gettime", 0x960 }, { 1, "__vdso_sgx_enter_enclave", 0xc50 },
		{ 2, "__vdso_clock_gettime", 0x920 }, { 2, "__vdso_getcpu", 0xc70 },
	};
	const struct vdso_sym *s;
	const char *why;
	size_t i;
	int j;

	for (j = 0; j < NK; j++) {
		require(!load(&k[j]), "can't read %s/%s", VDSO_DIR, k[j].file);
		expect(!vdso_parse(k[j].img, k[j].len, &k[j].syms, &why), "%s: %s", k[j].file,
		       why);
	}
	expect(k[0].syms.nr == 12 && k[1].syms.nr == 11 && k[2].syms.nr == 10,
	       "functions: %d %d %d", k[0].syms.nr, k[1].syms.nr, k[2].syms.nr);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		s = vdso_find(&k[want[i].k].syms, want[i].name);
		expect(s && s->off == want[i].off, "%s in %s: %#lx", want[i].name,
		       k[want[i].k].file, s ? (unsigned long)s->off : 0UL);
	}
	expect(!vdso_find(&k[2].syms, "__vdso_getrandom"), "6.1 has no getrandom");
	expect(!vdso_same_entries(&k[1].syms, &k[2].syms), "6.1 stock vs patched");
	expect(vdso_same_entries(&k[2].syms, &k[2].syms), "itself");
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/* What the entry at @off of the patched @img does: a jump's target, a call number, -1. */
static void check_entry(const struct kernel *o, const struct kernel *n, const uint8_t *img,
			const struct vdso_sym *os)
{
	static const uint8_t enosys[] = { 0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3 };
	const struct vdso_sym *ns = vdso_find(&n->syms, os->name);
	const uint8_t *at = img + os->off;
	uint64_t to;
	int i, twin = 0;

	/* an alias of a name the new one has is jumped too */
	for (i = 0; !ns && i < o->syms.nr; i++)
		if (o->syms.sym[i].off == os->off && vdso_find(&n->syms, o->syms.sym[i].name)) {
			ns = vdso_find(&n->syms, o->syms.sym[i].name);
			twin = 1;
		}
	if (ns) {
		to = OLD_BASE + os->off + 5 + le32(at + 1);
		expect(at[0] == 0xe9 && to == NEAR_BASE + ns->off, "%s -> %s: %s%s: %02x to %#lx",
		       o->file, n->file, os->name, twin ? " (alias)" : "", at[0],
		       (unsigned long)to);
	} else if (!strcmp(os->name, "__vdso_getrandom") || !strcmp(os->name, "getrandom")) {
		expect(at[0] == 0xb8 && le32(at + 1) == 318 && at[5] == 0x0f && at[6] == 0x05 &&
		       at[7] == 0xc3, "%s -> %s: getrandom is not its system call", o->file,
		       n->file);
	} else {
		expect(!memcmp(at, enosys, sizeof(enosys)), "%s -> %s: %s is not -ENOSYS",
		       o->file, n->file, os->name);
	}
}

static int is_entry(const struct vdso_syms *s, uint64_t i)
{
	int j;

	for (j = 0; j < s->nr; j++)
		if (i >= s->sym[j].off && i < s->sym[j].off + 8)
			return 1;
	return 0;
}

static void test_redirect_pairs(void)
{
	static uint8_t img[IMG_MAX];
	struct vdso_redirect r;
	const char *why;
	int a, b, i, changed;
	uint64_t j;

	for (a = 0; a < NK; a++)
		for (b = 0; b < NK; b++) {
			require(k[a].syms.nr && k[b].syms.nr, "images not parsed");
			memcpy(img, k[a].img, k[a].len);
			if (vdso_redirect(img, k[a].len, OLD_BASE, &k[a].syms, NEAR_BASE,
					  &k[b].syms, &r, &why)) {
				expect(0, "%s -> %s: %s", k[a].file, k[b].file, why);
				continue;
			}
			/* one patch per entry, whatever its names */
			expect(r.nr == k[a].entries, "%s -> %s: %d patches", k[a].file,
			       k[b].file, r.nr);
			for (i = 0; i < k[a].syms.nr; i++)
				check_entry(&k[a], &k[b], img, &k[a].syms.sym[i]);
			changed = 0;
			for (j = 0; j < k[a].len; j++)
				if (img[j] != k[a].img[j] && !is_entry(&k[a].syms, j))
					changed++;
			expect(!changed, "%s -> %s: %d bytes changed off the entries",
			       k[a].file, k[b].file, changed);
		}
}

static void test_out_of_reach(void)
{
	static uint8_t img[IMG_MAX];
	struct vdso_redirect r;
	const char *why = NULL;

	memcpy(img, k[0].img, k[0].len);
	expect(vdso_redirect(img, k[0].len, OLD_BASE, &k[0].syms, OLD_BASE + (3ULL << 30),
			     &k[1].syms, &r, &why) && why && strstr(why, "2 GiB"),
	       "a jump of 3 GiB: %s", why ? why : "accepted");
}

/* A stand-in of rand(): the same damage on every run. */
static uint32_t next(uint32_t *s)
{
	*s = *s * 1103515245 + 12345;
	return *s >> 8;
}

/* Whatever the bytes, a parse that succeeds names entries inside the image. */
static void sane(const struct vdso_syms *s, size_t len, const char *what)
{
	int i;

	for (i = 0; i < s->nr; i++)
		expect(s->sym[i].off + 5 <= len && s->sym[i].name[0], "%s: %s at %#lx", what,
		       s->sym[i].name, (unsigned long)s->sym[i].off);
}

static void test_damaged(void)
{
	static uint8_t img[IMG_MAX];
	struct vdso_syms s;
	struct vdso_redirect r;
	const char *why;
	uint32_t seed = 14;
	size_t len;
	int a, i, n;

	for (a = 0; a < NK; a++)
		for (len = 0; len < k[a].len; len += 7)
			if (!vdso_parse(k[a].img, len, &s, &why))
				sane(&s, len, "cut short");
	for (i = 0; i < 20000; i++) {
		a = i % NK;
		memcpy(img, k[a].img, k[a].len);
		for (n = 1 + next(&seed) % 4; n; n--)
			img[next(&seed) % 1024] = next(&seed);
		if (vdso_parse(img, k[a].len, &s, &why))
			continue;
		sane(&s, k[a].len, "bytes flipped");
		/* and redirecting by a damaged table stays inside the buffer */
		vdso_redirect(img, k[a].len, OLD_BASE, &s, NEAR_BASE, &k[0].syms, &r, &why);
	}
	expect(vdso_parse(k[0].img, 16, &s, &why) && why, "a header cut short");
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_parse),
	UNIT_TEST(test_redirect_pairs),
	UNIT_TEST(test_out_of_reach),
	UNIT_TEST(test_damaged),
};

UNIT_MAIN(tests)
