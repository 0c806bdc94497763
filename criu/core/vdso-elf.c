// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a vDSO's symbol table and redirecting its entry points.
 *
 * glibc (and Go's runtime, and others) look the vDSO's functions up once,
 * at start, and keep their addresses. A task restored on a kernel whose
 * vDSO differs goes on calling those addresses: the old image is put back
 * where it was with each entry rewritten into a jump to the function of
 * the same name in the new vDSO (parts/mm-vdso.c maps it). Only entries are ever
 * reached from outside, and only they are changed; the rest of the old
 * image stays as it was, so its ELF headers, symbol table and unwind
 * tables still describe it for whoever parses it later
 * (AT_SYSINFO_EHDR still points there).
 *
 * The input is a copy of mapped bytes or image data: every offset, count
 * and string is checked against the buffer before it is used.
 */
#include <elf.h>
#include <string.h>

#include "core/vdso-elf.h"

#define JMP_LEN		5	/* e9 rel32 */
#define STUB_LEN	8	/* mov $nr, %eax; syscall; ret  or  mov $-ENOSYS, %rax; ret */

/* [off, off + n) lies within a buffer of @len bytes */
static int within(uint64_t off, uint64_t n, size_t len)
{
	return off <= len && n <= len - off;
}

static const Elf64_Shdr *section(const uint8_t *img, size_t len, const Elf64_Ehdr *eh,
				 unsigned int i)
{
	if (i >= eh->e_shnum)
		return NULL;
	return (const Elf64_Shdr *)(img + eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr));
}

static const char *check_header(const uint8_t *img, size_t len, const Elf64_Ehdr **out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return "no ELF header";
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return "not a 64-bit little-endian ELF image";
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !within(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), len))
		return "program headers outside the image";
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !within(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), len))
		return "section headers outside the image";
	*out = eh;
	return NULL;
}

/* The p_vaddr of the first PT_LOAD: symbol values are relative to it. */
static const char *load_vaddr(const uint8_t *img, const Elf64_Ehdr *eh, uint64_t *vaddr)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			*vaddr = ph[i].p_vaddr;
			return NULL;
		}
	return "no PT_LOAD segment";
}

static int add_sym(struct vdso_syms *out, const char *name, size_t max, uint64_t off,
		   uint64_t size)
{
	size_t n = strnlen(name, max);
	struct vdso_sym *s;

	if (n == max || n == 0 || n >= VDSO_NAME_MAX)
		return n == max ? -1 : 0;	/* unterminated: bad; empty or long: not ours */
	if (out->nr == VDSO_SYMS_MAX)
		return -1;
	s = &out->sym[out->nr++];
	memcpy(s->name, name, n + 1);
	s->off = off;
	s->size = size;
	return 0;
}

static const char *read_dynsym(const uint8_t *img, size_t len, const Elf64_Ehdr *eh,
			       const Elf64_Shdr *sh, uint64_t vaddr, struct vdso_syms *out)
{
	const Elf64_Shdr *str = section(img, len, eh, sh->sh_link);
	const Elf64_Sym *sym;
	uint64_t i, n, off;

	if (!str || str->sh_type != SHT_STRTAB || !within(str->sh_offset, str->sh_size, len))
		return "the symbol names are outside the image";
	if (sh->sh_entsize != sizeof(Elf64_Sym) || !within(sh->sh_offset, sh->sh_size, len))
		return "the symbol table is outside the image";
	sym = (const Elf64_Sym *)(img + sh->sh_offset);
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
		    sym[i].st_shndx >= SHN_LORESERVE)
			continue;
		if (ELF64_ST_BIND(sym[i].st_info) != STB_GLOBAL &&
		    ELF64_ST_BIND(sym[i].st_info) != STB_WEAK)
			continue;
		off = sym[i].st_value - vaddr;
		if (sym[i].st_value < vaddr || !within(off, JMP_LEN, len) ||
		    sym[i].st_name >= str->sh_size)
			return "a function outside the image";
		if (add_sym(out, (const char *)img + str->sh_offset + sym[i].st_name,
			    str->sh_size - sym[i].st_name, off, sym[i].st_size))
			return "a symbol name that does not end, or too many functions";
	}
	return NULL;
}

int vdso_parse(const void *buf, size_t len, struct vdso_syms *out, const char **why)
{
	const uint8_t *img = buf;
	const Elf64_Ehdr *eh = NULL;
	const Elf64_Shdr *sh;
	uint64_t vaddr = 0;
	unsigned int i;

	out->nr = 0;
	*why = check_header(img, len, &eh);
	if (!*why)
		*why = load_vaddr(img, eh, &vaddr);
	for (i = 0; !*why && i < eh->e_shnum; i++) {
		sh = section(img, len, eh, i);
		if (sh->sh_type == SHT_DYNSYM)
			break;
	}
	if (!*why && i == eh->e_shnum)
		*why = "no dynamic symbol table";
	if (!*why)
		*why = read_dynsym(img, len, eh, sh, vaddr, out);
	if (!*why && !out->nr)
		*why = "no function";
	return *why ? -1 : 0;
}

