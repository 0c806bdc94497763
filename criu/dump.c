// SPDX-License-Identifier: GPL-2.0
/*
 * The dump driver: freeze -> check -> ask inside -> write -> resume or kill.
 *
 * The tree is frozen from the root down: each task's threads are seized
 * until no new one shows up, then its children are listed and seized the
 * same way; a stopped task can neither fork nor clone. Until every image
 * is written and synced the tree is only borrowed: any failure puts
 * registers and masks back and lets every task go as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "tree/freeze.h"
#include "hooks.h"
#include "image/image.h"
#include "image/imgout.h"
#include "image/stats.h"
#include "image/sums.h"
#include "parts/part.h"
#include "parts/mm-track.h"
#include "task/infect.h"
#include "task/irmap.h"
#include "task/ptrace.h"
#include "tree/check.h"
#include "tree/plan.h"
#include "tree/stop.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

/*
 * The in-task batches, built as long as the work is (batch.h). The scratch
 * areas are mapped before the parts ask their questions, each the size of
 * a common batch: a leader's whose questions need more (thousands of
 * POSIX timers) gets a bigger area in the same place; the others answer
 * only the few per-thread questions. Only what a batch holds is copied in
 * and out.
 */
#define DUMP_LEAD_AREA		(4 * PAGE_SIZE)
#define DUMP_THREAD_AREA	(2 * PAGE_SIZE)

/*
 * Where a dump's time goes, summed over the tree: one log line at the end
 * (scripts/bench-tree.sh prints it). Steps of a task's dump are timed one
 * by one, every part's hooks apart.
 */
enum dphase {
	DP_FREEZE,		/* seize every thread, list the children */
	DP_IDS,			/* ids in the tasks' pid namespaces */
	DP_READ,		/* status, registers, masks, smaps */
	DP_CHECK,		/* every part's check */
	DP_INSIDE,		/* prepare and run the in-task batches */
	DP_PARTS,		/* every part's dump, memory apart */
	DP_MEMORY,		/* the mm part: areas and pages */
	DP_TREE,		/* tree-wide images */
	DP_WRITE,		/* pstree, inventory, syncfs */
	DP_FINISH,		/* kill (and reap) or release the tree */
	DP_NR,
};

static const char *const dphase_name[DP_NR] = {
	[DP_FREEZE] = "freeze", [DP_IDS] = "ids", [DP_READ] = "read",
	[DP_CHECK] = "check", [DP_INSIDE] = "inside", [DP_PARTS] = "parts",
	[DP_MEMORY] = "memory", [DP_TREE] = "tree", [DP_WRITE] = "write",
	[DP_FINISH] = "finish",
};

static int64_t dphase_ns[DP_NR];
static int64_t check_ns[PART_NR], dump_ns[PART_NR];

/* Adds the time since *@t0 to @acc and restarts the clock. */
static void lap(int64_t *acc, int64_t *t0)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	*acc += now - *t0;
	*t0 = now;
}

static void log_phases(int nr)
{
	char buf[1024], *p = buf, *end = buf + sizeof(buf);
	int i;

	for (i = 0; i < DP_NR; i++)
		p += snprintf(p, end - p, " %s %.1f", dphase_name[i],
			      dphase_ns[i] / 1e6);
	pr_info("Dump of %d task(s), ms:%s", nr, buf);
	p = buf;
	*p = '\0';
	for (i = 0; i < PART_NR && p < end; i++)
		if (check_ns[i] + dump_ns[i] >= 100000)
			p += snprintf(p, end - p, " %s %.1f+%.1f", parts[i]->name,
				      check_ns[i] / 1e6, dump_ns[i] / 1e6);
	pr_debug("Dump, ms per part (check+dump, from 0.1):%s", buf);
}

struct dtree {
	struct dtask **tasks;	/* parents before children; tasks[0] is the root */
	int nr;
};

static struct dtask *tree_find(struct dtree *tree, pid_t pid)
{
	int i;

	for (i = 0; i < tree->nr; i++)
		if (tree->tasks[i]->pid == pid)
			return tree->tasks[i];
	return NULL;
}

static struct dtask *tree_add(struct dtree *tree, pid_t pid, struct dtask *parent)
{
	struct dtask *t;

	if (limit_tasks(tree->nr + 1))
		return NULL;
	t = xzalloc(sizeof(*t));
	if (xgrow(tree->tasks, tree->nr) || !t) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->parent = parent;
	tree->tasks[tree->nr++] = t;
	return t;
}


