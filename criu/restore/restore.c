// SPDX-License-Identifier: GPL-2.0
/*
 * The restore driver: read -> namespaces -> fork the tree -> parts -> resume.
 *
 * Each task starts as a copy of criu with its old pid (clone3 set_tid),
 * created by its own parent; it prepares itself (task.c) and waits.
 * criu then seizes the tasks, several at once (takeover.c), and
 * runs each one's batch inside it: that unmaps criu, maps the dumped
 * memory, reads the pages straight from the page store and clones the
 * threads, which run their own small batches. Last, criu removes the
 * trampoline, loads every thread's registers and lets the whole tree go
 * at once. Seized tasks carry PTRACE_O_EXITKILL, the others
 * die with their parent: if criu dies, nothing half-restored is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "hooks.h"
#include "image/image.h"
#include "image/stats.h"
#include "image/sums.h"
#include "parts/part.h"
#include "restore/rtree.h"
#include "restore/takeover.h"
#include "restore/task.h"
#include "task/ptrace.h"
#include "task/pty.h"
#include "tree/check.h"
#include "tree/plan.h"
#include "tree/stop.h"
#include "inventory.pb-c.h"

#define AREA_MIN_ADDR		(1ULL << 30)
#define READY_TIMEOUT_S		60

static int link_node(struct rtree *tree, int i)
{
	struct rnode *n = &tree->nodes[i];
	size_t j;

	n->t.pid = n->pt->pid;
	n->t.nr_threads = n->pt->n_threads;
	n->t.tids = xmalloc(n->t.nr_threads * sizeof(pid_t));
	if (!n->t.tids)
		return -1;
	for (j = 0; j < n->pt->n_threads; j++)
		n->t.tids[j] = n->pt->threads[j];
	return 0;
}

static int add_kid(struct rnode *c, struct rnode *n)
{
	struct rnode **slot = xpush(c->kids, c->nr_kids);

	if (!slot)
		return -1;
	*slot = n;
	return 0;
}

/* The stand-ins tree_plan() asked for, as tasks of the tree. */
static int add_helpers(struct rtree *tree, struct plan_task *pl, int nr)
{
	int i, k = tree->nr;

	if (nr == k)
		return 0;
	tree->helper_pts = xzalloc((nr - k) * sizeof(PstreeTask));
	if (!tree->helper_pts)
		return -1;
	for (i = k; i < nr; i++) {
		PstreeTask *pt = &tree->helper_pts[i - k];

		pstree_task__init(pt);
		pt->pid = pl[i].pid;
		pt->ppid = pl[i].ppid;
		pt->sid = pl[i].sid;
		pt->pgid = pl[i].pgid;
		pt->n_threads = 1;
		pt->threads = &pt->pid;
		tree->nodes[i].pt = pt;
		tree->nodes[i].helper = 1;
		tree->nr = i + 1;
		if (link_node(tree, i))
			return -1;
	}
	return 0;
}

/* Who forks whom: see tree/plan.c. */
static int plan_tree(struct rtree *tree)
{
	struct plan_task *pl;
	int i, nr, ret = -1;

	pl = xzalloc(tree_plan_cap(tree->nr) * sizeof(*pl));
	if (!pl)
		return -1;
	for (i = 0; i < tree->nr; i++) {
		pl[i].pid = tree->nodes[i].pt->pid;
		pl[i].ppid = tree->nodes[i].pt->ppid;
		pl[i].sid = tree->nodes[i].pt->sid;
		pl[i].pgid = tree->nodes[i].pt->pgid;
		pl[i].zombie = tree->nodes[i].pt->zombie;
	}
	nr = tree_plan(pl, tree->nr, tree_plan_cap(tree->nr));
	if (nr < 0 || add_helpers(tree, pl, nr))
		goto out;
	for (i = 1; i < nr; i++) {
		struct rnode *n = &tree->nodes[i];

		n->parent = &tree->nodes[pl[i].parent];
		n->creator = &tree->nodes[pl[i].creator];
		n->t.creator = &n->creator->t;
		if (add_kid(n->creator, n))
			goto out;
	}
	ret = 0;
out:
	free(pl);
	return ret;
}

