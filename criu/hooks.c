// SPDX-License-Identifier: GPL-2.0
/*
 * Notifications and action scripts: at each hook the RPC client (when it
 * asked for notify_scripts) answers first, then every --action-script runs,
 * in the order given. A script gets CRIU's environment:
 * CRTOOLS_SCRIPT_ACTION (the hook's name), CRTOOLS_IMAGE_DIR and, once the
 * tree's root is known, CRTOOLS_INIT_PID; its stdin is /dev/null and its
 * output goes to criu's log. A script that exits non-zero says no.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "hooks.h"

static const char *const names[HOOK_NR] = {
	[HOOK_PRE_DUMP] = "pre-dump",
	[HOOK_NETWORK_LOCK] = "network-lock",
	[HOOK_POST_DUMP] = "post-dump",
	[HOOK_NETWORK_UNLOCK] = "network-unlock",
	[HOOK_PRE_RESTORE] = "pre-restore",
	[HOOK_SETUP_NS] = "setup-namespaces",
	[HOOK_POST_SETUP_NS] = "post-setup-namespaces",
	[HOOK_ORPHAN_PTS_MASTER] = "orphan-pts-master",
	[HOOK_POST_RESTORE] = "post-restore",
	[HOOK_PRE_RESUME] = "pre-resume",
	[HOOK_POST_RESUME] = "post-resume",
};

static struct {
	hook_notifier fn;
	void *arg;
	char **scripts;
	int nr_scripts;
	char images_dir[PATH_MAX];
} hk;

const char *hook_name(enum hook h)
{
	return h < HOOK_NR ? names[h] : "?";
}

void hooks_set_notifier(hook_notifier fn, void *arg)
{
	hk.fn = fn;
	hk.arg = arg;
}

int hooks_add_script(const char *path)
{
	if (xgrow(hk.scripts, hk.nr_scripts))
		return -1;
	hk.scripts[hk.nr_scripts] = xstrdup(path);
	return hk.scripts[hk.nr_scripts++] ? 0 : -1;
}

void hooks_set_images_dir(const char *dir)
{
	/* RPC names its directories /proc/self/fd/N: give scripts the real path */
	if (!dir || !realpath(dir, hk.images_dir))
		hk.images_dir[0] = '\0';
}

int hooks_wanted(void)
{
	return hk.fn || hk.nr_scripts;
}

static void script_child(const char *path, enum hook h, pid_t pid)
{
	char buf[16];
	int null = open("/dev/null", O_RDONLY);

	if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd(), 1) < 0 || dup2(log_fd(), 2) < 0)
		_exit(126);
	closefrom(3);
	setenv("CRTOOLS_SCRIPT_ACTION", names[h], 1);
	if (hk.images_dir[0])
		setenv("CRTOOLS_IMAGE_DIR", hk.images_dir, 1);
	if (pid > 0) {
		snprintf(buf, sizeof(buf), "%d", pid);
		setenv("CRTOOLS_INIT_PID", buf, 1);
	}
	execl(path, path, (char *)NULL);
	_exit(127);
}

static int run_script(const char *path, enum hook h, pid_t pid)
{
	pid_t child;
	int status;

	child = fork();
	if (child < 0) {
		pr_perror("Can't start action script %s for %s", path, names[h]);
		return -1;
	}
	if (!child)
		script_child(path, h, pid);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror("Can't wait for action script %s", path);
			return -1;
		}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFEXITED(status))
		pr_err("Action script %s said no to %s: exit status %d%s", path, names[h],
		       WEXITSTATUS(status), WEXITSTATUS(status) == 127 ? " (can't run it)" : "");
	else
		pr_err("Action script %s was killed by signal %d during %s", path,
		       WTERMSIG(status), names[h]);
	return -1;
}

int hook_run(enum hook h, pid_t pid, int fd)
{
	int i;

	if (!hooks_wanted())
		return 0;
	pr_info("Hook %s (pid %d)", names[h], pid);
	if (hk.fn && hk.fn(hk.arg, h, pid, fd))
		return -1;
	for (i = 0; i < hk.nr_scripts; i++)
		if (run_script(hk.scripts[i], h, pid))
			return -1;
	return 0;
}