static int add_thread(struct dtask *t, pid_t tid)
{
	struct dthread *th = xpush(t->th, t->nr_threads);

	if (!th)
		return -1;
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/* The tids seized so far, sorted, to look a listed one up in (10,000 threads). */
static int known_tids(struct dtask *t, pid_t **sorted)
{
	int i;

	*sorted = xmalloc((t->nr_threads + 1) * sizeof(pid_t));
	if (!*sorted)
		return -1;
	for (i = 0; i < t->nr_threads; i++)
		(*sorted)[i] = t->th[i].tid;
	qsort(*sorted, t->nr_threads, sizeof(pid_t), cmp_tid);
	return t->nr_threads;
}

/*
 * The stops of @t's threads seized from @from on, interrupted and not
 * waited for yet (a frozen one's comes once the cgroup is thawed). Every
 * thread is interrupted before the first wait, so that they stop side by
 * side rather than one after the other (10,000 threads: a round trip
 * each). A thread that died meanwhile is dropped; 1: the leader did, the
 * whole task is exiting.
 */
static int collect_stops(struct dtask *t, int from)
{
	int i, j, r, ret = 0;
	struct dthread *th;

	for (i = j = from; i < t->nr_threads; i++) {
		th = &t->th[i];
		if (!th->pending) {
			r = ptrace_wait_interrupt(th->tid,
						  th->tid == t->pid ? &t->stop_sig : NULL);
			if (r) {
				/* gone, or let go by the wait that failed */
				th->seized = 0;
				if (r < 0 || th->tid == t->pid)
					ret = ret < 0 ? ret : r;
				continue;
			}
		}
		t->th[j++] = *th;
	}
	t->nr_threads = j;
	return ret;
}

/* Seizes every thread of @t, again and again until none appears. */
static int seize_threads(struct dtask *t)
{
	struct dthread *th;
	pid_t *tids, *known;
	int i, nr, nr_known, fresh, from, ret = 0;

	do {
		nr = proc_list_threads(t->pid, &tids);
		if (nr < 0)
			return -1;
		nr_known = known_tids(t, &known);
		if (nr_known < 0) {
			free(tids);
			return -1;
		}
		fresh = 0;
		from = t->nr_threads;
		for (i = 0; i < nr && !ret; i++) {
			if (nr_known && bsearch(&tids[i], known, nr_known, sizeof(pid_t), cmp_tid))
				continue;
			if (add_thread(t, tids[i])) {
				ret = -1;
				break;
			}
			th = &t->th[t->nr_threads - 1];
			/* a frozen thread can't clone: its stop is collected once thawed */
			th->pending = freezer_holds(tids[i]);
			switch (ptrace_seize_interrupt(tids[i])) {
			case 0:
				th->seized = 1;
				fresh = 1;
				break;
			case 1:
				/* a thread may exit between the listing and us */
				t->nr_threads--;
				if (tids[i] == t->pid)
					ret = 1;	/* the whole task is exiting */
				break;
			default:
				t->nr_threads--;
				ret = -1;
			}
		}
		free(known);
		free(tids);
		/* also on a failure: a thread let go must be stopped */
		nr = collect_stops(t, from);
		if (!ret)
			ret = nr;
	} while (fresh && !ret);
	if (ret)
		return ret;
	/* the leader first, as everything else expects */
	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].tid == t->pid && i) {
			struct dthread x = t->th[0];

			t->th[0] = t->th[i];
			t->th[i] = x;
		}
	return 0;
}

/* A task that exited while we froze it: let its threads go, see what is left. */
static int exited_meanwhile(struct dtask *t)
{
	char path[64];
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].seized)
			ptrace(PTRACE_DETACH, t->th[i].tid, 0, 0);
	t->nr_threads = 0;
	snprintf(path, sizeof(path), "/proc/%d", t->pid);
	if (access(path, F_OK))
		return 1;	/* reaped already (its parent ignores SIGCHLD) */
	return 0;
}

static int seized(struct dtask *t);

static int seize_task(struct dtask *t)
{
	pid_t *tids;
	int nr, ret;

again:
	if (proc_read_stat(t->pid, 0, &t->stat))
		return exited_meanwhile(t) ? 1 : -1;
	if (t->stat.state == 'Z' || t->stat.state == 'X') {
		/* a dead leader with live threads shows as a zombie too */
		nr = proc_list_threads(t->pid, &tids);
		if (nr > 1) {
			free(tids);
			pr_err("Task %d: its main thread has exited while %d others run; "
			       "not supported", t->pid, nr - 1);
			return -1;
		}
		if (nr >= 0)
			free(tids);
		t->zombie = 1;
		t->exit_code = t->stat.exit_code;
		return add_thread(t, t->pid);
	}
	t->stop_sig = 0;
	ret = seize_threads(t);
	if (ret < 0)
		return -1;
	if (ret > 0) {
		/* it died under us: a zombie now, since its parent is frozen */
		if (exited_meanwhile(t))
			return 1;
		goto again;
	}
	/* restore would refuse more threads than there may be here: refused now */
	if (limit_threads(t->pid, t->nr_threads))
		return -1;
	return t->th[0].pending ? 0 : seized(t);
}

