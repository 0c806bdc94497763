// SPDX-License-Identifier: GPL-2.0
/*
 * Which shared memory object a name in /proc stands for: the path of an
 * area in maps, or the link of an fd. The kernel names the file behind a
 * MAP_SHARED|MAP_ANONYMOUS area "/dev/zero (deleted)", a memfd
 * "/memfd:NAME (deleted)", a System V segment "/SYSV<key> (deleted)";
 * all of them live on its internal shmem mount, whose device tells them
 * from a deleted file of a tmpfs someone mounted (or of hugetlbfs).
 * Any other deleted path is a file the tree alone still reaches (a ghost:
 * it must be a regular file, which the caller's stat() tells).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

#define DELETED			" (deleted)"

/*
 * The device of the kernel's internal shmem mount, which both kinds live
 * on: a deleted file of a tmpfs someone mounted shows the same names but
 * another device.
 */
static int shm_dev(uint64_t *dev)
{
	static uint64_t cached;
	static int known;
	struct stat st;
	int fd;

	if (!known) {
		fd = memfd_create("criu-probe", MFD_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			pr_perror("Can't create a memfd to learn the shmem device");
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		cached = st.st_dev;
		known = 1;
	}
	*dev = cached;
	return 0;
}

static int ends_deleted(const char *s)
{
	size_t len = strlen(s), d = strlen(DELETED);

	return len > d && !strcmp(s + len - d, DELETED);
}

int proc_is_aio(const char *path, unsigned int dev_major)
{
	return path && !dev_major && !strcmp(path, "/[aio]" DELETED);
}

int proc_shmem_kind(const char *path, uint64_t dev)
{
	uint64_t shm;

	if (!path || !ends_deleted(path) || proc_is_aio(path, major(dev)) || shm_dev(&shm))
		return SHMO_NONE;
	if (!strncmp(path, PROC_MEMFD_PREFIX, strlen(PROC_MEMFD_PREFIX)))
		return dev == shm ? SHMO_MEMFD : SHMO_HUGETLB;
	if (!strncmp(path, "/SYSV", 5) && strlen(path) == 13 + strlen(DELETED))
		return dev == shm ? SHMO_SYSV : SHMO_HUGETLB;
	if (dev == shm && !strcmp(path, "/dev/zero" DELETED))
		return SHMO_ANON;
	/* MAP_ANONYMOUS|MAP_HUGETLB: a file of the kernel's internal hugetlbfs */
	if (dev != shm && !strcmp(path, PROC_ANON_HUGEPAGE))
		return SHMO_HUGETLB;
	return path[0] == '/' ? SHMO_GHOST : SHMO_NONE;
}

int proc_is_ghost(const char *link, mode_t mode, uint64_t dev)
{
	return S_ISREG(mode) && proc_shmem_kind(link, dev) == SHMO_GHOST;
}

int proc_vma_shmem(const struct proc_vma *v)
{
	int k = proc_shmem_kind(v->path, makedev(v->dev_major, v->dev_minor));

	/* a private mapping of the file behind a shared anonymous area is rare: refuse it */
	return k == SHMO_ANON && !v->shared ? SHMO_NONE : k;
}

char *proc_memfd_name(const char *link)
{
	size_t len = strlen(link) - strlen(PROC_MEMFD_PREFIX) - strlen(DELETED);
	char *name = xmalloc(len + 1);

	if (name) {
		memcpy(name, link + strlen(PROC_MEMFD_PREFIX), len);
		name[len] = '\0';
	}
	return name;
}
