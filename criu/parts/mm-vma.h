/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_VMA_H
#define CRIU_PARTS_MM_VMA_H

/* What an area is (mm-vma.c), for both halves of the mm part. */
#include "proc/proc.h"
#include "mm.pb-c.h"

/* [vdso], [vvar], [vvar_vclock], [vsyscall]: 1 and its *@kind */
int vma_special(const struct proc_vma *v, VmaKind *kind);
int vma_is_anon(const struct proc_vma *v);
/*
 * MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB, its huge page size read (smaps):
 * saved and restored like anonymous memory, in huge pages again
 */
int vma_is_huge_anon(const struct proc_vma *v);
/* mmap()'s flags for @kb huge pages (MAP_HUGETLB and the size); 0 for a bad size */
unsigned int vma_huge_flags(uint64_t kb);
/* pages of this area are saved per task (private memory) */
int vma_has_pages(const struct proc_vma *v);
int vma_entry_has_pages(const VmaEntry *v);
/* a mapping of a socket ("socket:[INO]"): a packet socket's rings */
int vma_is_socket(const struct proc_vma *v);
int vma_is_packet(pid_t pid, const struct proc_vma *v);
/* the lowest fd of task @pid on socket inode @ino, or -1 */
int vma_sock_fd(pid_t pid, uint64_t ino);

/*
 * Task @pid's huge page areas of @mm fit in the huge pages the machine
 * has free (each size's pool, with what it may overcommit): 0, or -1 and
 * one line naming the size, what is needed and what there is.
 */
int vma_huge_room(pid_t pid, const MmEntry *mm);

#endif
