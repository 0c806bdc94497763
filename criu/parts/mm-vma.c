// SPDX-License-Identifier: GPL-2.0
/*
 * What an area is, as both halves of the mm part see it: mm.c, which saves
 * and maps the areas, and mm-pages.c, which saves and reads back the
 * pages of those whose contents are the task's own.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

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

int vma_is_socket(const struct proc_vma *v)
{
	return v->path && !strncmp(v->path, "socket:[", 8);
}

/* The kernel names a socket's protocol in the xattr of its inode. */
int vma_is_packet(pid_t pid, const struct proc_vma *v)
{
	char path[96], name[16];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, v->start, v->end);
	n = getxattr(path, "system.sockprotoname", name, sizeof(name) - 1);
	if (n < 0)
		return 0;
	name[n] = '\0';
	return !strcmp(name, "PACKET");
}

/* an fd of task @pid on socket @ino (the lowest), or -1 */
int vma_sock_fd(pid_t pid, uint64_t ino)
{
	char path[64], link[64], want[40];
	struct dirent *de;
	int fd = -1, n;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		n = atoi(de->d_name);
		if (de->d_name[0] == '.' || (fd >= 0 && n >= fd))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, n);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strcmp(link, want))
			fd = n;
	}
	closedir(d);
	return fd;
}