/* Once its leader stopped: what the stop says, and its stat, read again. */
static int seized(struct dtask *t)
{
	/* in a group stop (the trap shows its signal): it comes back stopped */
	t->stopped = t->stop_sig && t->stop_sig != SIGTRAP;
	/* stat again: the first read raced with the task */
	return proc_read_stat(t->pid, 0, &t->stat);
}

/*
 * --freeze-cgroup: every frozen thread is seized; thaw the cgroup and
 * collect their stops. Also on a failure, so that they can be let go.
 */
static int settle_frozen(struct dtree *tree)
{
	struct dtask *t;
	int i, j, r, ret = freezer_thaw();

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		for (j = 0; j < t->nr_threads; j++) {
			if (!t->th[j].pending)
				continue;
			t->th[j].pending = 0;
			r = ptrace_wait_interrupt(t->th[j].tid, j ? NULL : &t->stop_sig);
			if (r > 0)
				pr_err("Task %d: thread %d died while the tree was frozen",
				       t->pid, t->th[j].tid);
			if (r)
				t->th[j].seized = 0;
			if (r || (!j && seized(t)))
				ret = -1;
		}
	}
	return ret;
}

static int collect_children(struct dtree *tree, struct dtask *t)
{
	struct dtask *c;
	pid_t *kids;
	int i, j, nr, ret;

	for (i = 0; i < t->nr_threads; i++) {
		nr = proc_list_children(t->pid, t->th[i].tid, &kids);
		if (nr < 0)
			return -1;
		for (j = 0; j < nr; j++) {
			if (tree_find(tree, kids[j]))
				continue;
			c = tree_add(tree, kids[j], t);
			ret = c ? seize_task(c) : -1;
			if (ret > 0) {
				free(c->th);
				free(c);
				tree->nr--;	/* gone without a trace */
				continue;
			}
			if (ret < 0) {
				free(kids);
				return -1;
			}
		}
		free(kids);
	}
	return 0;
}

/* Refuses now a tree restore could not rebuild (see tree/plan.c). */
static int check_ids(struct dtree *tree)
{
	struct plan_task *pl;
	int i, ret;

	pl = xzalloc(tree_plan_cap(tree->nr) * sizeof(*pl));
	if (!pl)
		return -1;
	for (i = 0; i < tree->nr; i++) {
		struct dtask *t = tree->tasks[i];

		pl[i].pid = t->pid;
		pl[i].ppid = t->parent ? t->parent->pid : 0;
		pl[i].sid = t->stat.sid;
		pl[i].pgid = t->stat.pgid;
		pl[i].zombie = t->zombie;
	}
	ret = tree_plan(pl, tree->nr, tree_plan_cap(tree->nr));
	free(pl);
	return ret < 0 ? -1 : 0;
}

static int collect_tree(const struct opts *o, struct dtree *tree)
{
	struct dtask *root;
	int i;

	root = tree_add(tree, o->pid, NULL);
	if (!root || seize_task(root)) {
		if (root && !root->nr_threads)
			pr_err("Task %d exited", o->pid);
		return -1;
	}
	fault_point("seized");
	if (root->zombie) {
		pr_err("Task %d is a zombie: nothing to dump", o->pid);
		return -1;
	}
	for (i = 0; i < tree->nr; i++)
		if (!tree->tasks[i]->zombie && collect_children(tree, tree->tasks[i]))
			return -1;
	if (o->freeze_cgroup && settle_frozen(tree))
		return -1;
	if (root->stat.sid != root->pid && !o->shell_job) {
		pr_err("Task %d is not a session leader (session %d); use --shell-job",
		       root->pid, root->stat.sid);
		return -1;
	}
	return check_ids(tree);
}

/*
 * The ids as the task sees them, in its pid namespace: the images hold
 * those. /proc and ptrace go on with criu's own view of them.
 */
static int read_ns_ids(struct dtask *t)
{
	struct proc_status *st = &t->status;
	int i, levels;

	/* every thread's status, once: the parts read theirs (thread_status()) */
	if (proc_read_status(t->pid, st))
		return -1;
	levels = st->ns_levels;
	t->ns_pid = st->ns_pid;
	t->ns_pgid = levels > 1 ? st->ns_pgid : t->stat.pgid;
	t->ns_sid = levels > 1 ? st->ns_sid : t->stat.sid;
	t->ns_tids = xmalloc((t->nr_threads + 1) * sizeof(pid_t));
	if (!t->ns_tids)
		return -1;
	t->ns_tids[0] = t->ns_pid;
	for (i = 1; i < t->nr_threads; i++) {
		if (proc_read_status(t->th[i].tid, &t->th[i].status))
			return -1;
		t->ns_tids[i] = levels > 1 ? t->th[i].status.ns_pid : t->th[i].tid;
	}
	if (t->ns_pid != t->pid)
		pr_info("Task %d is %d in its pid namespace", t->pid, t->ns_pid);
	return 0;
}

