// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/timers: the POSIX timers of a process. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID		4
#endif

static int parse_notify(const char *s, int *notify, int *target)
{
	char how[16], whom[8];

	if (sscanf(s, "%15[a-z]/%7[a-z].%d", how, whom, target) != 3)
		return -1;
	if (!strcmp(how, "signal"))
		*notify = SIGEV_SIGNAL;
	else if (!strcmp(how, "none"))
		*notify = SIGEV_NONE;
	else if (!strcmp(how, "thread"))
		*notify = SIGEV_THREAD;
	else
		return -1;
	if (!strcmp(whom, "tid"))
		*notify |= SIGEV_THREAD_ID;
	else if (strcmp(whom, "pid"))
		return -1;
	return 0;
}

/* fs/proc/base.c: show_timer(); four lines a timer, the newest first */
int proc_parse_timers(char *buf, struct proc_timer **out)
{
	struct proc_timer *pt = NULL, *cur = NULL;
	unsigned long long value;
	char *line, *save = NULL;
	int nr = 0, seen = 0;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ID: ", 4)) {
			if (cur && seen != 15)
				goto bad;
			cur = xpush(pt, nr);
			if (!cur)
				goto err;
			memset(cur, 0, sizeof(*cur));
			if (sscanf(line + 4, "%d", &cur->id) != 1 || cur->id < 0)
				goto bad;
			seen = 1;
		} else if (!cur) {
			goto bad;
		} else if (!strncmp(line, "signal: ", 8)) {
			if (sscanf(line + 8, "%d/%llx", &cur->signo, &value) != 2)
				goto bad;
			cur->value = value;
			seen |= 2;
		} else if (!strncmp(line, "notify: ", 8)) {
			if (parse_notify(line + 8, &cur->notify, &cur->target))
				goto bad;
			seen |= 4;
		} else if (!strncmp(line, "ClockID: ", 9)) {
			if (sscanf(line + 9, "%d", &cur->clockid) != 1)
				goto bad;
			seen |= 8;
		}
	}
	if (cur && seen != 15)
		goto bad;
	*out = pt;
	return nr;
bad:
	pr_err("Unexpected line in /proc/PID/timers: '%s'", line ? line : "(end)");
err:
	free(pt);
	return -1;
}

int proc_read_timers(pid_t pid, struct proc_timer **out)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	return proc_read(path, proc_parse_timers, out);
}
