// SPDX-License-Identifier: GPL-2.0
/*
 * The process tree as pstree.img holds it, checked the same way by the
 * dump (before it writes it: a tree the restore would refuse is never
 * dumped) and by the restore (before it forks anything): pids and tids in
 * the kernel's range and each once, threads no more than the kernel
 * allows, the leader first, parents before their children. Sorting, not
 * pairwise comparing: a task may have a hundred thousand threads.
 */
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "tree/check.h"
#include "tree/stop.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A task's pid and its place in the tree, sorted by pid. */
struct at {
	uint32_t pid, idx;
};

static int cmp_at(const void *a, const void *b)
{
	return cmp_u32(a, b);
}

/* Where @pid is in the tree; -1: not in it. */
static int64_t place_of(const struct at *s, size_t nr, uint32_t pid)
{
	struct at key = { pid, 0 }, *f = bsearch(&key, s, nr, sizeof(*s), cmp_at);

	return f ? (int64_t)f->idx : -1;
}

static int bad(const char *what, const char *why, uint32_t pid)
{
	pr_err("%s is invalid: %s (task %u)", what, why, pid);
	return -1;
}

/* Whether an id is in @sorted twice, once sorted. */
static int repeated(uint32_t *sorted, size_t nr)
{
	size_t i;

	qsort(sorted, nr, sizeof(*sorted), cmp_u32);
	for (i = 1; i < nr; i++)
		if (sorted[i] == sorted[i - 1])
			return 1;
	return 0;
}

static int check_threads(const char *what, const PstreeTask *pt)
{
	uint32_t *s;
	size_t i;
	int ret;

	if (!pt->n_threads || pt->threads[0] != pt->pid || (pt->zombie && pt->n_threads != 1))
		return bad(what, "bad thread list", pt->pid);
	if (limit_threads(pt->pid, pt->n_threads))
		return -1;
	for (i = 1; i < pt->n_threads; i++)
		if (limit_pid(pt->pid, "thread id", pt->threads[i]))
			return -1;
	if (pt->n_threads == 1)
		return 0;
	s = xmalloc(pt->n_threads * sizeof(*s));
	if (!s)
		return -1;
	memcpy(s, pt->threads, pt->n_threads * sizeof(*s));
	ret = repeated(s, pt->n_threads) ? bad(what, "thread id repeated", pt->pid) : 0;
	free(s);
	return ret;
}

int tree_check(const char *what, const PstreeEntry *pe, uint32_t root)
{
	struct at *s;
	size_t i, n = pe->n_tasks;
	int ret = -1;

	if (!n || pe->tasks[0]->pid != root || pe->tasks[0]->zombie)
		return bad(what, "no live root task as the inventory names", root);
	if (limit_tasks(n))
		return -1;
	s = xmalloc(n * sizeof(*s));
	if (!s)
		return -1;
	for (i = 0; i < n; i++) {
		s[i].pid = pe->tasks[i]->pid;
		s[i].idx = i;
	}
	qsort(s, n, sizeof(*s), cmp_at);
	for (i = 1; i < n; i++)
		if (s[i].pid == s[i - 1].pid) {
			bad(what, "pid repeated", s[i].pid);
			goto out;
		}
	for (i = 0; i < n; i++) {
		const PstreeTask *pt = pe->tasks[i];

		/* pid 1: the root is the init of a pid namespace of the tree's own */
		if ((i && pt->pid < 2) || limit_pid(pt->pid, "pid", pt->pid) ||
		    check_threads(what, pt))
			goto out;
		if (i && (uint64_t)place_of(s, n, pt->ppid) >= i) {	/* -1: not in it */
			bad(what, "parent not restored before it", pt->pid);
			goto out;
		}
		if (pt->stopped && (pt->zombie || (pt->has_stop_signal &&
						   !stop_signal_valid(pt->stop_signal)))) {
			bad(what, "stopped, but a zombie or by a signal that does not stop",
			    pt->pid);
			goto out;
		}
	}
	ret = 0;
out:
	free(s);
	return ret;
}
