/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the programs that put themselves in a user namespace of their own:
 * only a task outside it may write its maps, so a child that stays
 * outside writes them once the task has unshared it.
 */
#ifndef ZDTM_USERNS_LIB_H
#define ZDTM_USERNS_LIB_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

static void userns_write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		_exit(1);
	close(fd);
}

/* unshare(CLONE_NEWUSER) with these maps and setgroups ("allow", "deny"). */
static inline void make_userns(const char *uid_map, const char *gid_map,
			       const char *setgroups)
{
	/* /proc is the runner's: in a pid namespace, our pid there */
	pid_t self = test_host_pid(), kid;
	int p[2], status;
	char c;

	if (pipe(p))
		fail_errno("pipe");
	kid = fork();
	if (kid < 0)
		fail_errno("fork");
	if (!kid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		userns_write_proc(self, "setgroups", setgroups);
		userns_write_proc(self, "gid_map", gid_map);
		userns_write_proc(self, "uid_map", uid_map);
		_exit(0);
	}
	close(p[0]);
	if (unshare(CLONE_NEWUSER))
		fail_errno("unshare(CLONE_NEWUSER)");
	if (write(p[1], "", 1) != 1 || waitpid(kid, &status, 0) != kid || status)
		fail("the child could not write the maps (status %#x)", status);
	close(p[1]);
}

#endif
