// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's user namespace's maps, asked by the parts that set ids from
 * inside it (idmap.h).
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "task/idmap.h"

int idmap_inside(const struct idmap *m, int gid, uint32_t host, uint32_t *inside)
{
	const struct idmap_extent *e = m ? (gid ? m->gid : m->uid) : NULL;
	size_t i, n = m ? (gid ? m->nr_gid : m->nr_uid) : 0;

	*inside = host;
	if (!m)
		return 0;
	for (i = 0; i < n; i++)
		if (host >= e[i].lower_first && host - e[i].lower_first < e[i].count) {
			*inside = e[i].first + (host - e[i].lower_first);
			return 0;
		}
	return -1;
}

/* Inside id 0 if the map has it, else the first it has. */
static uint32_t first_inside(const struct idmap_extent *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!e[i].first)
			return 0;
	return n ? e[0].first : 0;
}

int idmap_take_fs_ids(const struct idmap *m)
{
	uint32_t uid, gid;

	if (!m)
		return 0;
	uid = first_inside(m->uid, m->nr_uid);
	gid = first_inside(m->gid, m->nr_gid);
	setfsgid(gid);
	setfsuid(uid);
	if ((uint32_t)setfsuid(-1) == uid && (uint32_t)setfsgid(-1) == gid)
		return 0;
	pr_err("Can't take the filesystem ids %u:%u in the tree's user namespace", uid, gid);
	return -1;
}

int idmap_make_fd(const struct idmap *m, int (*make)(void *arg), void *arg, const char *what)
{
	/* a number the child's fd lands at: the fd table is shared, the rest copied */
	int slot, status, fd;
	pid_t pid;

	if (!m)
		return make(arg);
	slot = open("/", O_PATH | O_CLOEXEC);
	if (slot < 0) {
		pr_perror("Can't take an fd for %s", what);
		return -1;
	}
	pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (!pid) {
		fd = idmap_take_fs_ids(m) ? -1 : make(arg);
		_exit(fd < 0 || dup3(fd, slot, O_CLOEXEC) < 0 ? 1 : 0);
	}
	if (pid < 0)
		pr_perror("Can't fork to make %s", what);
	else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		pr_err("The child making %s in the tree's user namespace failed", what);
	else
		return slot;
	close(slot);
	return -1;
}