/*
 * A pre-dump saves memory, as CRIU's does: the final dump saves the rest,
 * with the options a client gives it then. crun's pre-dump gives none but
 * its directories, and the other parts would refuse what only they need
 * (a mount to name as external, a connection without --tcp-established).
 */
static int part_skipped(const struct dump_ctx *dc, int i)
{
	return dc->opts->pre_dump && !parts[i]->in_pre_dump;
}

static int parts_frozen(struct dump_ctx *dc, struct dtask *t)
{
	int i;

	for (i = 0; i < PART_NR && !t->zombie; i++)
		if (!part_skipped(dc, i) && parts[i]->frozen && parts[i]->frozen(dc, t))
			return -1;
	return 0;
}

/* Registers and masks, and the per-thread list the parts walk. */
static int read_threads(struct dtask *t)
{
	int i;

	t->tids = xmalloc(t->nr_threads * sizeof(pid_t));
	if (!t->tids)
		return -1;
	for (i = 0; i < t->nr_threads; i++) {
		t->tids[i] = t->th[i].tid;
		if (ptrace_get_regs(t->th[i].tid, &t->th[i].regs) ||
		    ptrace_get_sigmask(t->th[i].tid, &t->th[i].sigmask))
			return -1;
	}
	t->regs = t->th[0].regs;
	t->sigmask = t->th[0].sigmask;
	return 0;
}

/* In-task questions of every part, one round trip per thread. */
static int ask_inside(struct dump_ctx *dc, struct dtree *tree, struct dtask *t)
{
	struct infect inf;
	int i, j, ret = -1;
	uint64_t area;

	if (infect_start(&inf, t->pid, &t->maps, &t->status, DUMP_LEAD_AREA, DUMP_THREAD_AREA,
			 t->nr_threads))
		return -1;
	for (i = 0; i < t->nr_threads; i++)
		if (infect_borrow(&inf, t->th[i].tid, &t->th[i].regs, t->th[i].sigmask, &area) ||
		    batch_init_grow(&t->th[i].b, area))
			goto out;
	for (j = 0; j < PART_NR; j++)
		if (!part_skipped(dc, j) && parts[j]->prepare &&
		    parts[j]->prepare(dc, t, &t->th[0].b))
			goto out;
	if (stop_ask_parent(tree->tasks, tree->nr, t, &t->th[0].b))
		goto out;
	for (i = 0; i < t->nr_threads; i++)
		for (j = 0; j < PART_NR; j++)
			if (!part_skipped(dc, j) && parts[j]->prepare_thread &&
			    parts[j]->prepare_thread(dc, t, i, &t->th[i].b))
				goto out;
	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].b.nr && (infect_resize(&inf, i, batch_seal(&t->th[i].b)) ||
				      infect_run(&inf, i, &t->th[i].b)))
			goto out;
	ret = 0;
out:
	if (infect_stop(&inf))
		ret = -1;
	return ret;
}

/*
 * The address spaces, read ahead. smaps is the one big /proc file of a
 * task (80 us for a small one: the kernel prints 25 lines per area), and
 * nothing needs criu's ptrace: a reader thread reads the tasks' smaps in
 * dump order while the main thread infects and dumps the tasks before
 * them, and hands each over. Only the infection changes a frozen task's
 * areas (the scratch area), and the reader is always past the task being
 * infected; a task sharing its memory with another one (CLONE_VM
 * without a thread group: vfork) could show that other task's scratch
 * area, so those are read by the main thread at their turn, as before.
 * The reader logs nothing: whatever it could not read is read again
 * by the main thread, which says why it failed.
 */
struct maps_ahead {
	struct dtree *tree;
	char *own;		/* per task: read here (1) or by the main thread (0) */
	int *ok;		/* per task: the reader left its maps in t->maps */
	int done;		/* tasks [0, done) are handed over */
	int stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t th;
	int running;
};

struct vm_order {
	struct dtree *tree;
	int failed;
};

/* kcmp orders address spaces: 0 the same, 1 and 2 less and greater. */
static int cmp_vm(const void *a, const void *b, void *arg)
{
	struct vm_order *o = arg;
	long c = syscall(SYS_kcmp, o->tree->tasks[*(const int *)a]->pid,
			 o->tree->tasks[*(const int *)b]->pid, KCMP_VM, 0, 0);

	if (c < 0 || c > 2)
		o->failed = 1;
	return c == 1 ? -1 : c == 2 ? 1 : 0;
}