static int read_tree(struct rst_ctx *rc, struct rtree *tree, PstreeEntry **pe)
{
	InventoryEntry *inv;
	PstreeEntry *pt;
	int i, ret = -1;

	if (img_read(rc->dirfd, IMG_INVENTORY, 0, (void **)&inv, 0) < 0)
		return -1;
	if (inv->fmt_version != IMG_FMT_VERSION) {
		pr_err("Images have format version %u; this criu reads version %u",
		       inv->fmt_version, IMG_FMT_VERSION);
		goto out;
	}
	/* the page stores are checked while the rest is loaded and forked */
	if (img_verify_start(rc->dirfd, inv))
		goto out;
	if (img_read(rc->dirfd, IMG_PSTREE, 0, (void **)&pt, 0) < 0)
		goto out;
	*pe = pt;
	if (tree_check("Image pstree.img", pt, inv->root_pid))
		goto out;
	tree->nodes = xzalloc(tree_plan_cap(pt->n_tasks) * sizeof(*tree->nodes));
	if (!tree->nodes)
		goto out;
	for (i = 0; i < (int)pt->n_tasks; i++) {
		tree->nodes[i].pt = pt->tasks[i];
		tree->nodes[i].t.pid = pt->tasks[i]->pid;
		tree->nr = i + 1;
		if (link_node(tree, i))
			goto out;
	}
	ret = plan_tree(tree);
out:
	img_free(IMG_INVENTORY, inv);
	return ret;
}

static int range_cmp(const void *a, const void *b)
{
	const struct rst_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A place for the trampoline that neither criu nor the task uses. */
static uint64_t pick_area(struct proc_maps *self, struct rtask *t, size_t size)
{
	struct rst_range *all;
	uint64_t from = AREA_MIN_ADDR, found = 0;
	int i, nr = self->nr + t->nr_used;

	all = xmalloc(nr * sizeof(*all));
	if (!all)
		return 0;
	for (i = 0; i < self->nr; i++) {
		all[i].start = self->vma[i].start;
		all[i].end = self->vma[i].end;
	}
	memcpy(all + self->nr, t->used, t->nr_used * sizeof(*all));
	qsort(all, nr, sizeof(*all), range_cmp);
	for (i = 0; i < nr && !found; i++) {
		if (all[i].start >= from + size + PAGE_SIZE)
			found = from;
		from = max(from, all[i].end + PAGE_SIZE);
	}
	free(all);
	return found;
}

static int load_tree(struct rst_ctx *rc, struct rtree *tree)
{
	int i, j;

	for (i = 0; i < PART_NR; i++)
		if (parts[i]->load_tree && parts[i]->load_tree(rc))
			return -1;
	for (i = 0; i < tree->nr; i++) {
		if (!rnode_live(&tree->nodes[i]))
			continue;
		for (j = 0; j < PART_NR; j++)
			if (parts[j]->load && parts[j]->load(rc, &tree->nodes[i].t))
				return -1;
	}
	return 0;
}

/*
 * The batches are as big as the loads say the work is: the leader's holds
 * the task's steps and its own thread's, a clone and a little data per
 * other thread, and the closes of criu's fds (one per run of them between
 * the task's fds); each other thread's its own steps.
 */
static int size_task(struct rst_ctx *rc, struct rnode *n, struct proc_maps *self)
{
	struct rtask *t = &n->t;
	int thr = t->nr_threads - 1;

	/* the images directory and the log: criu's in every task, besides the loads' */
	if (limit_fd_room(t->pid, t->nr_task_fds, rc->nr_inherited, t->own_fds + 2))
		return -1;
	n->main_max = 320 + t->batch_entries + 2 * thr + t->nr_task_fds + 1;
	n->main_size = batch_area_size(n->main_max, (64 << 10) + t->batch_data + 128 * thr);
	n->thread_max = THREAD_BATCH_ENTRIES + t->thread_entries;
	n->thread_size = batch_area_size(n->thread_max, THREAD_BATCH_DATA + t->thread_data);
	t->area_size = n->main_size + thr * n->thread_size + AREA_RESERVE;
	t->area = pick_area(self, t, t->area_size);
	if (!t->area) {
		pr_err("Task %d: no free place for the restore trampoline (%zu bytes)", t->pid,
		       t->area_size);
		return -1;
	}
	return 0;
}

/* MADV_COLLAPSE came with Linux 6.1 */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#define HUGE_SIZE		(2UL << 20)

/*
 * Every task starts as a copy of criu, and criu's heap holds the whole
 * tree's loaded images (some 20 KiB a task): each fork copies its page
 * table entries and each task's trampoline unmaps them again, a cost that
 * grows with the tree, per task. Collapsed into huge pages, the heap is
 * a few entries to copy and to drop, whatever its size. Where the kernel
 * can't (THP off, an old kernel, no huge page free), nothing changes but
 * the speed.
 */
static void heap_to_huge(const struct proc_maps *self)
{
	uint64_t start, end;
	int i;

	for (i = 0; i < self->nr; i++) {
		if (!self->vma[i].path || strcmp(self->vma[i].path, "[heap]"))
			continue;
		start = (self->vma[i].start + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
		end = self->vma[i].end & ~(HUGE_SIZE - 1);
		if (start >= end)
			return;
		if (madvise((void *)start, end - start, MADV_COLLAPSE))
			pr_debug("criu's heap stays in small pages: %m");
		else
			pr_debug("criu's heap: %lu MiB in huge pages", (end - start) >> 20);
		return;
	}
}

/* After the prefork: criu's memory as the tasks will inherit it. */
static int size_tree(struct rst_ctx *rc, struct rtree *tree)
{
	struct proc_maps self;
	int i, ret = 0;

	if (proc_read_maps(getpid(), 0, &self))
		return -1;
	heap_to_huge(&self);
	for (i = 0; i < tree->nr && !ret; i++)
		if (rnode_live(&tree->nodes[i]))
			ret = size_task(rc, &tree->nodes[i], &self);
	proc_maps_free(&self);
	return ret;
}

/* What the tree shares is opened by criu, above any fd of any task. */
static int prefork(struct rst_ctx *rc, struct rtree *tree)
{
	int i;

	for (i = 0; i < tree->nr; i++)
		if (rst_fds_reserve(rc, &tree->nodes[i].t))
			return -1;
	if (rst_fds_start(rc))
		return -1;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->prefork && parts[i]->prefork(rc))
			return -1;
	return 0;
}

/* Memory every new task shares with criu: its report and a ready count. */
static int share_reports(struct rtree *tree)
{
	size_t size = sizeof(int) + tree->nr * sizeof(struct child_report);
	void *p;
	int i;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		pr_perror("Can't map the shared reports");
		return -1;
	}
	tree->ready = p;
	for (i = 0; i < tree->nr; i++)
		tree->nodes[i].rep = (struct child_report *)((char *)p + sizeof(int)) + i;
	return 0;
}

