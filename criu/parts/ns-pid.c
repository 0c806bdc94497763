// SPDX-License-Identifier: GPL-2.0
/*
 * PID namespaces. A tree may be a whole pid namespace of its own: its root
 * is the namespace's init, pid 1 there (dumped with -t and the init's pid
 * as criu sees it). The images then hold every id as the tree sees it
 * (the driver reads NSpid, NSpgid and NSsid), and restore creates the root
 * with CLONE_NEWPID and pid 1; every other task and thread is created from
 * inside the namespace, by its parent or its leader, with clone3(set_tid),
 * which sets the pid in the innermost namespace: the one asked for.
 *
 * Only criu's own view is different: ptrace, /proc and the calls criu
 * makes from outside use the host ids (rtask.host_pid/host_tids, which the
 * driver learns from each new task and from the threads' NSpid).
 *
 * Refused at the dump: a tree whose root sits in a pid namespace it is not
 * the init of (there is no way to make pid 1 appear later), tasks in a
 * namespace nested below the root's, and a task that unshared a pid
 * namespace for its children (whether it forked into it yet or not).
 */
#include <sched.h>
#include <stdint.h>

#include "core/log.h"
#include "parts/part.h"

static struct dtask *root_of(struct dtask *t)
{
	while (t->parent)
		t = t->parent;
	return t;
}

static int check_root(struct dtask *t, uint64_t ns)
{
	uint64_t ours = proc_ns_id(0, 0, "pid");

	if (!ours)
		return -1;
	if (ns == ours || t->ns_pid == 1)
		return 0;
	pr_err("Task %d is %d in a pid namespace of its own (pid:[%lu]), not its init; "
	       "only a whole pid namespace can be dumped, from its init", t->pid,
	       t->ns_pid, ns);
	return -1;
}

static int ns_pid_check(struct dump_ctx *dc, struct dtask *t)
{
	struct dtask *root = root_of(t);
	uint64_t ns, want, kids;
	int i;

	ns = proc_ns_id(t->pid, 0, "pid");
	if (!ns)
		return -1;
	if (t == root) {
		if (check_root(t, ns))
			return -1;
	} else {
		want = proc_ns_id(root->pid, 0, "pid");
		if (!want)
			return -1;
		if (ns != want) {
			pr_err("Task %d (child of %d) is in a pid namespace nested in the "
			       "tree's (pid:[%lu]); not supported: dump that namespace's init "
			       "on its own", t->pid, t->parent->pid, ns);
			return -1;
		}
	}
	for (i = 0; i < t->nr_threads; i++) {
		kids = proc_ns_id(t->pid, t->th[i].tid, "pid_for_children");
		if (!kids)
			return -1;
		if (kids == ns)
			continue;
		if (t->th[i].tid == t->pid)
			pr_err("Task %d unshared a pid namespace for its children "
			       "(pid_for_children:[%lu]); nested pid namespaces are not "
			       "supported", t->pid, kids);
		else
			pr_err("Task %d: thread %d unshared a pid namespace for its children "
			       "(pid_for_children:[%lu]); nested pid namespaces are not "
			       "supported", t->pid, t->th[i].tid, kids);
		return -1;
	}
	return 0;
}

/* pid 1 is only ever the root's (the driver checks): the init of a namespace */
static int ns_pid_load(struct rst_ctx *rc, struct rtask *t)
{
	if (t->pid == 1) {
		rc->root_flags |= CLONE_NEWPID;
		pr_info("Task 1: the init of a new pid namespace");
	}
	return 0;
}

const struct part part_ns_pid = {
	.name = "ns_pid",
	.id = PART_NS_PID,
	.check = ns_pid_check,
	.load = ns_pid_load,
};
