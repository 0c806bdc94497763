// SPDX-License-Identifier: GPL-2.0
/*
 * Restore, criu's side: take the ready tasks over and run their batches.
 *
 * A batch spends most of its time in the kernel, inside the task (unmap
 * criu, map and fill memory, clone threads). criu itself only starts it
 * and waits for its int3. So several tasks run their batches at once (up
 * to one per CPU), and the threads of a task run theirs all together:
 * criu seizes and starts the next task while others run, and picks up
 * whichever stops first with one waitpid(-1). Everything criu does from
 * outside after a batch (the trampoline's removal, registers, the final
 * hooks) is short and done in place.
 *
 * Tasks start in tree order. A task whose batch must see every earlier
 * task's done (t->ordered: a System V segment it removes once the others
 * attached it) starts only when nothing else runs. A stopped task and the
 * parent of one are held after their batches, trampoline and all, until
 * the stops are made (tree/stop.c); then they are finished the same way. All
 * of this is single threaded: ptrace requests come from the thread that
 * seized.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/part.h"
#include "restore/takeover.h"
#include "restore/task.h"
#include "task/ptrace.h"

#define RSEQ_FLAG_UNREGISTER	1
#define MAX_IN_FLIGHT		16

extern const char executor_code_start[], executor_syscall_insn[];

enum {
	TK_IDLE,
	TK_SEIZING,		/* seized and interrupted, its stop not seen yet */
	TK_MAIN,		/* the leader runs the task's batch */
	TK_THREADS,		/* the other threads run theirs */
	TK_HELD,		/* batches done; waits for the stops to be made */
	TK_UNMAP,		/* the leader removes the trampoline */
	TK_DONE,
};

/* One batch run by one thread. */
struct job {
	pid_t tid;
	uint64_t at;		/* the batch's area in the task */
	size_t size;
	void *buf;		/* its header, table and descriptions, read back */
	struct batch b;
	int running;
};

/* criu's side of one task being taken over. */
struct tk {
	struct rnode *n;
	int state;
	int pending;		/* thread batches still running */
	int scan;		/* threads below it have run their batches */
	struct job *jobs;	/* [0] the leader's, [i] thread i's */
};

/* Stops of threads the batches cloned, seen before criu looked for them. */
struct stash {
	struct {
		pid_t tid;
		int status;
	} *s;
	int nr;
};

struct takeover {
	struct rst_ctx *rc;
	struct rtree *tree;
	struct tk *tk;		/* per node of the tree */
	int next;		/* the next node to start */
	int running;
	int max_running;
	struct stash stash;
};

static int stash_put(struct stash *st, pid_t tid, int status)
{
	if (xgrow(st->s, st->nr))
		return -1;
	st->s[st->nr].tid = tid;
	st->s[st->nr++].status = status;
	return 0;
}

static int stash_take(struct stash *st, pid_t tid, int *status)
{
	int i;

	for (i = 0; i < st->nr; i++)
		if (st->s[i].tid == tid) {
			*status = st->s[i].status;
			st->s[i] = st->s[--st->nr];
			return 1;
		}
	return 0;
}

