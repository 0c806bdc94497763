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

#include "core/log.h"
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

	/* the aio part saves the ring and makes it again (mm-aio.c) */
	if (proc_is_aio(v->path, v->dev_major)) {
		*kind = VMA_KIND__VMA_AIO;
		return 1;
	}
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

int vma_is_huge_anon(const struct proc_vma *v)
{
	return (v->vmflags & VMF_HUGETLB) && !v->shared && v->path &&
	       !strcmp(v->path, PROC_ANON_HUGEPAGE) && vma_huge_flags(v->page_kb) &&
	       !(v->start & ((uint64_t)v->page_kb * 1024 - 1)) &&
	       !(v->end & ((uint64_t)v->page_kb * 1024 - 1));
}

/* Linux 3.8; the size is log2(bytes) in the 6 bits from bit 26 */
#define HUGE_SHIFT	26
#define HUGE_MAP	0x40000

unsigned int vma_huge_flags(uint64_t kb)
{
	unsigned int shift = 0;

	/* from 64 KiB (arm64's contiguous pages) to 16 GiB (powerpc's) */
	if (kb < 64 || kb > (16ULL << 20) || (kb & (kb - 1)))
		return 0;
	while ((1ULL << shift) < kb * 1024)
		shift++;
	return HUGE_MAP | (shift << HUGE_SHIFT);
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
	case VMA_KIND__VMA_HUGETLB_PRIVATE:
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

static int64_t pool_value(uint64_t kb, const char *name)
{
	char path[96], buf[32];
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%lukB/%s", kb, name);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The huge pages of @kb a new private mapping may reserve now. */
static int64_t pool_room(uint64_t kb)
{
	int64_t avail = pool_value(kb, "free_hugepages"), resv = pool_value(kb, "resv_hugepages");
	int64_t over = pool_value(kb, "nr_overcommit_hugepages");
	int64_t surplus = pool_value(kb, "surplus_hugepages");

	if (avail < 0 || resv < 0)
		return -1;
	if (over > 0 && surplus >= 0 && over > surplus)
		avail += over - surplus;
	return avail > resv ? avail - resv : 0;
}

/* the huge page sizes a task may use at once: x86 has two, arm64 four */
#define HUGE_SIZES	8

int vma_huge_room(pid_t pid, const MmEntry *mm)
{
	uint64_t kb[HUGE_SIZES], need[HUGE_SIZES] = { 0 };
	int64_t room;
	size_t i;
	int n = 0, k;

	/* one pass: the pages needed per size */
	for (i = 0; i < mm->n_vmas; i++) {
		const VmaEntry *v = mm->vmas[i];

		if (v->kind != VMA_KIND__VMA_HUGETLB_PRIVATE)
			continue;
		for (k = 0; k < n && kb[k] != v->huge_page_kb; k++)
			;
		if (k == n) {
			if (n == HUGE_SIZES) {
				pr_err("Task %d: its MAP_HUGETLB memory uses more than %d huge "
				       "page sizes", pid, HUGE_SIZES);
				return -1;
			}
			kb[n++] = v->huge_page_kb;
		}
		need[k] += (v->end - v->start) / (v->huge_page_kb * 1024);
	}
	for (k = 0; k < n; k++) {
		room = pool_room(kb[k]);
		if (room < 0) {
			pr_err("Task %d: its MAP_HUGETLB memory is in huge pages of %lu kB, which "
			       "this machine does not have", pid, kb[k]);
			return -1;
		}
		if ((uint64_t)room < need[k]) {
			pr_err("Task %d: its MAP_HUGETLB memory needs %lu huge pages of %lu kB, "
			       "this machine has %ld free (vm.nr_hugepages)", pid, need[k], kb[k],
			       room);
			return -1;
		}
	}
	return 0;
}
