/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A process tree described by a table, for the tree_*.c tests.
 *
 * Each node names its parent, whether it was forked before its parent made
 * a session of its own, whether it makes a session, which process group it
 * makes or joins (any node's of the same session, created before or after
 * it), how many extra threads it runs, and whether it is a zombie (with an
 * exit code or a killing signal). Every task sets its name (comm) to the
 * node's name.
 *
 * Setting up uses a shared page (the pids, who has made its group) and a
 * pipe (one byte per task once it is set up); both are gone from every
 * task before the root calls test_ready(), so the dumped tree shares
 * nothing but the log file.
 *
 * After SIGTERM (the root forwards it down) every live task checks its
 * own ppid, pgid, sid, comm and threads against what they were when it
 * was set up, then that its zombies give the same wait status as they
 * did, then sends SIGTERM to its live children and reaps them: a child
 * that failed exits 1 (after saying why in the log), its parent then fails
 * too, and the root writes the verdict.
 */
#ifndef TREE_LIB_H
#define TREE_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

#define TREE_MAX	32
#define TREE_THREADS	4
#define KEEP		(-1)	/* pgrp: stay in the group one was born in */

struct node {
	const char *name;	/* comm, < 16 bytes */
	int parent;		/* index of the parent; -1 for the root (index 0) */
	int before_setsid;	/* forked before the parent's setsid() */
	int setsid;		/* makes a session of its own */
	int pgrp;		/* KEEP, its own index (a group of its own), or
				 * another node's index: joins that node's group */
	int threads;		/* extra threads */
	int zombie;		/* exits once set up; its parent never reaps it */
	int exit_code;		/* a zombie's exit code ... */
	int kill_sig;		/* ... or the signal it dies of */
};

/* a live task; a zombie (exit code, or the signal it died of) */
#define LIVE(name, parent, before, setsid, pgrp, threads) \
	{ name, parent, before, setsid, pgrp, threads, 0, 0, 0 }
#define ZOMBIE(name, parent, setsid, pgrp, code, sig) \
	{ name, parent, 0, setsid, pgrp, 0, 1, code, sig }

struct tree_shared {
	pid_t pid[TREE_MAX];
	int grouped[TREE_MAX];	/* its pgid is final */
};

/* What a task knows about itself once set up (private memory). */
struct tree_self {
	int idx;
	pid_t ppid, pgid, sid;
	pid_t kids[TREE_MAX];	/* pids of its children, by node index; 0: none */
	int kid_status[TREE_MAX];	/* zombies: the wait status they had */
	pthread_t th[TREE_THREADS];
	pid_t tids[TREE_THREADS];
	int nthreads;
	int chld_pending;	/* SIGCHLD, blocked once set up, was pending */
};

static const struct node *tree_nodes;
static int tree_nr;
static struct tree_shared *tree_sh;
static int tree_done[2] = { -1, -1 };
static struct tree_self self;
static int tree_thread_word;

#define tree_die(...) \
	test_task_fail(self.idx == 0, tree_nodes[self.idx].name, __VA_ARGS__)

static long tree_futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void *tree_thread(void *arg)
{
	long i = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "%.10s-t%ld", tree_nodes[self.idx].name, i);
	prctl(PR_SET_NAME, name);
	__atomic_store_n(&self.tids[i], gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&tree_thread_word, __ATOMIC_ACQUIRE))
		tree_futex(&tree_thread_word, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

static void start_threads(int n)
{
	sigset_t all, old;
	long i;

	/* SIGTERM is for the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n && i < TREE_THREADS; i++)
		if (pthread_create(&self.th[i], NULL, tree_thread, (void *)i))
			tree_die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	self.nthreads = i;
	for (i = 0; i < self.nthreads; i++)
		while (!__atomic_load_n(&self.tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
}

static void tree_run(int idx);

static void fork_node(int k)
{
	pid_t pid, parent = getpid();

	pid = fork();
	if (pid < 0)
		tree_die("fork of %s: %m", tree_nodes[k].name);
	if (pid == 0) {
		memset(&self, 0, sizeof(self));
		self.idx = k;
		/* nothing may outlive the test; orphans are the tests' own business */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		tree_run(k);
		_exit(4);
	}
	self.kids[k] = pid;
}

