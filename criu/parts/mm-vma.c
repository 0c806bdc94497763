// SPDX-License-Identifier: GPL-2.0
/*
 * What an area is, as both halves of the mm part see it: mm.c, which saves
 * and maps the areas, and mm-pages.c, which saves and reads back the
 * pages of those whose contents are the task's own.
 */
#include <string.h>

#include "core/util.h"
#include "parts/mm-vma.h"

int vma_special(const struct proc_vma *v, VmaKind *kind)
{
	static const struct {
		const char *name;
		VmaKind kind;
	} sp[] = {
		{ "[vdso]", VMA_KIND__VMA_VDSO },
		{ "[vvar]", VMA_KIND__VMA_VVAR },
		{ "[vvar_vclock]", VMA_KIND__VMA_VVAR_VCLOCK },
		{ "[vsyscall]", VMA_KIND__VMA_VSYSCALL },
	};
	size_t i;

	for (i = 0; v->path && i < ARRAY_SIZE(sp); i++)
		if (!strcmp(v->path, sp[i].name)) {
			*kind = sp[i].kind;
			return 1;
		}
	return 0;
}

int vma_is_anon(const struct proc_vma *v)
{
	return !v->path || !strcmp(v->path, "[heap]") || !strcmp(v->path, "[stack]") ||
	       !strncmp(v->path, "[anon:", 6);
}

/* The contents of shared areas live in their file or shared object. */
int vma_has_pages(const struct proc_vma *v)
{
	VmaKind k;

	return !vma_special(v, &k) && !v->shared;
}

int vma_entry_has_pages(const VmaEntry *v)
{
	switch (v->kind) {
	case VMA_KIND__VMA_ANON_PRIVATE:
	case VMA_KIND__VMA_FILE_PRIVATE:
	case VMA_KIND__VMA_MEMFD_PRIVATE:
	case VMA_KIND__VMA_GHOST_PRIVATE:
		return 1;
	case VMA_KIND__VMA_ANON_SHARED:
		return !v->has_ino;	/* images from before shmem.img */
	default:
		return 0;
	}
}
