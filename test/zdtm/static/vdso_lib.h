/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The vDSO's functions, looked up the way glibc does at start: the ELF
 * image at AT_SYSINFO_EHDR, its dynamic symbols, addresses relative to
 * its first PT_LOAD. The tests keep the pointers across the checkpoint,
 * as glibc does.
 */
#ifndef ZDTM_VDSO_LIB_H
#define ZDTM_VDSO_LIB_H

#include <elf.h>
#include <string.h>

#include "zdtm.h"

/* The address of @name in the vDSO at @base; NULL when it has none. */
static inline void *vdso_sym_opt(unsigned long base, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)base;
	Elf64_Phdr *ph = (Elf64_Phdr *)(base + eh->e_phoff);
	Elf64_Shdr *sh = (Elf64_Shdr *)(base + eh->e_shoff);
	unsigned long load = 0;
	int i, found = 0;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		fail("no ELF header at the vDSO address %#lx", base);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			load = base + ph[i].p_offset - ph[i].p_vaddr;
			found = 1;
			break;
		}
	if (!found)
		fail("vDSO without PT_LOAD");
	for (i = 0; i < eh->e_shnum; i++) {
		Elf64_Sym *sym;
		const char *str;
		size_t n, j;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (Elf64_Sym *)(base + sh[i].sh_offset);
		str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < n; j++)
			if (sym[j].st_name && !strcmp(str + sym[j].st_name, name) &&
			    sym[j].st_shndx != SHN_UNDEF)
				return (void *)(load + sym[j].st_value);
	}
	return NULL;
}

static inline void *vdso_sym(unsigned long base, const char *name)
{
	void *p = vdso_sym_opt(base, name);

	if (!p)
		fail("no %s in the vDSO", name);
	return p;
}

#endif