static void fork_kids(int idx, int before)
{
	int k;

	for (k = 1; k < tree_nr; k++)
		if (tree_nodes[k].parent == idx && !!tree_nodes[k].before_setsid == before)
			fork_node(k);
}

static void set_group(int idx)
{
	int g = tree_nodes[idx].pgrp;
	pid_t leader;

	if (g == KEEP)
		goto done;
	if (g == idx) {
		if (setpgid(0, 0))
			tree_die("setpgid(0, 0): %m");
		goto done;
	}
	/* wait for the leader, wherever it is in the tree, to have its group */
	while (!__atomic_load_n(&tree_sh->grouped[g], __ATOMIC_ACQUIRE))
		usleep(1000);
	leader = tree_sh->pid[g];
	if (setpgid(0, leader))
		tree_die("setpgid(0, %d) (the group of %s): %m", leader, tree_nodes[g].name);
done:
	__atomic_store_n(&tree_sh->grouped[idx], 1, __ATOMIC_RELEASE);
}

static void die_as_zombie(int idx)
{
	const struct node *n = &tree_nodes[idx];

	if (n->kill_sig) {
		struct rlimit no_core = { 0, 0 };
		sigset_t s;

		setrlimit(RLIMIT_CORE, &no_core);
		signal(n->kill_sig, SIG_DFL);
		sigemptyset(&s);
		sigaddset(&s, n->kill_sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(n->kill_sig);
		for (;;)
			pause();
	}
	_exit(n->exit_code);
}

/*
 * Blocked from the end of the setup on, SIGCHLD shows what a restore may
 * leave behind (zombies and stand-in leaders it made exit): it must be
 * pending after restore only if it was before.
 */
static int chld_pending(int block)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	if (block)
		sigprocmask(SIG_BLOCK, &s, NULL);
	sigpending(&s);
	return sigismember(&s, SIGCHLD);
}

/* Set up node idx as the calling task; returns once the whole tree is ready (root) */
static void tree_setup_self(int idx)
{
	const struct node *n = &tree_nodes[idx];
	int k;

	if (prctl(PR_SET_NAME, n->name))
		tree_die("PR_SET_NAME: %m");
	tree_sh->pid[idx] = getpid();
	fork_kids(idx, 1);
	if (n->setsid && setsid() < 0)
		tree_die("setsid: %m");
	set_group(idx);
	fork_kids(idx, 0);
	if (n->zombie) {
		/* kept for the check: its own pipe end goes with it */
		if (write(tree_done[1], "z", 1) != 1)
			_exit(5);
		die_as_zombie(idx);
	}
	start_threads(n->threads);
	/* zombies must be dead before we say we are set up */
	for (k = 1; k < tree_nr; k++) {
		siginfo_t si;

		if (!self.kids[k] || !tree_nodes[k].zombie)
			continue;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, self.kids[k], &si, WEXITED | WNOWAIT))
			tree_die("waitid %s: %m", tree_nodes[k].name);
		if (si.si_code == CLD_EXITED)
			self.kid_status[k] = W_EXITCODE(si.si_status, 0);
		else
			self.kid_status[k] = si.si_status | (si.si_code == CLD_DUMPED ? 0x80 : 0);
	}
	self.ppid = getppid();
	self.pgid = getpgid(0);
	self.sid = getsid(0);
	self.chld_pending = chld_pending(1);
}

static void tree_check_self(void)
{
	const struct node *n = &tree_nodes[self.idx];
	char name[32] = "", path[64], buf[64];
	int i;

	if (getppid() != self.ppid)
		tree_die("ppid %d, was %d", getppid(), self.ppid);
	if (getpgid(0) != self.pgid)
		tree_die("pgid %d, was %d", getpgid(0), self.pgid);
	if (getsid(0) != self.sid)
		tree_die("sid %d, was %d", getsid(0), self.sid);
	if (chld_pending(0) != self.chld_pending)
		tree_die("SIGCHLD pending: %d, was %d", !self.chld_pending, self.chld_pending);
	prctl(PR_GET_NAME, name);
	if (strcmp(name, n->name))
		tree_die("comm '%s'", name);
	if (!test_status_field("Threads", buf, sizeof(buf)) ||
	    atoi(buf) != 1 + self.nthreads)
		tree_die("%s threads, not %d", buf, 1 + self.nthreads);
	for (i = 0; i < self.nthreads; i++) {
		char want[16];

		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", self.tids[i]);
		if (test_read_file(path, buf, sizeof(buf)) < 0)
			tree_die("thread %d is gone", self.tids[i]);
		buf[strcspn(buf, "\n")] = 0;
		snprintf(want, sizeof(want), "%.10s-t%d", n->name, i);
		if (strcmp(buf, want))
			tree_die("thread %d is named '%s', not '%s'", self.tids[i], buf, want);
	}
}

