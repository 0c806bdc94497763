// SPDX-License-Identifier: GPL-2.0
/*
 * Bounds on checkpoints, the same for dump and restore (limits.h). The
 * sysctls are read once per run: a dump and the restore of it on the same
 * machine see the same values; a restore where they are lower says so
 * before it creates anything.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"

/* DEFAULT_MAX_MAP_COUNT, for a /proc that does not say */
#define MAP_COUNT_DEFAULT	65530
/* sysctl_nr_open_max of a 64-bit kernel */
#define NR_OPEN_MAX		(0x7fffffff & ~63)

static int64_t sysctl(const char *path, int64_t dflt)
{
	char *buf = read_file(-1, path, NULL);
	int64_t v;
	char *end;

	if (!buf)
		return dflt;
	v = strtoll(buf, &end, 10);
	if (end == buf || v <= 0)
		v = dflt;
	free(buf);
	return v;
}

/* Whether criu may raise its own hard limits (CAP_SYS_RESOURCE). */
static int may_raise(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[CAP_SYS_RESOURCE / 32].effective & (1U << (CAP_SYS_RESOURCE % 32)));
}

const struct limits *limits_get(void)
{
	static struct limits l;
	struct rlimit rl;

	if (l.pid_max)
		return &l;
	l.pid_max = min(sysctl("/proc/sys/kernel/pid_max", LIMIT_PID), (int64_t)LIMIT_PID);
	l.threads_max = sysctl("/proc/sys/kernel/threads-max", LIMIT_PID);
	l.max_map_count = sysctl("/proc/sys/vm/max_map_count", MAP_COUNT_DEFAULT);
	l.nofile = NR_OPEN_MAX;
	if (may_raise())
		l.nofile = sysctl("/proc/sys/fs/nr_open", NR_OPEN_MAX);
	else if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max < (rlim_t)NR_OPEN_MAX)
		l.nofile = rl.rlim_max;
	return &l;
}

int limit_pid(pid_t task, const char *what, int64_t pid)
{
	int64_t max = limits_get()->pid_max;

	if (pid >= 1 && pid < max)
		return 0;
	pr_err("Task %d: %s %ld is out of range: pids are 1 to %ld here (kernel.pid_max)",
	       task, what, (long)pid, (long)max - 1);
	return -1;
}

int limit_threads(pid_t task, int64_t nr)
{
	int64_t max = limits_get()->threads_max;

	if (nr >= 1 && nr <= max)
		return 0;
	pr_err("Task %d: %ld threads, more than kernel.threads-max (%ld)", task, (long)nr,
	       (long)max);
	return -1;
}

int limit_tasks(int64_t nr)
{
	int64_t max = limits_get()->pid_max - 1;

	if (nr >= 1 && nr <= max)
		return 0;
	pr_err("The tree has %ld tasks, more than there are pids here (kernel.pid_max %ld)",
	       (long)nr, (long)max + 1);
	return -1;
}

int limit_areas(pid_t task, int64_t nr)
{
	int64_t max = limits_get()->max_map_count;

	if (nr >= 0 && nr < max)
		return 0;
	pr_err("Task %d: %ld memory areas; criu needs one more in it to dump or restore it, "
	       "and vm.max_map_count is %ld", task, (long)nr, (long)max);
	return -1;
}

int limit_fds(pid_t task, int64_t nr, int64_t top)
{
	int64_t max = limits_get()->nofile;

	if (nr >= 0 && nr <= max && top < max)
		return 0;
	pr_err("Task %d: fd %ld (of %ld) is past what a restored task may have: %ld "
	       "(criu's RLIMIT_NOFILE hard limit%s)", task, (long)top, (long)nr, (long)max,
	       may_raise() ? ", fs.nr_open" : "; without CAP_SYS_RESOURCE it can't be raised");
	return -1;
}

int limit_fd_room(pid_t task, int64_t task_fds, int64_t shared, int64_t own)
{
	int64_t max = limits_get()->nofile;

	if (task_fds + shared + own <= max)
		return 0;
	pr_err("Task %d: %ld fds, and criu needs %ld more in it to restore it (%ld it opens "
	       "for the tree, %ld of the task's own): more than the %ld a restored task may "
	       "have (criu's RLIMIT_NOFILE hard limit%s)", task, (long)task_fds,
	       (long)(shared + own), (long)shared, (long)own, (long)max,
	       may_raise() ? ", fs.nr_open" : "; without CAP_SYS_RESOURCE it can't be raised");
	return -1;
}

/* prctl(PR_TIMER_CREATE_RESTORE_IDS, GET): Linux 6.16 */
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_GET	2

int limit_timer_ids(pid_t task, int64_t timers, int64_t top_id, int64_t room)
{
	int64_t fillers = top_id + 1 - timers;

	if (!timers || fillers <= room ||
	    prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0)
		return 0;
	pr_err("Task %d: POSIX timer id %ld can't be made again on this kernel (no "
	       "PR_TIMER_CREATE_RESTORE_IDS, Linux 6.16): the %ld ids below it that no timer "
	       "has would take more than the %ld queued-signal slots free (RLIMIT_SIGPENDING)",
	       task, (long)top_id, (long)fillers, (long)room);
	return -1;
}

int limit_inotify_wd(pid_t task, int fd, int64_t wd)
{
	if (wd >= 1 && wd <= LIMIT_INOTIFY_WD)
		return 0;
	pr_err("Task %d: an inotify (fd %d) has watch descriptor %ld; restore makes wd N by "
	       "adding N - 1 dummy watches, and takes no more than %d", task, fd, (long)wd,
	       LIMIT_INOTIFY_WD);
	return -1;
}
