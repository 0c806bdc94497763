/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_VMA_H
#define CRIU_PARTS_MM_VMA_H

/* What an area is (mm-vma.c), for both halves of the mm part. */
#include "proc/proc.h"
#include "mm.pb-c.h"

/* [vdso], [vvar], [vvar_vclock], [vsyscall]: 1 and its *@kind */
int vma_special(const struct proc_vma *v, VmaKind *kind);
int vma_is_anon(const struct proc_vma *v);
/* pages of this area are saved per task (private memory) */
int vma_has_pages(const struct proc_vma *v);
int vma_entry_has_pages(const VmaEntry *v);
/* a mapping of a socket ("socket:[INO]"): a packet socket's rings */
int vma_is_socket(const struct proc_vma *v);
int vma_is_packet(pid_t pid, const struct proc_vma *v);
/* the lowest fd of task @pid on socket inode @ino, or -1 */
int vma_sock_fd(pid_t pid, uint64_t ino);

#endif
