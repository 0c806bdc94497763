// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces restore can't make: a tree that made one of these for itself
 * is refused at the dump, before anything is touched, with the task, the
 * namespace and criu's own named. Restoring it in criu's namespace instead
 * would quietly give it other mounts, other users, other interfaces.
 *
 * The others have parts of their own: ns-pid.c, ns-uts.c, ns-time.c,
 * ns-mnt.c, ns-net.c (and the IPC namespace, with SysV IPC). See
 * Documentation/namespaces.md.
 */
#include <stdint.h>

#include "core/log.h"
#include "parts/part.h"

static const struct {
	const char *name;	/* in /proc/PID/ns */
	const char *what;
} refused[] = {
	{ "user", "user" },
	{ "cgroup", "cgroup" },
};

/* criu's own, read once: a dump does not change its namespaces */
static uint64_t criu_ns[sizeof(refused) / sizeof(refused[0])];

static int check_thread(struct dtask *t, pid_t tid)
{
	uint64_t ours, its;
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (!criu_ns[i])
			criu_ns[i] = proc_ns_id(0, 0, refused[i].name);
		ours = criu_ns[i];
		its = proc_ns_id(t->pid, tid, refused[i].name);
		if (!ours || !its)
			return -1;
		if (ours == its)
			continue;
		if (tid == t->pid)
			pr_err("Task %d is in a %s namespace of its own (%s:[%lu], criu's is "
			       "%s:[%lu]); %s namespaces are not supported", t->pid,
			       refused[i].what, refused[i].name, its, refused[i].name, ours,
			       refused[i].what);
		else
			pr_err("Task %d: thread %d is in a %s namespace of its own (%s:[%lu], "
			       "criu's is %s:[%lu]); %s namespaces are not supported", t->pid,
			       tid, refused[i].what, refused[i].name, its, refused[i].name,
			       ours, refused[i].what);
		return -1;
	}
	return 0;
}

static int ns_check(struct dump_ctx *dc, struct dtask *t)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (check_thread(t, t->th[i].tid))
			return -1;
	return 0;
}

const struct part part_ns = {
	.name = "ns",
	.id = PART_NS,
	.check = ns_check,
};