/* Marks in @own the live tasks whose address space no other task shares. */
static void find_own_mm(struct dtree *tree, char *own)
{
	struct vm_order o = { .tree = tree };
	int *idx = xmalloc(tree->nr * sizeof(*idx));
	int i, n = 0;

	memset(own, 0, tree->nr);
	if (!idx)
		return;
	for (i = 0; i < tree->nr; i++)
		if (!tree->tasks[i]->zombie)
			idx[n++] = i;
	/* sorted, the tasks that share one are neighbours */
	qsort_r(idx, n, sizeof(*idx), cmp_vm, &o);
	for (i = 0; i < n && !o.failed; i++)
		own[idx[i]] = (!i || cmp_vm(&idx[i - 1], &idx[i], &o)) &&
			      (i == n - 1 || cmp_vm(&idx[i], &idx[i + 1], &o));
	if (o.failed)
		memset(own, 0, tree->nr);	/* then the main thread reads them all */
	free(idx);
}

static void *maps_reader(void *arg)
{
	struct maps_ahead *ma = arg;
	struct dtask *t;
	char path[64], *buf;
	int i, ok;

	for (i = 0; i < ma->tree->nr; i++) {
		t = ma->tree->tasks[i];
		ok = 0;
		if (ma->own[i]) {
			snprintf(path, sizeof(path), "/proc/%d/smaps", t->pid);
			buf = read_file(-1, path, NULL);
			ok = buf && !proc_parse_maps(buf, &t->maps);
			free(buf);
		}
		pthread_mutex_lock(&ma->lock);
		ma->ok[i] = ok;
		ma->done = i + 1;
		pthread_cond_signal(&ma->cond);
		if (ma->stop)
			i = ma->tree->nr;
		pthread_mutex_unlock(&ma->lock);
	}
	return NULL;
}

/* Starts the reader; without one, every task is read at its turn. */
static void maps_ahead_start(struct maps_ahead *ma, struct dtree *tree)
{
	memset(ma, 0, sizeof(*ma));
	ma->tree = tree;
	ma->own = xmalloc(tree->nr);
	ma->ok = xzalloc(tree->nr * sizeof(*ma->ok));
	if (!ma->own || !ma->ok)
		return;
	find_own_mm(tree, ma->own);
	pthread_mutex_init(&ma->lock, NULL);
	pthread_cond_init(&ma->cond, NULL);
	ma->running = !pthread_create(&ma->th, NULL, maps_reader, ma);
}

/* The maps of task @i: the reader's, or read now. */
static int maps_of(struct maps_ahead *ma, int i, struct dtask *t)
{
	int ok = 0;

	if (ma->running) {
		pthread_mutex_lock(&ma->lock);
		while (ma->done <= i)
			pthread_cond_wait(&ma->cond, &ma->lock);
		ok = ma->ok[i];
		pthread_mutex_unlock(&ma->lock);
	}
	if (ok)
		return 0;
	proc_maps_free(&t->maps);
	return proc_read_maps(t->pid, 1, &t->maps);
}

static void maps_ahead_stop(struct maps_ahead *ma)
{
	if (ma->running) {
		pthread_mutex_lock(&ma->lock);
		ma->stop = 1;
		pthread_mutex_unlock(&ma->lock);
		pthread_join(ma->th, NULL);
		pthread_mutex_destroy(&ma->lock);
		pthread_cond_destroy(&ma->cond);
	}
	free(ma->own);
	free(ma->ok);
	ma->own = NULL;
	ma->ok = NULL;
	ma->running = 0;
}

static int dump_task(struct dump_ctx *dc, struct dtree *tree, struct maps_ahead *ma, int idx,
		     struct dtask *t)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), tp;
	int i, ret = -1;

	if (read_threads(t))
		return -1;
	if (t->status.tracer && t->status.tracer != getpid()) {
		pr_err("Task %d is traced by %d", t->pid, t->status.tracer);
		return -1;
	}
	/* the scratch area comes and goes without a trace: one read serves all */
	if (maps_of(ma, idx, t))
		return -1;
	lap(&dphase_ns[DP_READ], &t0);
	for (i = 0; i < PART_NR; i++) {
		tp = t0;
		if (!part_skipped(dc, i) && parts[i]->check && parts[i]->check(dc, t))
			return -1;
		lap(&check_ns[i], &tp);
		lap(&dphase_ns[DP_CHECK], &t0);
	}
	if (ask_inside(dc, tree, t))
		goto out;
	stop_read_answers(tree->tasks, tree->nr, t, &t->th[0].b);
	lap(&dphase_ns[DP_INSIDE], &t0);
	fault_point("infected");
	for (i = 0; i < PART_NR; i++) {
		tp = t0;
		if (!part_skipped(dc, i) && parts[i]->dump && parts[i]->dump(dc, t, &t->th[0].b))
			goto out;
		lap(&dump_ns[i], &tp);
		lap(&dphase_ns[i == PART_MM ? DP_MEMORY : DP_PARTS], &t0);
		if (i == PART_MM)
			fault_point("memory");
	}
	ret = 0;
