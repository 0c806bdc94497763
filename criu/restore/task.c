// SPDX-License-Identifier: GPL-2.0
/*
 * The in-task half of restore. Every new task starts as a copy of criu,
 * with its old pid. It first creates its own children (so they are its
 * children), sets up what ordinary code can set up (session, files, cwd,
 * limits...), then writes into a trampoline area the batch of system calls
 * that will turn it into the dumped task, says it is ready and waits for
 * criu to take it over with ptrace.
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/part.h"
#include "restore/task.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/*
 * CLONE_PTRACE: each new thread is traced from its birth and sits in its
 * first stop until criu gives it its own batch, while the leader's batch
 * goes on without a clone event stop per thread (PTRACE_O_TRACECLONE).
 */
#define THREAD_FLAGS	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
			 CLONE_THREAD | CLONE_SYSVSEM | CLONE_PTRACE)

static void report(struct rtree *tree, struct rnode *n, int state)
{
	const char *e = log_first_error();

	if (state == CHILD_FAILED)
		snprintf(n->rep->error, sizeof(n->rep->error), "%s",
			 e ? e : "unknown error");
	__atomic_store_n(&n->rep->state, state, __ATOMIC_RELEASE);
	__atomic_add_fetch(tree->ready, 1, __ATOMIC_ACQ_REL);
	syscall(SYS_futex, tree->ready, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void __attribute__((noreturn)) child_fail(struct rtree *tree, struct rnode *n)
{
	report(tree, n, CHILD_FAILED);
	_exit(1);
}

/* A zombie is a child that exits the way it once did, once it has forked what it must. */
static void __attribute__((noreturn)) become_zombie(struct rnode *n)
{
	int status = n->pt->exit_code, sig = WTERMSIG(status);
	struct rlimit no_core = { 0, 0 };
	sigset_t all;

	if (n->pt->comm)
		prctl(PR_SET_NAME, n->pt->comm, 0, 0, 0);
	if (WIFSIGNALED(status) && sig > 0 && sig < 65) {
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		syscall(SYS_tgkill, getpid(), getpid(), sig);
	}
	_exit(WEXITSTATUS(status));
}

/* A zombie's or a helper's child may be forked by a sibling: until then, ECHILD. */
static int wait_gone(struct rnode *k, int reap)
{
	siginfo_t si;

	for (;;) {
		si.si_pid = 0;
		if (!waitid(P_PID, k->t.pid, &si, WEXITED | __WALL | (reap ? 0 : WNOWAIT)))
			break;
		if (errno == ECHILD)
			usleep(100);
		else if (errno != EINTR)
			return -1;
	}
	if (reap && (si.si_code != CLD_EXITED || si.si_status)) {
		pr_err("Helper %d of task %d failed", k->t.pid, k->parent->t.pid);
		return -1;
	}
	return 0;
}

/*
 * Our zombies must be zombies, and our helpers gone, before criu takes us
 * over; the SIGCHLDs they sent are not the task's.
 */
static int settle_kids(struct rtree *tree, struct rnode *n)
{
	struct timespec zero = { 0, 0 };
	int i, any = 0;
	sigset_t chld;

	for (i = 1; i < tree->nr; i++) {
		struct rnode *k = &tree->nodes[i];

		if (k->parent != n || rnode_live(k))
			continue;
		if (wait_gone(k, k->helper)) {
			pr_perror("Task %d: can't wait for its child %d", n->t.pid, k->t.pid);
			return -1;
		}
		any = 1;
	}
	if (!any)
		return 0;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (sigtimedwait(&chld, NULL, &zero) > 0)
		;
	return 0;
}

/*
 * Session as dumped, and the group if the task leads one; members join
 * their group in the batch, once every task, leaders included, exists.
 */
static int set_session(struct rnode *n)
{
	pid_t pid = n->t.pid;

	if (n->pt->sid == (uint32_t)pid && setsid() < 0) {
		pr_perror("Task %d: can't create its session", pid);
		return -1;
	}
	if (n->pt->pgid == (uint32_t)pid && n->pt->sid != (uint32_t)pid && setpgid(0, 0)) {
		pr_perror("Task %d: can't create its process group", pid);
		return -1;
	}
	if (n->parent && getsid(0) != (pid_t)n->pt->sid) {
		pr_err("Task %d: can't be put back into session %u (it is in %d)",
		       pid, n->pt->sid, getsid(0));
		return -1;
	}
	return 0;
}

/*
 * A child that stayed in our old session (neither ours nor its own) is
 * created before we make a session of our own; the others after, so each
 * inherits the right one. Our kids here are all we fork (see tree/plan.c):
 * our children, and siblings of ours that must be born in our session.
 */
static int fork_kids(struct rst_ctx *rc, struct rtree *tree, struct rnode *n, int before)
{
	struct rnode *k;
	int i, old;

	for (i = 0; i < n->nr_kids; i++) {
		k = n->kids[i];
		old = k->pt->sid != n->pt->sid && k->pt->sid != (uint32_t)k->t.pid;
		if (before != old)
			continue;
		if (restore_fork(rc, tree, k) < 0)
			return -1;
	}
	return 0;
}

static int in_tree(struct rtree *tree, uint32_t pid);

/* Joins the dumped process group, unless it leads it or it is criu's (--shell-job). */
static int queue_pgid(struct rtree *tree, struct rnode *n, struct batch *b)
{
	uint32_t pgid = n->pt->pgid;

	if (pgid == (uint32_t)n->t.pid || (n == &tree->nodes[0] && !in_tree(tree, pgid)))
		return 0;
	return BATCH(b, "setpgid into its process group", __NR_setpgid, 0, pgid) < 0 ? -1 : 0;
}

static int queue_threads(struct rnode *n, struct batch *b)
{
	struct clone_args args = { .flags = THREAD_FLAGS, .set_tid_size = 1 };
	uint64_t tid, a;
	int i;

	for (i = 1; i < n->t.nr_threads; i++) {
		tid = batch_put(b, &n->t.tids[i], sizeof(pid_t));
		args.set_tid = tid;
		a = batch_put(b, &args, sizeof(args));
		if (!tid || !a || BATCH(b, "clone3 of a thread", __NR_clone3, a, sizeof(args)) < 0)
			return -1;
	}
	return 0;
}

static int in_tree(struct rtree *tree, uint32_t pid)
{
	int i;

	for (i = 0; i < tree->nr; i++)
		if ((uint32_t)tree->nodes[i].t.pid == pid)
			return 1;
	return 0;
}

static int build_batches(struct rst_ctx *rc, struct rtree *tree, struct rnode *n)
{
	struct rtask *t = &n->t;
	struct batch b;
	void *area;
	int i, th;

	area = mmap((void *)t->area, t->area_size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (area != (void *)t->area) {
		pr_perror("Task %d: can't map the trampoline at %#lx", t->pid, t->area);
		return -1;
	}
	if (batch_init(&b, area, t->area, n->main_size, n->main_max))
		return -1;
	/* entry 0: criu's inherited rseq registration, filled in by criu */
	if (BATCH(&b, "rseq unregistration", __NR_getpid) < 0 ||
	    BATCH(&b, "prctl(PR_SET_PDEATHSIG, 0)", __NR_prctl, PR_SET_PDEATHSIG, 0) < 0 ||
	    queue_pgid(tree, n, &b))
		return -1;
	for (i = 0; i < PART_NR; i++) {
		if (parts[i]->batch && parts[i]->batch(rc, t, &b))
			return -1;
		/*
		 * threads come once memory is back and the leader has its
		 * security label, which they take (lsm.c), before timers may
		 * aim at them
		 */
		if (i == PART_LSM && queue_threads(n, &b))
			return -1;
	}
	if (rst_fds_queue_closes(t, &b))
		return -1;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->thread_batch && parts[i]->thread_batch(rc, t, 0, &b))
			return -1;
	for (th = 1; th < t->nr_threads; th++) {
		uint64_t at = thread_batch_addr(n, th);

		if (batch_init(&b, (void *)at, at, n->thread_size, n->thread_max))
			return -1;
		for (i = 0; i < PART_NR; i++)
			if (parts[i]->thread_batch && parts[i]->thread_batch(rc, t, th, &b))
				return -1;
	}
	return 0;
}

/*
 * Our pid as criu sees it: criu's /proc names us in criu's pid namespace
 * even when we are in one of the tree's own (whose /proc is the tree's
 * once its root entered its mount namespace).
 */
static pid_t host_pid(struct rst_ctx *rc)
{
	char buf[32];
	ssize_t len = rc->proc_fd >= 0 ? readlinkat(rc->proc_fd, "self", buf, sizeof(buf) - 1) :
		      readlink("/proc/self", buf, sizeof(buf) - 1);

	if (len <= 0)
		return getpid();
	buf[len] = '\0';
	return atoi(buf);
}

/* Our parent's pid as @parent is given: the root of a pid namespace asks /proc. */
static pid_t parent_pid(pid_t self)
{
	struct proc_stat st;
	pid_t ppid = getppid();

	if (ppid || proc_read_stat(self, 0, &st))
		return ppid;
	return st.ppid;
}

static void __attribute__((noreturn)) child_main(struct rst_ctx *rc, struct rtree *tree,
						 struct rnode *n, pid_t parent)
{
	struct rtask *t = &n->t;
	uint64_t all;
	int i, never = 0;

	t->host_pid = host_pid(rc);
	__atomic_store_n(&n->rep->host_pid, t->host_pid, __ATOMIC_RELEASE);
	/* until criu traces us (and EXITKILL takes over), die with our parent */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || parent_pid(t->host_pid) != parent)
		_exit(3);
	if (!rnode_live(n)) {
		if (fork_kids(rc, tree, n, 1) || set_session(n) || fork_kids(rc, tree, n, 0))
			child_fail(tree, n);
		report(tree, n, CHILD_READY);
		if (n->helper)
			_exit(0);
		become_zombie(n);
	}
	/* the root waits for criu's forked hooks (restore.c) */
	while (n == &tree->nodes[0] && !__atomic_load_n(&n->rep->go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &n->rep->go, FUTEX_WAIT, 0, NULL, NULL, 0);
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->early && parts[i]->early(rc, t))
			child_fail(tree, n);
	if (fork_kids(rc, tree, n, 1) || set_session(n) || fork_kids(rc, tree, n, 0) ||
	    settle_kids(tree, n))
		child_fail(tree, n);

	/* criu's own fds move out of the task's way; everything else goes */
	if (rst_fds_enter(rc, t))
		child_fail(tree, n);
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->child && parts[i]->child(rc, t))
			child_fail(tree, n);
	if (build_batches(rc, tree, n))
		child_fail(tree, n);
	pr_debug("Task %d: ready", t->pid);
	/*
	 * Nothing of the task's may run before it is whole, but SIGTRAP stays
	 * open: the executor's int3 would otherwise reset its handler.
	 */
	/* the raw call: glibc's would leave its own signals 32 and 33 open */
	all = ~(1ULL << (SIGTRAP - 1));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	report(tree, n, CHILD_READY);
	for (;;)	/* criu seizes and interrupts us here */
		syscall(SYS_futex, &never, FUTEX_WAIT, 0, NULL, NULL, 0);
}