/*
 * Waits until every task is ready (zombies and helpers say so just before
 * they exit); names the first that failed or died.
 */
static int wait_ready(struct rtree *tree)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	int seen, i, status, want = tree->nr;
	time_t deadline = time(NULL) + READY_TIMEOUT_S;
	struct rnode *n;

	for (;;) {
		seen = __atomic_load_n(tree->ready, __ATOMIC_ACQUIRE);
		for (i = 0; i < tree->nr; i++) {
			n = &tree->nodes[i];
			if (n->rep->state == CHILD_FAILED) {
				pr_err("%s", n->rep->error);
				return -1;
			}
		}
		if (seen >= want)
			return 0;
		if (waitpid(tree->nodes[0].t.host_pid, &status, WNOHANG | __WALL) > 0) {
			pr_err("Task %d died while preparing its restore", tree->nodes[0].t.pid);
			return -1;
		}
		for (i = 1; i < tree->nr; i++) {
			n = &tree->nodes[i];
			/* a task says who it is first of all: until then, the deadline */
			if (n->rep->state == CHILD_PREPARING &&
			    n->rep->host_pid && kill(n->rep->host_pid, 0) && errno == ESRCH &&
			    n->creator->rep->state) {
				pr_err("Task %d died while preparing its restore", n->t.pid);
				return -1;
			}
		}
		if (time(NULL) > deadline) {
			pr_err("Tasks were not ready after %d s", READY_TIMEOUT_S);
			return -1;
		}
		syscall(SYS_futex, tree->ready, FUTEX_WAIT, seen, &tick, NULL, 0);
	}
}

/* Everything is in place: let every thread of every task go, at once. */
static int let_go(struct rtree *tree)
{
	int i, j, ret = 0;
	struct rtask *t;

	for (i = 0; i < tree->nr; i++) {
		t = &tree->nodes[i].t;
		if (!rnode_live(&tree->nodes[i]))
			continue;
		for (j = 0; j < t->nr_threads; j++)
			/* a stopped task sinks back into its stop, unreported */
			if (ptrace(PTRACE_DETACH, t->host_tids[j], 0, 0)) {
				pr_perror("Task %d: can't let thread %d go", t->pid, t->tids[j]);
				ret = -1;
			}
	}
	return ret;
}