out:
	for (i = 0; i < t->nr_threads; i++)
		batch_free(&t->th[i].b);
	return ret;
}

static int write_tree(struct dump_ctx *dc, struct dtree *tree)
{
	PstreeEntry e = PSTREE_ENTRY__INIT;
	PstreeTask *pts, **ppt;
	uint32_t *tids;
	int i, j, n = 0, ret;

	for (i = 0; i < tree->nr; i++)
		n += tree->tasks[i]->nr_threads;
	pts = xzalloc(tree->nr * sizeof(*pts));
	ppt = xzalloc(tree->nr * sizeof(*ppt));
	tids = xzalloc((n + 1) * sizeof(*tids));
	if (!pts || !ppt || !tids) {
		ret = -1;
		goto out;
	}
	for (i = 0, n = 0; i < tree->nr; i++) {
		struct dtask *t = tree->tasks[i];

		pstree_task__init(&pts[i]);
		pts[i].pid = t->ns_pid;
		/* the parent of a pid namespace's init is outside it: 0 */
		pts[i].ppid = t->parent ? t->parent->ns_pid :
			      t->ns_pid == t->pid ? t->stat.ppid : 0;
		pts[i].pgid = t->ns_pgid;
		pts[i].sid = t->ns_sid;
		pts[i].threads = tids + n;
		for (j = 0; j < t->nr_threads; j++)
			tids[n++] = t->ns_tids[j];
		pts[i].n_threads = t->nr_threads;
		stop_fill(t, &pts[i]);
		if (t->zombie) {
			pts[i].has_zombie = pts[i].has_exit_code = 1;
			pts[i].zombie = 1;
			pts[i].exit_code = t->exit_code;
			pts[i].comm = t->stat.comm;
		}
		ppt[i] = &pts[i];
	}
	e.tasks = ppt;
	e.n_tasks = tree->nr;
	/* what the restore will check, checked: never a tree it refuses */
	ret = tree_check("The dumped tree", &e, tree->tasks[0]->ns_pid);
	if (!ret)
		ret = img_write(dc->dirfd, IMG_PSTREE, 0, &e.base);
out:
	free(pts);
	free(ppt);
	free(tids);
	return ret;
}

static int write_inventory(struct dump_ctx *dc, struct dtree *tree)
{
	InventoryEntry e = INVENTORY_ENTRY__INIT;

	e.fmt_version = IMG_FMT_VERSION;
	e.root_pid = tree->tasks[0]->ns_pid;
	e.criu_version = CRIU_VERSION;
	e.has_dump_realtime_ns = e.has_page_size = e.has_ntasks = 1;
	e.dump_realtime_ns = clock_ns(CLOCK_REALTIME);
	e.page_size = PAGE_SIZE;
	e.ntasks = tree->nr;
	img_sums_fill(&e);
	return img_write(dc->dirfd, IMG_INVENTORY, 0, &e.base);
}

static void release_tree(struct dtree *tree, int detach)
{
	struct dtask *t;
	int i, j;

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		/* a stopped task goes back into its stop by itself (tree/stop.c) */
		for (j = 0; detach && j < t->nr_threads; j++)
			if (t->th[j].seized && ptrace(PTRACE_DETACH, t->th[j].tid, 0, 0))
				pr_perror("Task %d: can't detach from thread %d", t->pid,
					  t->th[j].tid);
		proc_maps_free(&t->maps);
		proc_status_free(&t->status);
		for (j = 0; t->th && j < t->nr_threads; j++)
			proc_status_free(&t->th[j].status);
		free(t->tids);
		free(t->ns_tids);
		free(t->th);
		free(t);
	}
	free(tree->tasks);
}

/* Marks thread @tid of the tree as reaped; 0 when it is not the tree's. */
static int reaped(struct dtree *tree, pid_t tid)
{
	int i, j;

	for (i = 0; i < tree->nr; i++)
		for (j = 0; j < tree->tasks[i]->nr_threads; j++)
			if (tree->tasks[i]->th[j].tid == tid) {
				tree->tasks[i]->th[j].tid = 0;
				return 1;
			}
	return 0;
}