static int seize_start(pid_t pid)
{
	/* with seccomp suspended: the filters go in with the batch (parts/seccomp.c) */
	if (ptrace_seize_opts(pid, PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) {
		pr_perror("Task %d: can't seize it", pid);
		return -1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
		pr_perror("Task %d: can't interrupt it", pid);
		return -1;
	}
	return 0;
}

static int unregister_criu_rseq(struct rtask *t)
{
	struct ptrace_rseq_conf c;
	struct sc_entry e = { .nr = __NR_rseq };
	struct iovec l = { &e, sizeof(e) }, r;

	if (ptrace_get_rseq(t->host_pid, &c))
		return c.rseq_abi_pointer ? -1 : 0;
	if (!c.rseq_abi_pointer)
		return 0;
	e.args[0] = c.rseq_abi_pointer;
	e.args[1] = c.rseq_abi_size;
	e.args[2] = RSEQ_FLAG_UNREGISTER;
	e.args[3] = c.signature;
	r.iov_base = (void *)(t->area + PAGE_SIZE);	/* entry 0 */
	r.iov_len = sizeof(e);
	if (process_vm_writev(t->host_pid, &l, 1, &r, 1, 0) != sizeof(e)) {
		pr_perror("Task %d: can't write its trampoline", t->pid);
		return -1;
	}
	return 0;
}

static int read_area(pid_t pid, void *buf, uint64_t at, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)at, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * Starts the batch the task wrote at j->at in thread j->tid, stopped: only
 * its header is read, the rest is needed only to name a failed step.
 */
static int job_start(struct rtask *t, struct job *j)
{
	struct user_regs_struct regs;

	j->buf = xmalloc(j->size);
	if (!j->buf)
		return -1;
	if (read_area(t->host_pid, j->buf, j->at, batch_header_size()) ||
	    batch_attach(&j->b, j->buf, j->at) || ptrace_get_regs(j->tid, &regs)) {
		pr_err("Task %d: can't read the batch of thread %d", t->pid, j->tid);
		return -1;
	}
	pr_debug("Task %d: thread %d runs a batch of %d", t->pid, j->tid, j->b.nr);
	/* the executor's calling convention: see executor.S */
	regs.rip = batch_code_remote(&j->b);
	regs.rdi = batch_entries_remote(&j->b);
	regs.rsi = j->b.nr;
	regs.rsp = j->at + j->size - 64;
	regs.orig_rax = -1;
	if (ptrace_set_regs(j->tid, &regs))
		return -1;
	if (ptrace(PTRACE_CONT, j->tid, 0, 0)) {
		pr_perror("Task %d: can't run the batch of thread %d", t->pid, j->tid);
		return -1;
	}
	j->running = 1;
	return 0;
}

/*
 * A stop of a thread running its batch: a clone event goes on, the
 * executor's int3 ends the batch (1), anything else is an error.
 */
static int job_stopped(struct rtask *t, struct job *j, int status)
{
	struct user_regs_struct regs;
	int done;

	if (!WIFSTOPPED(status)) {
		pr_err("Task %d: thread %d died while running its batch (status %#x)",
		       t->pid, j->tid, status);
		return -1;
	}
	if (status >> 16) {
		if (ptrace(PTRACE_CONT, j->tid, 0, 0)) {
			pr_perror("Task %d: can't run the batch of thread %d", t->pid, j->tid);
			return -1;
		}
		return 0;
	}
	j->running = 0;
	if (WSTOPSIG(status) != SIGTRAP) {
		pr_err("Task %d: executor stopped by signal %d", t->pid, WSTOPSIG(status));
		if (!ptrace_get_regs(j->tid, &regs))
			pr_err("Task %d: at ip %#llx", t->pid, regs.rip);
		return -1;
	}
	if (ptrace_get_regs(j->tid, &regs))
		return -1;
	done = j->b.nr - regs.r13;
	if (done == j->b.nr)
		return 1;
	if (done < 0 || done > j->b.nr || batch_table_size(j->b.max) > j->size ||
	    read_area(t->host_pid, j->buf, j->at, batch_table_size(j->b.max))) {
		pr_perror("Task %d: step %d of its restore failed", t->pid, done);
		return -1;
	}
	errno = -batch_entry(&j->b, done)->ret;
	pr_perror("Task %d: %s (step %d of %d, thread %d) failed", t->pid,
		  batch_desc(&j->b, done), done, j->b.nr, j->tid);
	return -1;
}

/*
 * The tids of the threads the batch cloned, as criu sees them: in a pid
 * namespace of the tree's own, each one's NSpid says which it is.
 */
static int find_host_tids(struct rst_ctx *rc, struct rtask *t)
{
	struct proc_status st;
	pid_t *host;
	int i, j, nr;

	t->host_tids = xzalloc(t->nr_threads * sizeof(pid_t));
	if (!t->host_tids)
		return -1;
	t->host_tids[0] = t->host_pid;
	if (!(rc->root_flags & CLONE_NEWPID)) {
		memcpy(t->host_tids, t->tids, t->nr_threads * sizeof(pid_t));
		return 0;
	}
	if (t->nr_threads == 1)
		return 0;
	nr = proc_list_threads(t->host_pid, &host);
	if (nr < 0)
		return -1;
	for (i = 0; i < nr; i++) {
		if (host[i] == t->host_pid || proc_read_status(host[i], &st))
			continue;
		for (j = 1; j < t->nr_threads; j++)
			if (t->tids[j] == st.ns_pid)
				t->host_tids[j] = host[i];
		proc_status_free(&st);
	}
	free(host);
	for (j = 1; j < t->nr_threads; j++)
		if (!t->host_tids[j]) {
			pr_err("Task %d: thread %d is not there after its clone", t->pid,
			       t->tids[j]);
			return -1;
		}
	return 0;
}

/* A thread the batch cloned sits in its first stop; take it from there. */
static int wait_thread(struct takeover *to, pid_t pid, pid_t tid)
{
	int status;

	if (!stash_take(&to->stash, tid, &status) && ptrace_wait(tid, &status))
		return -1;
	if (!WIFSTOPPED(status) || status >> 16 != PTRACE_EVENT_STOP) {
		pr_err("Task %d: new thread %d stopped by signal %d", pid, tid,
		       WSTOPSIG(status));
		return -1;
	}
	return 0;
}

/* The leader's batch is done: every other thread runs its own, at once. */
static int start_threads(struct takeover *to, struct tk *k)
{
	struct rnode *n = k->n;
	struct rtask *t = &n->t;
	int i;

	if (find_host_tids(to->rc, t))
		return -1;
	for (i = 1; i < t->nr_threads; i++) {
		k->jobs[i].tid = t->host_tids[i];
		k->jobs[i].at = thread_batch_addr(n, i);
		k->jobs[i].size = n->thread_size;
		if (wait_thread(to, t->pid, t->host_tids[i]) || job_start(t, &k->jobs[i]))
			return -1;
		k->pending++;
	}
	return 0;
}

uint64_t trampoline_syscall(struct rtask *t)
{
	return t->area + (executor_syscall_insn - executor_code_start);
}

/*
 * Every batch of the task ran: the leader removes the trampoline with the
 * executor's own syscall instruction, stepped over (one stop, at the
 * syscall's exit: nothing runs after it).
 */
static int unmap_start(struct tk *k)
{
	struct rtask *t = &k->n->t;
	struct user_regs_struct regs;

	if (ptrace_get_regs(t->host_pid, &regs))
		return -1;
	regs.rip = trampoline_syscall(t);
	regs.rax = __NR_munmap;
	regs.orig_rax = -1;	/* no syscall restart on the way out */
	regs.rdi = t->area;
	regs.rsi = t->area_size;
	if (ptrace_set_regs(t->host_pid, &regs))
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, t->host_pid, 0, 0)) {
		pr_perror("Task %d: can't unmap the trampoline", t->pid);
		return -1;
	}
	k->state = TK_UNMAP;
	return 0;
}

