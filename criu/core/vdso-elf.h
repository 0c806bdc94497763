/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_VDSO_ELF_H
#define CRIU_CORE_VDSO_ELF_H

/*
 * The vDSO as an ELF image: its exported functions, read from a copy of
 * its bytes (what a task has mapped at [vdso], or what vdso.img holds),
 * and the redirect that turns an old vDSO's entry points into jumps to a
 * new one's. Pure functions on buffers, every offset checked against the
 * buffer: the images may be anything (test/unit/test_vdso_elf.c).
 */
#include <stddef.h>
#include <stdint.h>

#define VDSO_NAME_MAX	48	/* longer names are not the kernel's */
#define VDSO_SYMS_MAX	64	/* x86_64 exports 14 */

struct vdso_sym {
	char name[VDSO_NAME_MAX];
	uint64_t off;		/* of the entry, from the start of the image */
	uint64_t size;		/* st_size, 0 when unknown */
};

struct vdso_syms {
	int nr;
	struct vdso_sym sym[VDSO_SYMS_MAX];
};

/*
 * The defined functions of the dynamic symbol table (SHT_DYNSYM, as the
 * kernel's vdso2c build step requires it), at the offsets glibc computes
 * (st_value less the first PT_LOAD's p_vaddr). 0, or -1 and *@why.
 */
int vdso_parse(const void *img, size_t len, struct vdso_syms *out, const char **why);

/* The symbol called @name, or NULL. */
const struct vdso_sym *vdso_find(const struct vdso_syms *s, const char *name);

/* What became of each entry point of the old vDSO. */
enum vdso_fate {
	VDSO_JUMP,		/* a jmp to the new vDSO's function of that name */
	VDSO_SYSCALL,		/* no such function there: its system call */
	VDSO_ENOSYS,		/* neither: returns -ENOSYS */
};

struct vdso_patch {
	uint64_t off;		/* in the old image */
	const char *name;	/* the old symbol's (one of its names) */
	enum vdso_fate fate;
	uint64_t target;	/* VDSO_JUMP: the new function's address */
};

struct vdso_redirect {
	int nr;
	struct vdso_patch p[VDSO_SYMS_MAX];
};

/*
 * Rewrites @img (@len bytes of the old vDSO, mapped at @old_base) so that
 * each function entry leads to the new vDSO at @new_base: a 5-byte jmp
 * (the two must be within 2 GiB of each other), or, for a function the new
 * one lacks, a stub. Aliases (time and __vdso_time) share an entry. -1 and
 * *@why when an entry has no room for its patch or the jump can't reach.
 */
int vdso_redirect(uint8_t *img, size_t len, uint64_t old_base, const struct vdso_syms *old,
		  uint64_t new_base, const struct vdso_syms *new, struct vdso_redirect *r,
		  const char **why);

/* Whether every entry of @old is at the same offset in @new, under the same name. */
int vdso_same_entries(const struct vdso_syms *old, const struct vdso_syms *new);

#endif