/*
 * As their tracer we see the killed threads die (their parents reap
 * them), in an order the kernel chooses: a leader after its other
 * threads, and a pid namespace's init only once the rest of the
 * namespace is gone, while the thread that tears the namespace down
 * waits for its own dead siblings to be reaped first. So take them as
 * they come, sleeping in wait until the next one; when none is left to
 * wait for (ECHILD), the rest was never ours to reap.
 */
static void reap_tree(struct dtree *tree)
{
	int i, j, status, left = 0;
	struct dtask *t;
	pid_t r;

	for (i = 0; i < tree->nr; i++)
		for (j = 0; j < tree->tasks[i]->nr_threads; j++)
			if (tree->tasks[i]->zombie)
				tree->tasks[i]->th[j].tid = 0;
			else
				left++;
	/*
	 * A thread but the leader is ours to reap, and dies whatever else
	 * does: waited for by its tid, as waitpid(-1) looks at every thread
	 * still traced (10,000 threads: 50 million looks). Not in a pid
	 * namespace of the tree's own: there one thread of the init waits,
	 * alive, for every other task of it to be reaped first.
	 */
	for (i = 0; tree->tasks[0]->ns_pid == tree->tasks[0]->pid && i < tree->nr; i++) {
		t = tree->tasks[i];
		for (j = 1; j < t->nr_threads && !t->zombie; j++) {
			do
				r = waitpid(t->th[j].tid, &status, __WALL);
			while (r > 0 && WIFSTOPPED(status));
			if (r == t->th[j].tid) {
				t->th[j].tid = 0;
				left--;
			}
		}
	}
	while (left) {
		r = waitpid(-1, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (!WIFSTOPPED(status) && reaped(tree, r))
			left--;
	}
}

/* After the images are safe: kill the tree, or let it go on. */
static int finish(const struct opts *o, struct dtree *tree)
{
	int i, j, ret = 0;
	struct dtask *t;

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		if (t->zombie)
			continue;
		if (o->leave_running || o->leave_stopped) {
			/*
			 * A stopped task sinks back into its stop, unreported:
			 * a SIGSTOP would be a new stop (tree/stop.c).
			 */
			for (j = 0; j < t->nr_threads; j++)
				if (ptrace(PTRACE_DETACH, t->th[j].tid, 0,
					   o->leave_stopped && !t->stopped && !j ? SIGSTOP : 0)) {
					pr_perror("Task %d: can't detach from it", t->pid);
					ret = -1;
				}
		} else if (kill(t->pid, SIGKILL)) {
			pr_perror("Task %d: can't kill it after the dump", t->pid);
			ret = -1;
		}
		for (j = 0; j < t->nr_threads; j++)
			t->th[j].seized = 0;
	}
	if (o->leave_running || o->leave_stopped)
		return ret;
	reap_tree(tree);
	return ret;
}

/*
 * Once the tree's descriptions are known: room in every task for its fds
 * and criu's at restore, as the restore will count it (limit_fd_room()).
 */
static int check_fd_room(struct dump_ctx *dc, struct dtree *tree)
{
	struct dtask *t;
	int i;

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		if (!t->zombie && limit_fd_room(t->pid, t->nr_fds, dc->restore_shared,
						t->restore_own))
			return -1;
	}
	return 0;
}

/*
 * CRIU's notion: the tree's network is locked around the dump when its
 * root has a network namespace of its own (parts/ns-net.c locks it).
 */
static int own_netns(pid_t pid)
{
	uint64_t its = proc_ns_id(pid, 0, "net");

	return its && its != proc_ns_id(0, 0, "net");
}

/*
 * Once per dump, after pre_freeze began: the parts undo what holds the
 * tree (the network lock), then the client hears of it; see part.h.
 */
static void after_dump(struct dump_ctx *dc, int *prefrozen, int runs, int locked)
{
	int i;

	if (!*prefrozen)
		return;
	*prefrozen = 0;
	for (i = 0; i < PART_NR; i++)
		if (!part_skipped(dc, i) && parts[i]->after_dump)
			parts[i]->after_dump(dc, runs);
	if (locked && runs)
		hook_run(HOOK_NETWORK_UNLOCK, dc->opts->pid, -1);
}

/* stats-dump in the work directory, with the phases' times. */
static void write_stats(const struct opts *o)
{
	int64_t frozen = 0;
	int i;

	for (i = DP_IDS; i < DP_NR; i++)
		frozen += dphase_ns[i];
	stats_set_time(STAT_FREEZING, dphase_ns[DP_FREEZE]);
	stats_set_time(STAT_FROZEN, frozen);
	stats_set_time(STAT_MEMDUMP, dphase_ns[DP_MEMORY]);
	stats_set_time(STAT_MEMWRITE, dphase_ns[DP_WRITE]);
	stats_write(o->work_dirfd, 0, o->display_stats);
}