/* Zombies first (they must still be there, as they were), then the others. */
static void tree_reap_kids(void)
{
	int k, status;
	pid_t r;

	for (k = 1; k < tree_nr; k++) {
		if (!self.kids[k] || !tree_nodes[k].zombie)
			continue;
		r = waitpid(self.kids[k], &status, WNOHANG);
		if (r != self.kids[k])
			tree_die("zombie %s (%d): waitpid gives %d (%m)", tree_nodes[k].name,
				 self.kids[k], r);
		if (status != self.kid_status[k])
			tree_die("zombie %s (%d): wait status %#x, was %#x", tree_nodes[k].name,
				 self.kids[k], status, self.kid_status[k]);
	}
	for (k = 1; k < tree_nr; k++)
		if (self.kids[k] && !tree_nodes[k].zombie)
			kill(self.kids[k], SIGTERM);
	for (k = 1; k < tree_nr; k++) {
		if (!self.kids[k] || tree_nodes[k].zombie)
			continue;
		while ((r = waitpid(self.kids[k], &status, 0)) < 0 && errno == EINTR)
			;
		if (r != self.kids[k])
			tree_die("child %s (%d): waitpid: %m", tree_nodes[k].name, self.kids[k]);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			tree_die("child %s (%d) failed (wait status %#x); see the log",
				 tree_nodes[k].name, self.kids[k], status);
	}
	__atomic_store_n(&tree_thread_word, 1, __ATOMIC_RELEASE);
	tree_futex(&tree_thread_word, FUTEX_WAKE_PRIVATE, TREE_THREADS);
	for (k = 0; k < self.nthreads; k++)
		pthread_join(self.th[k], NULL);
}

/* A task below the root: set up, wait, check, reap, exit. */
static void tree_run(int idx)
{
	tree_setup_self(idx);
	munmap(tree_sh, sizeof(*tree_sh));
	if (write(tree_done[1], "x", 1) != 1)
		_exit(5);
	close(tree_done[0]);
	close(tree_done[1]);
	test_waitsig();
	tree_check_self();
	tree_reap_kids();
	_exit(0);
}

/*
 * In the root (node 0, after test_init): build the tree and return once
 * every task is set up and holds nothing shared.
 */
static void tree_build(const struct node *nodes, int nr)
{
	int i, got = 0;
	char c;

	tree_nodes = nodes;
	tree_nr = nr;
	if (nr > TREE_MAX)
		fail("too many nodes");
	tree_sh = mmap(NULL, sizeof(*tree_sh), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tree_sh == MAP_FAILED)
		fail_errno("mmap");
	if (pipe2(tree_done, O_CLOEXEC))
		fail_errno("pipe");
	memset(&self, 0, sizeof(self));
	tree_setup_self(0);
	munmap(tree_sh, sizeof(*tree_sh));
	close(tree_done[1]);
	for (i = 1; i < nr; i++) {
		if (read(tree_done[0], &c, 1) != 1)
			fail("a task died while setting up (%d of %d set up)", got, nr - 1);
		got++;
	}
	close(tree_done[0]);
}

/* In the root, after SIGTERM. */
static void tree_check(void)
{
	tree_check_self();
	tree_reap_kids();
}

/* The whole test of a tree the table says all about. */
static void __attribute__((noreturn)) tree_test(int argc, char **argv,
						 const struct node *nodes, int nr)
{
	test_init(argc, argv);
	tree_build(nodes, nr);
	test_ready();
	test_waitsig();
	tree_check();
	pass();
}

#endif