/* The trampoline is gone: registers and the rest come in from outside. */
static int finals(struct takeover *to, struct tk *k)
{
	struct rtask *t = &k->n->t;
	int i;

	for (i = 0; i < PART_NR; i++)
		if (parts[i]->final && parts[i]->final(to->rc, t))
			return -1;
	pr_debug("Task %d: restored", t->pid);
	k->state = TK_DONE;
	return 0;
}

static int finish(struct takeover *to, struct tk *k, int status)
{
	struct rtask *t = &k->n->t;
	struct user_regs_struct regs;

	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP || status >> 16) {
		pr_err("Task %d: stopped or ended (status %#x) while its trampoline was removed",
		       t->pid, status);
		return -1;
	}
	if (ptrace_get_regs(t->host_pid, &regs))
		return -1;
	if (regs.rax) {
		errno = -regs.rax;
		pr_perror("Task %d: can't unmap the trampoline", t->pid);
		return -1;
	}
	to->running--;
	return finals(to, k);
}

static int start_task(struct takeover *to, struct tk *k)
{
	struct rnode *n = k->n;

	k->jobs = xzalloc(n->t.nr_threads * sizeof(*k->jobs));
	if (!k->jobs || seize_start(n->t.host_pid))
		return -1;
	k->state = TK_SEIZING;
	to->running++;
	return 0;
}

