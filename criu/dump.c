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
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "dump.h"
#include "image/image.h"
#include "parts/part.h"
#include "stop.h"
#include "task/ptrace.h"
#include "tree-plan.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

#define DUMP_BATCH_ENTRIES	256
#define DUMP_BATCH_DATA		(64 << 10)
#define MAX_TASKS		(1 << 16)

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
	struct dtask **n, *t;

	if (tree->nr == MAX_TASKS) {
		pr_err("Task %d: the tree has more than %d tasks", pid, MAX_TASKS);
		return NULL;
	}
	n = xrealloc(tree->tasks, (tree->nr + 1) * sizeof(*n));
	t = xzalloc(sizeof(*t));
	if (!n || !t) {
		free(t);
		return NULL;
	}
	tree->tasks = n;
	t->pid = pid;
	t->parent = parent;
	tree->tasks[tree->nr++] = t;
	return t;
}

static struct dthread *find_thread(struct dtask *t, pid_t tid)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].tid == tid)
			return &t->th[i];
	return NULL;
}

static int add_thread(struct dtask *t, pid_t tid)
{
	struct dthread *n = xrealloc(t->th, (t->nr_threads + 1) * sizeof(*n));

	if (!n)
		return -1;
	t->th = n;
	memset(&t->th[t->nr_threads], 0, sizeof(*n));
	t->th[t->nr_threads++].tid = tid;
	return 0;
}

/* Seizes every thread of @t, again and again until none appears. */
static int seize_threads(struct dtask *t)
{
	struct dthread *th;
	pid_t *tids;
	int i, nr, fresh;

	do {
		nr = proc_list_threads(t->pid, &tids);
		if (nr < 0)
			return -1;
		fresh = 0;
		for (i = 0; i < nr; i++) {
			if (find_thread(t, tids[i]))
				continue;
			if (add_thread(t, tids[i]))
				goto err;
			th = &t->th[t->nr_threads - 1];
			switch (ptrace_seize_stop(tids[i], tids[i] == t->pid ?
						  &t->stop_sig : NULL)) {
			case 0:
				break;
			case 1:
				/* a thread may exit between the listing and us */
				t->nr_threads--;
				if (tids[i] != t->pid)
					continue;
				free(tids);
				return 1;	/* the whole task is exiting */
			default:
				goto err;
			}
			th->seized = 1;
			fresh = 1;
		}
		free(tids);
	} while (fresh);
	/* the leader first, as everything else expects */
	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].tid == t->pid && i) {
			struct dthread x = t->th[0];

			t->th[0] = t->th[i];
			t->th[i] = x;
		}
	return 0;
err:
	free(tids);
	return -1;
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
	/* in a group stop (the trap shows its signal): it comes back stopped */
	t->stopped = t->stop_sig && t->stop_sig != SIGTRAP;
	/* stat again: the first read raced with the task */
	return proc_read_stat(t->pid, 0, &t->stat);
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

/* Refuses now a tree restore could not rebuild (see tree-plan.c). */
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
	struct proc_status st;
	int i, levels;

	if (proc_read_status(t->pid, &st))
		return -1;
	levels = st.ns_levels;
	t->ns_pid = st.ns_pid;
	t->ns_pgid = levels > 1 ? st.ns_pgid : t->stat.pgid;
	t->ns_sid = levels > 1 ? st.ns_sid : t->stat.sid;
	proc_status_free(&st);
	t->ns_tids = xmalloc((t->nr_threads + 1) * sizeof(pid_t));
	if (!t->ns_tids)
		return -1;
	for (i = 0; i < t->nr_threads; i++) {
		t->ns_tids[i] = t->th[i].tid;
		if (levels == 1)
			continue;
		if (proc_read_status(t->th[i].tid, &st))
			return -1;
		t->ns_tids[i] = st.ns_pid;
		proc_status_free(&st);
	}
	if (t->ns_pid != t->pid)
		pr_info("Task %d is %d in its pid namespace", t->pid, t->ns_pid);
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
static int ask_inside(struct dump_ctx *dc, struct dtree *tree, struct dtask *t, void **buf)
{
	size_t per = batch_area_size(DUMP_BATCH_ENTRIES, DUMP_BATCH_DATA);
	struct infect inf;
	int i, j, ret = -1;
	uint64_t area;

	*buf = xzalloc(per * t->nr_threads);
	if (!*buf)
		return -1;
	if (infect_start(&inf, t->pid, &t->maps, &t->status, per, t->nr_threads))
		return -1;
	for (i = 0; i < t->nr_threads; i++)
		if (infect_borrow(&inf, t->th[i].tid, &t->th[i].regs, t->th[i].sigmask, &area) ||
		    batch_init(&t->th[i].b, (char *)*buf + i * per, area, per,
			       DUMP_BATCH_ENTRIES))
			goto out;
	for (j = 0; j < PART_NR; j++)
		if (parts[j]->prepare && parts[j]->prepare(dc, t, &t->th[0].b))
			goto out;
	if (stop_ask_parent(tree->tasks, tree->nr, t, &t->th[0].b))
		goto out;
	for (i = 0; i < t->nr_threads; i++)
		for (j = 0; j < PART_NR; j++)
			if (parts[j]->prepare_thread &&
			    parts[j]->prepare_thread(dc, t, i, &t->th[i].b))
				goto out;
	for (i = 0; i < t->nr_threads; i++)
		if (t->th[i].b.nr && infect_run(&inf, i, &t->th[i].b))
			goto out;
	ret = 0;
out:
	if (infect_stop(&inf))
		ret = -1;
	return ret;
}

