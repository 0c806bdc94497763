/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_SHMEM_H
#define CRIU_PARTS_SHMEM_H

/*
 * Shared memory objects of the tree (shmem.c): the file behind a
 * MAP_SHARED|MAP_ANONYMOUS area and memfd_create() files. Saved once for
 * the whole tree, created once by criu before the first fork. Areas
 * (mm.c) and fds (file-memfd.c) name an object by its dump-time dev/ino.
 */
#include <stdint.h>

#include "proc/proc.h"

enum {
	SHMO_NONE,
	SHMO_ANON,	/* "/dev/zero (deleted)", MAP_SHARED|MAP_ANONYMOUS */
	SHMO_MEMFD,	/* "/memfd:NAME (deleted)" */
	SHMO_SYSV,	/* "/SYSV%08x (deleted)", a System V segment (key) */
	SHMO_HUGETLB,	/* on hugetlbfs: not supported */
};

/* What kind of shared memory object an area maps, if any. */
int shmem_vma_kind(const struct proc_vma *v);
/* The same for an fd: @link is the /proc/PID/fd link, @dev its st_dev. */
int shmem_link_kind(const char *link, uint64_t dev);

/*
 * Restore, in criu after the prefork hooks and in every new task: the
 * inherited fd (O_RDWR) of the object that was @dev/@ino at dump time, or
 * -1 (logged). Before the prefork hooks, shmem_known() only says whether
 * the images hold it.
 */
int shmem_fd(uint64_t dev, uint64_t ino);
int shmem_known(uint64_t dev, uint64_t ino);

#endif