/* Relative to the work directory; never through a link planted there. */
static int write_pidfile(const struct opts *o, pid_t pid)
{
	char buf[16];
	int fd, len;

	fd = create_file_at(o->work_dirfd, o->pidfile, O_WRONLY);
	if (fd < 0) {
		pr_perror("Can't create pidfile %s", o->pidfile);
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "%d", pid);
	if (write(fd, buf, len) != len) {
		pr_perror("Can't write pidfile %s", o->pidfile);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int wait_task(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror("Can't wait for task %d", pid);
			return -1;
		}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * After a failure: nothing may stay behind, not even a zombie, and nothing
 * else may be hit: a pid we could not have may be someone else's. Only the
 * root (our child) and tasks that reported are surely ours; the others die
 * with their parent, and being our subreaped orphans, are reaped here.
 */
static void kill_tree(struct rtree *tree, int root_forked)
{
	struct rnode *n;
	int i;

	for (i = 0; i < tree->nr; i++) {
		n = &tree->nodes[i];
		/* a helper is reaped once it is done: its pid may be free again */
		if (n->helper)
			continue;
		if (i && n->rep->state != CHILD_PREPARING && n->rep->host_pid > 0)
			kill(n->rep->host_pid, SIGKILL);
		else if (!i && root_forked && n->t.host_pid > 0)
			kill(n->t.host_pid, SIGKILL);
	}
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static void free_tree(struct rst_ctx *rc, struct rtree *tree)
{
	int i, j;

	for (i = 0; i < PART_NR; i++)
		if (parts[i]->release_tree)
			parts[i]->release_tree(rc);
	rst_release(rc);
	for (i = 0; i < tree->nr; i++) {
		struct rtask *t = &tree->nodes[i].t;

		for (j = 0; j < PART_NR; j++)
			if (parts[j]->release)
				parts[j]->release(t);
		free(t->used);
		free(t->written);
		free(t->priv_fds);
		free(t->task_fds);
		free(t->tids);
		free(t->host_tids);
		free(tree->nodes[i].kids);
	}
	if (tree->ready)
		munmap(tree->ready, sizeof(int) + tree->nr * sizeof(struct child_report));
	free(tree->nodes);
	free(tree->helper_pts);
}

/*
 * Stops before anything is released: every stop first, then what the
 * parents see of them, while the batch's masks still hold (tree/stop.c). The
 * tasks involved are still held after their batches, trampoline and all.
 */
static int settle_stops(struct rst_ctx *rc, struct rtree *tree)
{
	struct rnode *p, *c;
	uint64_t insn;
	int i, j, any;

	for (i = 0; i < tree->nr; i++)
		if (rnode_live(&tree->nodes[i]) && tree->nodes[i].pt->stopped &&
		    stop_enter(&tree->nodes[i].t, tree->nodes[i].pt))
			return -1;
	for (i = 0; i < tree->nr; i++) {
		p = &tree->nodes[i];
		if (!rnode_live(p))
			continue;
		insn = trampoline_syscall(&p->t);
		for (j = 1, any = 0; j < tree->nr; j++) {
			c = &tree->nodes[j];
			if (c->parent != p || !rnode_live(c) || !c->pt->stopped)
				continue;
			any = 1;
			if (stop_collect(&p->t, &c->t, c->pt, insn))
				return -1;
		}
		/* the executor's stack, at the end of the batch area, is free now */
		if (any && stop_drop_sigchld(&p->t, p->pt, insn, p->t.area + p->main_size - 256))
			return -1;
	}
	return 0;
}

/* CRIU asks about namespaces only when the tree has some of its own. */
#define TREE_NS_FLAGS	(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | \
			 CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWCGROUP)

static int restore_tree(struct rst_ctx *rc, struct rtree *tree, int *forked)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	pid_t root;
	int i;

	root = restore_fork(rc, tree, &tree->nodes[0]);
	if (root < 0)
		return -1;
	tree->nodes[0].t.host_pid = root;
	*forked = 1;
	/* what only criu can do to the root, before it goes on */
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->forked && parts[i]->forked(rc, &tree->nodes[0].t))
			return -1;
	__atomic_store_n(&tree->nodes[0].rep->go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tree->nodes[0].rep->go, FUTEX_WAKE, 1, NULL, NULL, 0);
	if (wait_ready(tree))
		return -1;
	stats_set_time(STAT_FORKING, clock_ns(CLOCK_MONOTONIC) - t0);
	for (i = 1; i < tree->nr; i++)
		tree->nodes[i].t.host_pid = tree->nodes[i].rep->host_pid;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->ns_ready && parts[i]->ns_ready(rc, &tree->nodes[0].t))
			return -1;
	/* every namespace exists, nothing of the tree's own runs yet */
	if (((rc->root_flags | rc->joined_ns) & TREE_NS_FLAGS) &&
	    (hook_run(HOOK_SETUP_NS, root, -1) || hook_run(HOOK_POST_SETUP_NS, root, -1)))
		return -1;
	return take_over_tree(rc, tree, settle_stops);
}

