// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduling of each thread: policy (with SCHED_RESET_ON_FORK), real-time
 * priority and nice value (CPU affinity is the cpu part's). All of it is
 * visible from outside, so dump needs nothing from inside the task.
 *
 * Restore applies it from criu in the final hook, once the batch is done:
 * the new task never runs criu's restore code as SCHED_IDLE (slow) or
 * SCHED_FIFO (able to starve criu on one CPU), and criu's CAP_SYS_NICE
 * works whatever user the task has become by then.
 *
 * SCHED_DEADLINE and the sched_setattr() extras (utilization clamps) are
 * not supported: check refuses the first, the second is not saved.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "sched.pb-c.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK	0x40000000
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE		6
#endif

static int policy_is_rt(unsigned int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int policy_supported(unsigned int policy)
{
	return policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE ||
	       policy_is_rt(policy);
}

/* ---------------------------------------------------------------- dump */

static int read_sched(pid_t tid, SchedThread *st)
{
	struct sched_param sp;
	int policy, nice;

	policy = sched_getscheduler(tid);
	if (policy < 0 || sched_getparam(tid, &sp)) {
		pr_perror("Thread %d: can't read its scheduling policy", tid);
		return -1;
	}
	errno = 0;
	nice = getpriority(PRIO_PROCESS, tid);
	if (nice == -1 && errno) {
		pr_perror("Thread %d: can't read its nice value", tid);
		return -1;
	}
	sched_thread__init(st);
	st->tid = tid;
	st->policy = policy & ~SCHED_RESET_ON_FORK;
	st->priority = sp.sched_priority;
	st->nice = nice;
	st->has_reset_on_fork = 1;
	st->reset_on_fork = !!(policy & SCHED_RESET_ON_FORK);
	if (!policy_supported(st->policy)) {
		pr_err("Thread %d: scheduling policy %u%s is not supported", tid, st->policy,
		       st->policy == SCHED_DEADLINE ? " (SCHED_DEADLINE)" : "");
		return -1;
	}
	return 0;
}

static int sched_check(struct dump_ctx *dc, struct dtask *t)
{
	SchedThread st;
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (read_sched(t->tids[i], &st))
			return -1;
	return 0;
}

static int sched_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	SchedEntry se = SCHED_ENTRY__INIT;
	SchedThread *st, **pst;
	int i, ret = -1;

	st = xzalloc(t->nr_threads * sizeof(*st));
	pst = xzalloc(t->nr_threads * sizeof(*pst));
	if (!st || !pst)
		goto out;
	for (i = 0; i < t->nr_threads; i++) {
		if (read_sched(t->tids[i], &st[i]))
			goto out;
		st[i].tid = t->ns_tids[i];
		pst[i] = &st[i];
	}
	se.threads = pst;
	se.n_threads = t->nr_threads;
	ret = img_write(dc->dirfd, IMG_SCHED, t->ns_pid, &se.base);
out:
	free(st);
	free(pst);
	return ret;
}

/* ------------------------------------------------------------- restore */

static SchedThread *find_thread(SchedEntry *se, pid_t tid)
{
	size_t i;

	for (i = 0; i < se->n_threads; i++)
		if (se->threads[i]->tid == (uint32_t)tid)
			return se->threads[i];
	return NULL;
}

static int sched_load(struct rst_ctx *rc, struct rtask *t)
{
	SchedEntry *se;
	SchedThread *st;
	size_t i;

	if (img_read(rc->dirfd, IMG_SCHED, t->pid, (void **)&se, 0) < 0)
		return -1;
	t->img[PART_SCHED] = se;
	for (i = 0; i < se->n_threads; i++) {
		st = se->threads[i];
		if (!policy_supported(st->policy) ||
		    (policy_is_rt(st->policy) ? st->priority < 1 || st->priority > 99 :
		     st->priority != 0) ||
		    st->nice < -20 || st->nice > 19) {
			pr_err("Task %d: image sched is invalid: thread %u has policy %u, "
			       "priority %u, nice %d", t->pid, st->tid, st->policy,
			       st->priority, st->nice);
			return -1;
		}
	}
	if (!find_thread(se, t->pid)) {
		pr_err("Task %d: image sched is invalid: no entry for the task itself", t->pid);
		return -1;
	}
	return 0;
}

static int sched_final(struct rst_ctx *rc, struct rtask *t)
{
	struct sched_param sp;
	SchedThread *st;
	int i, policy;

	for (i = 0; i < t->nr_threads; i++) {
		st = find_thread(t->img[PART_SCHED], t->tids[i]);
		if (!st)
			continue;	/* a thread the image has no entry for keeps criu's */
		sp.sched_priority = st->priority;
		policy = st->policy | (st->reset_on_fork ? SCHED_RESET_ON_FORK : 0);
		if (setpriority(PRIO_PROCESS, t->host_tids[i], st->nice)) {
			pr_perror("Task %d: can't set the nice value of thread %d to %d",
				  t->pid, t->tids[i], st->nice);
			return -1;
		}
		if (sched_setscheduler(t->host_tids[i], policy, &sp)) {
			pr_perror("Task %d: can't set the scheduling policy %u, priority %u of thread %d",
				  t->pid, st->policy, st->priority, t->tids[i]);
			return -1;
		}
	}
	return 0;
}

static void sched_release(struct rtask *t)
{
	img_free(IMG_SCHED, t->img[PART_SCHED]);
	t->img[PART_SCHED] = NULL;
}

const struct part part_sched = {
	.name = "sched",
	.id = PART_SCHED,
	.check = sched_check,
	.dump = sched_dump,
	.load = sched_load,
	.final = sched_final,
	.release = sched_release,
};
