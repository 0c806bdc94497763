// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/ns/NAME: which namespace a task (or thread) is in. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "core/log.h"
#include "proc/proc.h"

uint64_t proc_ns_id(pid_t pid, pid_t tid, const char *name)
{
	char path[96];
	struct stat st;

	if (!pid)
		snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	else if (tid && tid != pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	/* every namespace lives on the one nsfs: the inode number names it */
	if (stat(path, &st)) {
		pr_perror("Can't stat %s", path);
		return 0;
	}
	return st.st_ino;
}