/* New pty masters (--orphan-pts-master) to the RPC client, which asked for them. */
static int hand_over_ptys(pid_t root)
{
	int fd, ret = 0;

	while (!ret && (fd = pty_handed_over()) >= 0) {
		if (!hooks_wanted()) {
			pr_err("A new pty master has nobody to go to: --orphan-pts-master hands "
			       "it to an RPC client");
			ret = -1;
		} else {
			ret = hook_run(HOOK_ORPHAN_PTS_MASTER, root, fd);
		}
		close(fd);
	}
	return ret;
}

/* What the tree is told between its restore and its first instruction. */
static int before_resume(struct rst_ctx *rc, struct rtask *t)
{
	pid_t root = t->host_pid;
	int i;

	if (hand_over_ptys(root) || hook_run(HOOK_POST_RESTORE, root, -1))
		return -1;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->resume && parts[i]->resume(rc, t))
			return -1;
	if (((rc->root_flags | rc->joined_ns) & CLONE_NEWNET) &&
	    hook_run(HOOK_NETWORK_UNLOCK, root, -1))
		return -1;
	return hook_run(HOOK_PRE_RESUME, root, -1);
}

int cr_restore(const struct opts *o)
{
	struct rst_ctx rc = { .opts = o, .proc_fd = -1 };
	struct rtree tree = { 0 };
	PstreeEntry *pe = NULL;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	pid_t root;
	int i, ret = -1, forked = 0, released = 0;

	rc.dirfd = fcntl(o->images_dirfd, F_DUPFD_CLOEXEC, 0);
	if (rc.dirfd < 0) {
		pr_perror("Can't use the images directory %s", o->images_dir);
		return -1;
	}
	stats_reset();
	hooks_set_images_dir(o->images_dir);
	if (hook_run(HOOK_PRE_RESTORE, 0, -1))
		goto out;
	/* orphans of a failed restore come to us, to be reaped */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	tree.criu = getpid();
	/* rst_sibling: the root is born our parent's child (RPC clients adopt it) */
	if (o->restore_sibling)
		rc.root_flags |= CLONE_PARENT;
	if (read_tree(&rc, &tree, &pe) || load_tree(&rc, &tree) || share_reports(&tree) ||
	    prefork(&rc, &tree) || size_tree(&rc, &tree))
		goto out;
	if (restore_tree(&rc, &tree, &forked))
		goto out;
	root = tree.nodes[0].t.host_pid;
	if (img_verify_wait())
		goto out;
	if (o->pidfile && write_pidfile(o, root))
		goto out;
	if (before_resume(&rc, &tree.nodes[0].t) || let_go(&tree))
		goto out;
	released = rc.released = 1;
	pr_info("Restored %zu task(s)", pe->n_tasks);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	/* the tree runs: a "no" can't undo that any more */
	if (hook_run(HOOK_POST_RESUME, root, -1))
		pr_warn("The tree runs although post-resume said no");
	stats_set_time(STAT_RESTORE, clock_ns(CLOCK_MONOTONIC) - t0);
	stats_write(o->work_dirfd, 1, o->display_stats);
	/* after the figures: what runs here delays criu's exit, not the tree */
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->resumed)
			parts[i]->resumed(&rc, &tree.nodes[0].t);
	ret = o->restore_detached ? 0 : wait_task(root);
out:
	img_verify_stop();
	if (!released && tree.ready)
		kill_tree(&tree, forked);
	rc.failed = !released;
	free_tree(&rc, &tree);
	img_free(IMG_PSTREE, pe);
	close(rc.dirfd);
	return ret;
}
