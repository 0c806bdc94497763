// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a detached container changed on the host, kept in a small text file
 * (its --state path) so that `ctr delete` can undo it later from another
 * process: the init's pid and start time (a pid reused since is never
 * killed), the cgroup directories ctr created, the veth's host end.
 *
 *	name NAME
 *	pid PID
 *	start TICKS
 *	cgroup DIR		(the container's own)
 *	cgroup-parent DIR	(created for it, removed once empty)
 *	veth IFNAME
 *
 * Mounts need no undoing: they live in the container's mount namespace
 * and die with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctr.h"

int state_write(const char *path, const struct ctr_config *c, const struct ctr_host *h)
{
	char tmp[4200];
	FILE *f;
	int fd, i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ctr_perr("create the state file %s", tmp);
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		ctr_perr("fdopen %s", tmp);
		close(fd);
		return -1;
	}
	fprintf(f, "name %s\npid %d\nstart %llu\n", c->name, h->pid, h->start);
	for (i = 0; i < h->nr_cgdirs; i++)
		fprintf(f, "%s %s\n", h->cgdirs[i].leaf ? "cgroup" : "cgroup-parent",
			h->cgdirs[i].path);
	if (h->veth[0])
		fprintf(f, "veth %s\n", h->veth);
	if (fclose(f) || rename(tmp, path)) {
		ctr_perr("write the state file %s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

int state_read(const char *path, struct ctr_host *h)
{
	char line[1200], key[32], val[1024];
	FILE *f;

	memset(h, 0, sizeof(*h));
	f = fopen(path, "re");
	if (!f) {
		ctr_perr("open the state file %s", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %1023[^\n]", key, val) != 2)
			continue;
		if (!strcmp(key, "pid")) {
			sscanf(val, "%d", &h->pid);
		} else if (!strcmp(key, "start")) {
			sscanf(val, "%llu", &h->start);
		} else if (!strcmp(key, "veth")) {
			snprintf(h->veth, sizeof(h->veth), "%.15s", val);
		} else if ((!strcmp(key, "cgroup") || !strcmp(key, "cgroup-parent")) &&
			   h->nr_cgdirs < CTR_MAX_CGDIRS) {
			snprintf(h->cgdirs[h->nr_cgdirs].path, sizeof(h->cgdirs[0].path),
				 "%s", val);
			h->cgdirs[h->nr_cgdirs++].leaf = !strcmp(key, "cgroup");
		}
	}
	fclose(f);
	return 0;
}

/*
 * Kills the container (SIGKILL to its init takes the whole pid namespace),
 * waits for it, removes its cgroups and the veth.  Everything is tried
 * even when a step fails; the first failure is the one reported.
 */
int teardown(struct ctr_host *h, int timeout_ms)
{
	int ret = 0, status;

	if (h->pid > 0 && h->start && proc_start_time(h->pid) == h->start) {
		kill(h->pid, SIGKILL);
		if (wait_gone(h->pid, timeout_ms)) {
			ctr_err("the container's init %d did not die in %d ms", h->pid,
				timeout_ms);
			ret = -1;
		}
	}
	if (h->pid > 0)
		waitpid(h->pid, &status, WNOHANG);	/* when it is ours */
	if (cg_remove(h))
		ret = -1;
	if (h->veth[0] && net_link_del(h->veth))
		ret = -1;
	return ret;
}