pid_t restore_fork(struct rst_ctx *rc, struct rtree *tree, struct rnode *n)
{
	int root = n == &tree->nodes[0];
	/* the root too, with rst_sibling: criu's parent adopts it */
	int adopt = root ? !!(rc->root_flags & CLONE_PARENT) : n->creator && n->creator != n->parent;
	pid_t want = n->t.pid, self = adopt ? getppid() : getpid();
	struct clone_args args = {
		/* a sibling forks it as our parent's child, in its session */
		.flags = root ? rc->root_flags : adopt ? CLONE_PARENT : 0,
		/* with CLONE_PARENT, the kernel takes the creator's exit signal */
		.exit_signal = adopt ? 0 : SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&want,
		.set_tid_size = 1,
	};
	long pid;

	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		child_main(rc, tree, n, self);
	if (pid < 0 && n->helper) {
		/* the id is free only while nothing outside the tree took it */
		pr_perror("Can't recreate %s %d (its leader is gone) with pid %d",
			  n->pt->sid == n->pt->pid ? "session" : "process group", n->t.pid,
			  n->t.pid);
		return -1;
	}
	if (pid < 0) {
		if (errno == EEXIST)
			pr_err("Task %d: can't restore, pid %d is in use", n->t.pid, n->t.pid);
		else
			pr_perror("Task %d: can't create it with its pid", n->t.pid);
		return -1;
	}
	return pid;
}

uint64_t thread_batch_addr(struct rnode *n, int th)
{
	return n->t.area + n->main_size + (uint64_t)(th - 1) * n->thread_size;
}
