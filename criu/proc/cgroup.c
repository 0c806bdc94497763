// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/cgroup: "ID:CONTROLLERS:PATH" per hierarchy, the v1 ones with
 * their controllers ("cpu", "cpu,cpuacct", "name=systemd") and the unified
 * v2 one as "0::PATH". Paths are relative to the reader's cgroup namespace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

void proc_cgroup_free(struct proc_cgroup *cg)
{
	free(cg->buf);
	free(cg->line);
	cg->buf = NULL;
	cg->line = NULL;
	cg->nr = 0;
}

static int add_line(struct proc_cgroup *cg, char *ctrl, char *path)
{
	struct proc_cgroup_line *n = xpush(cg->line, cg->nr);

	if (!n)
		return -1;
	n->controllers = ctrl;
	n->path = path;
	return 0;
}

int proc_parse_cgroup(char *buf, struct proc_cgroup *cg)
{
	char *line, *next, *ctrl, *path;

	memset(cg, 0, sizeof(*cg));
	cg->buf = buf;
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ctrl = strchr(line, ':');
		path = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!path || path[1] != '/') {
			pr_err("Bad cgroup line '%s'", line);
			goto err;
		}
		*ctrl++ = '\0';
		*path++ = '\0';
		/* "0::" is the unified hierarchy; a v1 one always has a name */
		if (!*ctrl && strcmp(line, "0")) {
			pr_err("Bad cgroup line: hierarchy %s without controllers", line);
			goto err;
		}
		if (add_line(cg, ctrl, path))
			goto err;
	}
	return 0;
err:
	cg->buf = NULL;
	proc_cgroup_free(cg);
	return -1;
}

int proc_read_cgroup(pid_t pid, pid_t tid, struct proc_cgroup *cg)
{
	char path[64], *buf;

	if (!pid)
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	else if (tid && tid != pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	buf = read_file(-1, path, NULL);
	if (!buf) {
		pr_perror("Can't read %s", path);
		return -1;
	}
	if (proc_parse_cgroup(buf, cg)) {
		pr_err("Can't parse %s", path);
		free(buf);
		return -1;
	}
	return 0;
}

const char *proc_cgroup_path(const struct proc_cgroup *cg, const char *controllers)
{
	int i;

	for (i = 0; i < cg->nr; i++)
		if (!strcmp(cg->line[i].controllers, controllers))
			return cg->line[i].path;
	return NULL;
}
