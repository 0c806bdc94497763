// SPDX-License-Identifier: GPL-2.0
/*
 * The meeting point of the mount part and the parts that name files by
 * their path (task/mounts.h): it holds the service the mount part offered
 * and forwards the questions to it.
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

#include "core/log.h"
#include "task/mounts.h"

static const struct mounts_service *service;

void mounts_offer(const struct mounts_service *s)
{
	service = s;
}

int mnt_dump_reaches(pid_t pid, uint64_t mnt_id, const char *what)
{
	return service ? service->dump_reaches(pid, mnt_id, what) : 1;
}

int mnt_dump_hidden(pid_t pid, uint64_t mnt_id, const char *path, unsigned int flags)
{
	return service ? service->dump_hidden(pid, mnt_id, path, flags) : 0;
}

uint64_t mnt_id_of(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx) || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

int mnt_open(pid_t pid, uint64_t mnt_id, const char *path, int flags)
{
	if (service)
		return service->open(pid, mnt_id, path, flags);
	return open(path, flags | O_CLOEXEC);
}

int mnt_open_hidden(pid_t pid, uint32_t n, const char *path)
{
	if (service)
		return service->open_hidden(pid, n, path);
	pr_err("Task %d: %s: no such hidden file #%u in mnt.img", pid, path, n);
	return -1;
}

int mnt_tree_has_ns(void)
{
	return service ? service->tree_has_ns() : 0;
}

int mnt_maker_of(uint64_t mnt_id)
{
	return service && service->maker_of ? service->maker_of(mnt_id) : 0;
}