int cr_dump(const struct opts *o)
{
	struct dump_ctx dc = { .opts = o };
	struct dtree tree = { 0 };
	struct maps_ahead ma = { 0 };
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int i, ret = -1, locked = 0, prefrozen = 0, runs = 0;

	if (o->pid <= 1 || o->pid == getpid()) {
		pr_err("Can't dump task %d", o->pid);
		return -1;
	}
	dc.dirfd = fcntl(o->images_dirfd, F_DUPFD_CLOEXEC, 0);
	if (dc.dirfd < 0) {
		pr_perror("Can't use the images directory %s", o->images_dir);
		return -1;
	}
	/* no inventory means no checkpoint, whatever else is left here */
	unlinkat(dc.dirfd, "inventory.img", 0);
	/* the images go to the page server, the logs stay here */
	if (o->page_server && imgout_connect(dc.dirfd, o->address, o->port, &o->tls,
						    img_staged_stores())) {
		imgout_end(dc.dirfd, 0);
		close(dc.dirfd);
		return -1;
	}
	stats_reset();
	if (mtrack_begin(o, dc.dirfd))
		goto out;
	hooks_set_images_dir(o->images_dir);
	if (hook_run(HOOK_PRE_DUMP, o->pid, -1))
		goto out;
	/* the network is locked before the first task stops, and told first */
	locked = hooks_wanted() && own_netns(o->pid);
	if (locked && hook_run(HOOK_NETWORK_LOCK, o->pid, -1))
		goto out;
	prefrozen = 1;
	for (i = 0; i < PART_NR; i++)
		if (!part_skipped(&dc, i) && parts[i]->pre_freeze && parts[i]->pre_freeze(&dc))
			goto out;
	t0 = clock_ns(CLOCK_MONOTONIC);
	ptrace_poll_waits(1);
	if (o->freeze_cgroup && freezer_freeze(o->freeze_cgroup))
		goto out;
	if (collect_tree(o, &tree))
		goto out;
	pr_info("Frozen %d task(s)", tree.nr);
	lap(&dphase_ns[DP_FREEZE], &t0);
	maps_ahead_start(&ma, &tree);
	for (i = 0; i < tree.nr; i++)
		if (read_ns_ids(tree.tasks[i]) || parts_frozen(&dc, tree.tasks[i]))
			goto out;
	lap(&dphase_ns[DP_IDS], &t0);
	for (i = 0; i < tree.nr; i++)
		if (!tree.tasks[i]->zombie && dump_task(&dc, &tree, &ma, i, tree.tasks[i]))
			goto out;
	maps_ahead_stop(&ma);
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < PART_NR; i++)
		if (!part_skipped(&dc, i) && parts[i]->dump_tree && parts[i]->dump_tree(&dc))
			goto out;
	if (check_fd_room(&dc, &tree))
		goto out;
	lap(&dphase_ns[DP_TREE], &t0);
	if (write_tree(&dc, &tree) || write_inventory(&dc, &tree) || imgout_commit(dc.dirfd))
		goto out;
	lap(&dphase_ns[DP_WRITE], &t0);
	fault_point("written");
	/* a "no" here still lets the tree go: the images are not a checkpoint */
	if (hook_run(HOOK_POST_DUMP, o->pid, -1))
		goto out;
	runs = o->leave_running || o->leave_stopped;
	if (runs) {
		after_dump(&dc, &prefrozen, 1, locked);
		/* a cgroup frozen before is frozen again before anything is let go */
		if (freezer_end())
			goto out;
	}
	ret = finish(o, &tree);
	if (!runs) {
		after_dump(&dc, &prefrozen, ret != 0, locked);
		/* the checkpoint is whole and the tree gone: a cgroup left thawed is no failure */
		if (freezer_end())
			pr_warn("Cgroup %s was frozen before the dump and is thawed now",
				o->freeze_cgroup);
	}
	lap(&dphase_ns[DP_FINISH], &t0);
	log_phases(tree.nr);
	pr_info("Dumped %d task(s)", tree.nr);
	if (!ret)
		write_stats(o);
out:
	maps_ahead_stop(&ma);
	/* before the tree goes: a task left running is tracked, or not at all */
	mtrack_end(o, dc.dirfd, !ret);
	if (ret)
		unlinkat(dc.dirfd, "inventory.img", 0);
	if (ret && o->freeze_cgroup) {
		settle_frozen(&tree);
		freezer_end();
	}
	freezer_release();
	after_dump(&dc, &prefrozen, 1, locked);
	release_tree(&tree, ret != 0);
	irmap_forget();
	imgout_end(dc.dirfd, !ret);
	close(dc.dirfd);
	return ret;
}