/* Seized and in its interrupt stop: its batch goes. */
static int seized(struct tk *k, int status)
{
	struct rnode *n = k->n;
	struct rtask *t = &n->t;

	if (!WIFSTOPPED(status)) {
		pr_err("Task %d died while criu took it over", t->pid);
		return -1;
	}
	if (status >> 16 != PTRACE_EVENT_STOP) {
		pr_err("Task %d: stopped by signal %d instead of our interrupt", t->pid,
		       WSTOPSIG(status));
		return -1;
	}
	k->jobs[0].tid = t->host_pid;
	k->jobs[0].at = t->area;
	k->jobs[0].size = n->main_size;
	if (unregister_criu_rseq(t) || job_start(t, &k->jobs[0]))
		return -1;
	k->state = TK_MAIN;
	return 0;
}

/* A stopped task, or the parent of one: tree/stop.c still needs its trampoline. */
static int held(struct rtree *tree, struct rnode *n)
{
	int i;

	if (n->pt->stopped)
		return 1;
	for (i = 1; i < tree->nr; i++)
		if (tree->nodes[i].parent == n && rnode_live(&tree->nodes[i]) &&
		    tree->nodes[i].pt->stopped)
			return 1;
	return 0;
}

static int task_event(struct takeover *to, struct tk *k, struct job *j, int status)
{
	int ret;

	if (k->state == TK_SEIZING)
		return seized(k, status);
	if (k->state == TK_UNMAP)
		return finish(to, k, status);
	ret = job_stopped(&k->n->t, j, status);
	if (ret <= 0)
		return ret;
	if (k->state == TK_MAIN) {
		k->state = TK_THREADS;
		if (start_threads(to, k))
			return -1;
	} else {
		k->pending--;
	}
	if (k->pending)
		return 0;
	if (!held(to->tree, k->n))
		return unmap_start(k);
	k->state = TK_HELD;
	to->running--;
	return 0;
}

/* Whose stop it is: a task being seized or running a batch, or a new thread's. */
static struct tk *find_stopped(struct takeover *to, pid_t pid, struct job **job)
{
	struct tk *k;
	int i, th;

	for (i = 0; i < to->tree->nr; i++) {
		k = &to->tk[i];
		if ((k->state == TK_SEIZING || k->state == TK_UNMAP) && k->n->t.host_pid == pid)
			return k;
		if (k->state != TK_MAIN && k->state != TK_THREADS)
			continue;
		for (th = 0; th < k->n->t.nr_threads; th++)
			if (k->jobs[th].running && k->jobs[th].tid == pid) {
				*job = &k->jobs[th];
				return k;
			}
	}
	return NULL;
}

static int start_more(struct takeover *to)
{
	struct tk *k;

	while (to->running < to->max_running && to->next < to->tree->nr) {
		k = &to->tk[to->next];
		if (k->state == TK_DONE) {
			to->next++;
			continue;
		}
		/* it must find every earlier batch done */
		if (k->n->t.ordered && to->running)
			break;
		if (start_task(to, k))
			return -1;
		to->next++;
		if (k->n->t.ordered)
			break;
	}
	return 0;
}

/*
 * Where the next stop comes from when only one task is in flight: its
 * task (*@k) and thread (*@j, NULL for the leader outside a batch); -1:
 * from anywhere. waitpid(-1) looks at every thread criu traces, and a
 * task of 10,000 threads has 20,000 stops to report (their first, their
 * batch's end): asked for one by one, each costs a lookup, not a walk.
 */
static pid_t next_stop(struct takeover *to, struct tk **k, struct job **j)
{
	struct tk *c;
	int i;

	*k = NULL;
	*j = NULL;
	if (to->running != 1)
		return -1;
	for (i = 0; i < to->tree->nr; i++) {
		c = &to->tk[i];
		if (c->state == TK_SEIZING || c->state == TK_UNMAP) {
			*k = c;
			return c->n->t.host_pid;
		}
		if (c->state == TK_MAIN)
			*j = &c->jobs[0];
		else if (c->state == TK_THREADS) {
			/* one by one, in order: the others' stops wait for their turn */
			while (c->scan < c->n->t.nr_threads && !c->jobs[c->scan].running)
				c->scan++;
			if (c->scan < c->n->t.nr_threads)
				*j = &c->jobs[c->scan];
		}
		if (*j) {
			*k = c;
			return (*j)->tid;
		}
	}
	return -1;
}