static int dump_task(struct dump_ctx *dc, struct dtree *tree, struct dtask *t)
{
	void *buf = NULL;
	int i, ret = -1;

	if (proc_read_status(t->pid, &t->status) || read_threads(t))
		return -1;
	if (t->status.tracer && t->status.tracer != getpid()) {
		pr_err("Task %d is traced by %d", t->pid, t->status.tracer);
		return -1;
	}
	/* the scratch area comes and goes without a trace: one read serves all */
	if (proc_read_maps(t->pid, 1, &t->maps))
		return -1;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->check && parts[i]->check(dc, t))
			return -1;
	if (ask_inside(dc, tree, t, &buf))
		goto out;
	stop_read_answers(tree->tasks, tree->nr, t, &t->th[0].b);
	fault_point("infected");
	for (i = 0; i < PART_NR; i++) {
		if (parts[i]->dump && parts[i]->dump(dc, t, &t->th[0].b))
			goto out;
		if (i == PART_MM)
			fault_point("memory");
	}
	ret = 0;
out:
	free(buf);
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
	return img_write(dc->dirfd, IMG_INVENTORY, 0, &e.base);
}

static void release_tree(struct dtree *tree, int detach)
{
	struct dtask *t;
	int i, j;

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		/* a stopped task goes back into its stop by itself (stop.c) */
		for (j = 0; detach && j < t->nr_threads; j++)
			if (t->th[j].seized && ptrace(PTRACE_DETACH, t->th[j].tid, 0, 0))
				pr_perror("Task %d: can't detach from thread %d", t->pid,
					  t->th[j].tid);
		proc_maps_free(&t->maps);
		proc_status_free(&t->status);
		free(t->tids);
		free(t->ns_tids);
		free(t->th);
		free(t);
	}
	free(tree->tasks);
}

/* After the images are safe: kill the tree, or let it go on. */
static int finish(const struct opts *o, struct dtree *tree)
{
	int i, j, status, left, ret = 0;
	struct dtask *t;

	for (i = 0; i < tree->nr; i++) {
		t = tree->tasks[i];
		if (t->zombie)
			continue;
		if (o->leave_running || o->leave_stopped) {
			/*
			 * A stopped task sinks back into its stop, unreported:
			 * a SIGSTOP would be a new stop (stop.c).
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
	/*
	 * As their tracer we see them die (their parents reap them), in an
	 * order the kernel chooses: a leader after its other threads, and a
	 * pid namespace's init only once the rest of the namespace is gone,
	 * while the thread that tears the namespace down waits for its own
	 * dead siblings to be reaped first. So take them as they come.
	 */
	do {
		left = 0;
		for (i = 0; i < tree->nr; i++)
			for (j = 0; j < tree->tasks[i]->nr_threads; j++) {
				pid_t *tid = &tree->tasks[i]->th[j].tid, r;

				if (!*tid)
					continue;
				r = waitpid(*tid, &status, __WALL | WNOHANG);
				if (r == 0 || (r < 0 && errno == EINTR))
					left++;
				else
					*tid = 0;	/* reaped (or never ours to reap) */
			}
		if (left)
			usleep(1000);
	} while (left);
	return ret;
}

int cr_dump(const struct opts *o)
{
	struct dump_ctx dc = { .opts = o };
	struct dtree tree = { 0 };
	int i, ret = -1;

	if (o->pid <= 1 || o->pid == getpid()) {
		pr_err("Can't dump task %d", o->pid);
		return -1;
	}
	dc.dirfd = open(o->images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dc.dirfd < 0) {
		pr_perror("Can't open the images directory %s", o->images_dir);
		return -1;
	}
	/* no inventory means no checkpoint, whatever else is left here */
	unlinkat(dc.dirfd, "inventory.img", 0);
	if (collect_tree(o, &tree))
		goto out;
	pr_info("Frozen %d task(s)", tree.nr);
	for (i = 0; i < tree.nr; i++)
		if (read_ns_ids(tree.tasks[i]))
			goto out;
	for (i = 0; i < tree.nr; i++)
		if (!tree.tasks[i]->zombie && dump_task(&dc, &tree, tree.tasks[i]))
			goto out;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->dump_tree && parts[i]->dump_tree(&dc))
			goto out;
	if (write_tree(&dc, &tree) || write_inventory(&dc, &tree) || syncfs(dc.dirfd)) {
		pr_perror("Can't write and sync the images");
		goto out;
	}
	fault_point("written");
	ret = finish(o, &tree);
	pr_info("Dumped %d task(s)", tree.nr);
out:
	if (ret)
		unlinkat(dc.dirfd, "inventory.img", 0);
	release_tree(&tree, ret != 0);
	close(dc.dirfd);
	return ret;
}