const struct vdso_sym *vdso_find(const struct vdso_syms *s, const char *name)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->sym[i].name, name))
			return &s->sym[i];
	return NULL;
}

int vdso_same_entries(const struct vdso_syms *old, const struct vdso_syms *new)
{
	const struct vdso_sym *n;
	int i;

	for (i = 0; i < old->nr; i++) {
		n = vdso_find(new, old->sym[i].name);
		if (!n || n->off != old->sym[i].off)
			return 0;
	}
	return 1;
}

/*
 * A function the new vDSO lacks still does what it did: through its system
 * call, which takes the same arguments in the same registers (none of
 * these has a fourth, which would go in r10 rather than rcx).
 */
static int fallback_nr(const char *name)
{
	static const struct {
		const char *name;
		int nr;
	} calls[] = {
		{ "clock_gettime", 228 }, { "gettimeofday", 96 }, { "time", 201 },
		{ "getcpu", 309 }, { "clock_getres", 229 },
		{ "getrandom", 318 },	/* the state arguments only spare the call */
	};
	size_t i;

	if (!strncmp(name, "__vdso_", 7))
		name += 7;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(calls[i].name, name))
			return calls[i].nr;
	return -1;
}

/* Bytes free for a patch at @off: up to the next entry, the end, st_size. */
static uint64_t room(const struct vdso_syms *s, const struct vdso_sym *at, size_t len)
{
	uint64_t r = len - at->off;
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->sym[i].off > at->off && s->sym[i].off - at->off < r)
			r = s->sym[i].off - at->off;
	if (at->size && at->size < r)
		r = at->size;
	return r;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static const char *patch_one(uint8_t *img, size_t len, uint64_t old_base,
			     const struct vdso_syms *old, const struct vdso_sym *o,
			     uint64_t new_base, const struct vdso_syms *new, struct vdso_patch *p)
{
	const struct vdso_sym *n = vdso_find(new, o->name);
	uint8_t *at = img + o->off;
	int64_t rel;
	int nr;

	p->off = o->off;
	p->name = o->name;
	if (n) {
		p->fate = VDSO_JUMP;
		p->target = new_base + n->off;
		rel = (int64_t)(p->target - (old_base + o->off + JMP_LEN));
		if (rel != (int32_t)rel)
			return "the new vDSO is more than 2 GiB away from the old one";
		if (room(old, o, len) < JMP_LEN)
			return "no room for a jump at an entry point";
		at[0] = 0xe9;
		put_le32(at + 1, (uint32_t)rel);
		return NULL;
	}
	if (room(old, o, len) < STUB_LEN)
		return "no room for a stub at an entry point";
	nr = fallback_nr(o->name);
	p->fate = nr >= 0 ? VDSO_SYSCALL : VDSO_ENOSYS;
	if (nr >= 0) {
		static const uint8_t tail[] = { 0x0f, 0x05, 0xc3 };	/* syscall; ret */

		at[0] = 0xb8;					/* mov $nr, %eax */
		put_le32(at + 1, nr);
		memcpy(at + 5, tail, sizeof(tail));
	} else {
		static const uint8_t enosys[] = { 0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3 };

		memcpy(at, enosys, sizeof(enosys));		/* mov $-38, %rax; ret */
	}
	return NULL;
}

/* The entry at @off was patched already, under another of its names. */
static int done(const struct vdso_redirect *r, uint64_t off)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->p[i].off == off)
			return 1;
	return 0;
}

/* Of an entry's names, one the new vDSO has too, if any (weak alias or not). */
static const struct vdso_sym *best_name(const struct vdso_syms *old, int i,
					const struct vdso_syms *new)
{
	int j;

	for (j = i; j < old->nr; j++)
		if (old->sym[j].off == old->sym[i].off && vdso_find(new, old->sym[j].name))
			return &old->sym[j];
	return &old->sym[i];
}

int vdso_redirect(uint8_t *img, size_t len, uint64_t old_base, const struct vdso_syms *old,
		  uint64_t new_base, const struct vdso_syms *new, struct vdso_redirect *r,
		  const char **why)
{
	int i;

	r->nr = 0;
	*why = NULL;
	for (i = 0; i < old->nr && !*why; i++) {
		if (done(r, old->sym[i].off))
			continue;
		if (old->sym[i].off >= len) {
			*why = "an entry point outside the image";
			break;
		}
		*why = patch_one(img, len, old_base, old, best_name(old, i, new), new_base,
				 new, &r->p[r->nr]);
		r->nr++;
	}
	return *why ? -1 : 0;
}