static int wait_any(pid_t want, pid_t *pid, int *status)
{
	do {
		*pid = waitpid(want, status, __WALL);
	} while (*pid < 0 && errno == EINTR);
	if (*pid < 0) {
		pr_perror("Can't wait for the tasks being restored");
		return -1;
	}
	return 0;
}

static int run_takeover(struct takeover *to)
{
	pid_t pid, want;
	struct job *j;
	struct tk *k;
	int status;

	for (;;) {
		if (start_more(to))
			return -1;
		if (!to->running)
			return 0;
		want = next_stop(to, &k, &j);
		if (wait_any(want, &pid, &status))
			return -1;
		if (want < 0)
			k = find_stopped(to, pid, &j);
		if (k) {
			if (task_event(to, k, j, status))
				return -1;
			continue;
		}
		/* a thread the batch just cloned: its first stop, for later */
		if (!WIFSTOPPED(status)) {
			pr_err("Task or thread %d died while the tree was restored", pid);
			return -1;
		}
		if (stash_put(&to->stash, pid, status))
			return -1;
	}
}

/*
 * Tasks taken over at once: two per CPU criu may run on, as criu itself
 * waits in short synchronous steps (a seize, the trampoline's removal)
 * while the others' batches run (measured: 1 -> 2 -> 4 in flight on two
 * CPUs, 100 tasks: 82 -> 67 -> 62 ms).
 */
static int in_flight(void)
{
	cpu_set_t set;
	int nr;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 2;
	nr = 2 * CPU_COUNT(&set);
	return nr < 2 ? 2 : nr > MAX_IN_FLIGHT ? MAX_IN_FLIGHT : nr;
}

/*
 * The held tasks, once their stops are made: trampoline, final hooks. A
 * stopped one traps for its group stop again when resumed, so the
 * trampoline goes by remote_syscall(), which knows (a few tasks, in turn).
 */
static int finish_held(struct takeover *to)
{
	struct user_regs_struct base;
	struct rtask *t;
	long ret = 0;
	int i;

	for (i = 0; i < to->tree->nr; i++) {
		if (to->tk[i].state != TK_HELD)
			continue;
		t = &to->tk[i].n->t;
		if (ptrace_get_regs(t->host_pid, &base) ||
		    remote_syscall(t->host_pid, &base, trampoline_syscall(t), &ret, __NR_munmap,
				   t->area, t->area_size, 0, 0, 0, 0) || ret) {
			pr_err("Task %d: can't unmap the trampoline (%ld)", t->pid, ret);
			return -1;
		}
		if (finals(to, &to->tk[i]))
			return -1;
	}
	return 0;
}

int take_over_tree(struct rst_ctx *rc, struct rtree *tree,
		   int (*stops)(struct rst_ctx *rc, struct rtree *tree))
{
	struct takeover to = { .rc = rc, .tree = tree };
	int i, th, ret;

	to.tk = xzalloc(tree->nr * sizeof(*to.tk));
	if (!to.tk)
		return -1;
	to.max_running = in_flight();
	for (i = 0; i < tree->nr; i++) {
		to.tk[i].n = &tree->nodes[i];
		if (!rnode_live(&tree->nodes[i]))
			to.tk[i].state = TK_DONE;
	}
	ret = run_takeover(&to);
	if (!ret)
		ret = stops(rc, tree);
	if (!ret)
		ret = finish_held(&to);
	for (i = 0; i < tree->nr; i++) {
		for (th = 0; to.tk[i].jobs && th < tree->nodes[i].t.nr_threads; th++)
			free(to.tk[i].jobs[th].buf);
		free(to.tk[i].jobs);
	}
	free(to.stash.s);
	free(to.tk);
	return ret;
}
