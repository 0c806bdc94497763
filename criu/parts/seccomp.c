// SPDX-License-Identifier: GPL-2.0
/*
 * Seccomp: each thread's mode (none, strict, filter) and, in filter mode,
 * its chain of classic BPF filters.
 *
 * That criu can touch such a task at all rests on PTRACE_O_SUSPEND_SECCOMP:
 * every task is seized with it (task/ptrace.c), at dump and at restore, so
 * neither its filters nor strict mode judge the system calls criu makes it
 * run. Where the kernel refuses criu the option (criu itself under
 * seccomp, no CAP_SYS_ADMIN, no CONFIG_CHECKPOINT_RESTORE), a task with
 * seccomp is refused before anything is injected into it.
 *
 * Dump reads from outside: the mode from /proc/TID/status, each filter with
 * PTRACE_SECCOMP_GET_FILTER and its flags with PTRACE_SECCOMP_GET_METADATA
 * (the kernel keeps SECCOMP_FILTER_FLAG_LOG only). Both count from the
 * oldest filter of the thread's chain, index 0, up to the newest (so the
 * kernel walks it: get_nth_filter() counts back from the newest), whatever
 * ptrace(2) may say.
 *
 * Sharing. The kernel shares one filter among the threads of a process
 * (installed before they were cloned, or with TSYNC) and the children
 * forked after it went in, but shows nothing that identifies it. The rule
 * here: two threads hold the same filter at depth d of their chains when
 * the chains are equal, programs and flags, from the oldest filter up to d.
 * seccomp.img holds each such filter once and each thread names its newest.
 * The rule also merges equal filters that were installed separately, in the
 * same order: they filter alike, but a later TSYNC the kernel would have
 * refused for the original task succeeds for the restored one.
 *
 * Restore. A child is forked by criu's code before it turns into its
 * dumped self, so it can't inherit its parent's filters: every task
 * installs its whole chain, and the kernel holds a copy per task (copies
 * filter alike; only memory differs). Within a task the sharing is kept:
 * the filters common to all its threads are installed by the leader with
 * TSYNC once the threads exist, so all point at the same filter objects
 * and a later TSYNC works as it did; what a thread has on top it installs
 * itself. As the filters are not enforced while criu traces the task they
 * go in with the batch, but before the credentials part: installing needs
 * no_new_privs or CAP_SYS_ADMIN, and the task still has criu's
 * CAP_SYS_ADMIN then (criu needs it for the suspend option anyway), so a
 * task that had no_new_privs and one that had CAP_SYS_ADMIN and dropped it
 * since restore alike. Strict mode comes from a second table entry after
 * the credentials: each thread's very last step.
 *
 * Not kept: SECCOMP_FILTER_FLAG_SPEC_ALLOW leaves no trace, so filters are
 * installed without it (the kernel may then mitigate speculative store
 * bypass for the task: the safe side). A filter that can answer
 * SECCOMP_RET_USER_NOTIF is refused: its listener can't be recreated.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/ptrace.h"
#include "seccomp.pb-c.h"

/* Linux 5.7; Debian 12's headers have it, kept for older ones. */
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH	(1UL << 4)
#endif

#define FILTER_FLAGS_KEPT	SECCOMP_FILTER_FLAG_LOG
/* the kernel's limit is 32768 instructions on a chain, each filter counting 4 more */
#define MAX_CHAIN		8192

/* ---------------------------------------------------------------- dump */

struct sc_filter {
	uint32_t prev;			/* 1-based; 0: the oldest of its chain */
	uint32_t flags;
	uint32_t len;			/* instructions */
	struct sock_filter *insns;
};

/* dc->shared[PART_SECCOMP]: the tree's distinct filters */
struct sc_table {
	struct sc_filter *f;
	uint32_t nr;
};

/* t->priv[PART_SECCOMP], only for a task with seccomp */
struct sc_task {
	uint32_t *mode;			/* per thread */
	uint32_t *filter;		/* per thread: its newest, 1-based */
};

/* The one filter @f is, in the table; takes over its program. 1-based, 0 on error. */
static uint32_t intern(struct sc_table *tb, struct sc_filter *f)
{
	struct sc_filter *n;
	uint32_t i;

	for (i = 0; i < tb->nr; i++) {
		n = &tb->f[i];
		if (n->prev == f->prev && n->flags == f->flags && n->len == f->len &&
		    !memcmp(n->insns, f->insns, f->len * sizeof(*f->insns))) {
			free(f->insns);
			return i + 1;
		}
	}
	n = xpush(tb->f, tb->nr);
	if (!n) {
		free(f->insns);
		return 0;
	}
	*n = *f;
	return tb->nr;
}

static int can_notify(const struct sc_filter *f)
{
	uint32_t i;

	for (i = 0; i < f->len; i++)
		if (f->insns[i].code == (BPF_RET | BPF_K) &&
		    (f->insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
			return 1;
	return 0;
}

/* Filter @idx (0: the oldest) of thread @tid; 1 past the newest. */
static int read_filter(pid_t pid, pid_t tid, unsigned long idx, struct sc_filter *f)
{
	struct __ptrace_seccomp_metadata md = { .filter_off = idx };
	long n;

	memset(f, 0, sizeof(*f));
	n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, NULL);
	if (n < 0 && errno == ENOENT)
		return 1;
	if (n <= 0 || n > BPF_MAXINSNS) {
		pr_perror("Task %d: can't read seccomp filter %lu of thread %d (%ld)", pid, idx,
			  tid, n);
		return -1;
	}
	f->insns = xmalloc(n * sizeof(*f->insns));
	if (!f->insns)
		return -1;
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, f->insns) != n ||
	    ptrace(PTRACE_SECCOMP_GET_METADATA, tid, sizeof(md), &md) < 0) {
		pr_perror("Task %d: can't read seccomp filter %lu of thread %d", pid, idx, tid);
		free(f->insns);
		return -1;
	}
	f->len = n;
	f->flags = md.flags & FILTER_FLAGS_KEPT;
	if (can_notify(f)) {
		pr_err("Task %d: thread %d has a seccomp filter that can answer "
		       "SECCOMP_RET_USER_NOTIF; its listener can't be recreated: not supported",
		       pid, tid);
		free(f->insns);
		return -1;
	}
	return 0;
}

/* Thread @tid's chain, into the table; its newest filter (1-based), 0 on error. */
static uint32_t read_chain(struct sc_table *tb, pid_t pid, pid_t tid)
{
	struct sc_filter *chain = NULL, *n;
	uint32_t id = 0;
	int nr = 0, i, ret;

	for (;;) {
		n = nr % 16 ? chain : xrealloc(chain, (nr + 16) * sizeof(*chain));
		if (!n)
			goto out;
		chain = n;
		ret = read_filter(pid, tid, nr, &chain[nr]);
		if (ret < 0)
			goto out;
		if (ret)
			break;
		if (++nr > MAX_CHAIN) {
			pr_err("Task %d: thread %d has over %d seccomp filters", pid, tid,
			       MAX_CHAIN);
			goto out;
		}
	}
	if (!nr) {
		pr_err("Task %d: thread %d is in seccomp filter mode without a filter", pid, tid);
		goto out;
	}
	/* from the oldest up: each one is known by the chain beneath it */
	for (i = 0; i < nr; i++) {
		chain[i].prev = id;
		id = intern(tb, &chain[i]);
		chain[i].insns = NULL;
		if (!id)
			goto out;
	}
out:
	while (nr-- > 0)
		free(chain[nr].insns);
	free(chain);
	return id;
}

static int refuse_unsuspended(struct dtask *t, int i, uint32_t mode)
{
	int err;

	if (ptrace_seccomp_suspended(&err))
		return 0;
	pr_err("Task %d: thread %d is in seccomp mode %u and the kernel refuses criu "
	       "PTRACE_O_SUSPEND_SECCOMP (%s): its seccomp would judge criu's own system "
	       "calls in it; not dumped", t->pid, t->tids[i], mode, strerror(err));
	return -1;
}

/* Everything is read here, from outside: a refusal comes before any injection. */
static int seccomp_check(struct dump_ctx *dc, struct dtask *t)
{
	struct sc_table *tb = dc->shared[PART_SECCOMP];
	struct sc_task *p = NULL;
	uint32_t mode;
	int i;

	for (i = 0; i < t->nr_threads; i++) {
		mode = thread_status(t, i)->seccomp;
		if (!mode)
			continue;
		if (mode != SECCOMP_MODE_STRICT && mode != SECCOMP_MODE_FILTER) {
			pr_err("Task %d: thread %d is in seccomp mode %u, unknown here", t->pid,
			       t->tids[i], mode);
			return -1;
		}
		if (refuse_unsuspended(t, i, mode))
			return -1;
		if (!p) {
			p = xzalloc(sizeof(*p));
			if (!p)
				return -1;
			t->priv[PART_SECCOMP] = p;
			p->mode = xzalloc(t->nr_threads * sizeof(*p->mode));
			p->filter = xzalloc(t->nr_threads * sizeof(*p->filter));
			if (!p->mode || !p->filter)
				return -1;
		}
		p->mode[i] = mode;
		if (mode != SECCOMP_MODE_FILTER)
			continue;
		if (!tb) {
			tb = xzalloc(sizeof(*tb));
			if (!tb)
				return -1;
			dc->shared[PART_SECCOMP] = tb;
		}
		p->filter[i] = read_chain(tb, t->pid, t->tids[i]);
		if (!p->filter[i])
			return -1;
	}
	return 0;
}

static void free_task(struct dtask *t)
{
	struct sc_task *p = t->priv[PART_SECCOMP];

	if (!p)
		return;
	free(p->mode);
	free(p->filter);
	free(p);
	t->priv[PART_SECCOMP] = NULL;
}

static int seccomp_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct sc_task *p = t->priv[PART_SECCOMP];
	SeccompTaskEntry e = SECCOMP_TASK_ENTRY__INIT;
	SeccompThread *th = NULL, **pth = NULL;
	int i, ret = -1;

	if (!p)
		return 0;
	th = xzalloc(t->nr_threads * sizeof(*th));
	pth = xzalloc(t->nr_threads * sizeof(*pth));
	if (!th || !pth)
		goto out;
	for (i = 0; i < t->nr_threads; i++) {
		seccomp_thread__init(&th[i]);
		th[i].tid = t->ns_tids[i];
		th[i].mode = p->mode[i];
		th[i].has_filter = !!p->filter[i];
		th[i].filter = p->filter[i];
		pth[i] = &th[i];
		if (p->mode[i])
			pr_debug("Task %d: thread %d in seccomp mode %u, newest filter %u",
				 t->pid, t->tids[i], p->mode[i], p->filter[i]);
	}
	e.threads = pth;
	e.n_threads = t->nr_threads;
	ret = img_write(dc->dirfd, IMG_SECCOMP_TASK, t->ns_pid, &e.base);
out:
	free(th);
	free(pth);
	free_task(t);
	return ret;
}

static int seccomp_dump_tree(struct dump_ctx *dc)
{
	struct sc_table *tb = dc->shared[PART_SECCOMP];
	SeccompEntry e = SECCOMP_ENTRY__INIT;
	SeccompFilter *f = NULL, **pf = NULL;
	uint32_t i;
	int ret = -1;

	if (!tb)
		return 0;
	f = xzalloc(tb->nr * sizeof(*f));
	pf = xzalloc(tb->nr * sizeof(*pf));
	if (!f || !pf)
		goto out;
	for (i = 0; i < tb->nr; i++) {
		seccomp_filter__init(&f[i]);
		f[i].prog.data = (uint8_t *)tb->f[i].insns;
		f[i].prog.len = tb->f[i].len * sizeof(struct sock_filter);
		f[i].has_prev = f[i].has_flags = 1;
		f[i].prev = tb->f[i].prev;
		f[i].flags = tb->f[i].flags;
		pf[i] = &f[i];
	}
	e.filters = pf;
	e.n_filters = tb->nr;
	ret = img_write(dc->dirfd, IMG_SECCOMP, 0, &e.base);
	pr_info("%u distinct seccomp filter(s) in the tree", tb->nr);
out:
	free(f);
	free(pf);
	for (i = 0; i < tb->nr; i++)
		free(tb->f[i].insns);
	free(tb->f);
	free(tb);
	dc->shared[PART_SECCOMP] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

/* rc->shared[PART_SECCOMP]: seccomp.img, checked */
static int seccomp_load_tree(struct rst_ctx *rc)
{
	SeccompEntry *e;
	SeccompFilter *f;
	const char *why = NULL;
	size_t i;
	int ret;

	ret = img_read(rc->dirfd, IMG_SECCOMP, 0, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	rc->shared[PART_SECCOMP] = e;
	for (i = 0; i < e->n_filters && !why; i++) {
		f = e->filters[i];
		if (!f->prog.len || f->prog.len % sizeof(struct sock_filter) ||
		    f->prog.len > BPF_MAXINSNS * sizeof(struct sock_filter))
			why = "a program of a bad size";
		/* each filter sits on an older one: chains end */
		else if (f->prev > i)
			why = "a filter on top of a later one";
		else if (f->flags & ~FILTER_FLAGS_KEPT)
			why = "unknown flags";
	}
	if (why) {
		pr_err("Image seccomp.img is invalid: filter %zu has %s", i, why);
		return -1;
	}
	return 0;
}

/* t->img[PART_SECCOMP] */
struct sc_rtask {
	SeccompTaskEntry *e;
	uint32_t *mode;			/* per thread, in t->tids order */
	uint32_t **chain;		/* per thread: filter ids, the oldest first */
	uint32_t *len;
	uint32_t common;		/* how many filters all threads share */
	uint64_t *fprog;		/* per filter id: its sock_fprog in the batch, or 0 */
};

static int thread_index(struct rtask *t, uint32_t tid)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if ((uint32_t)t->tids[i] == tid)
			return i;
	return -1;
}

static int chain_of(SeccompEntry *tree, uint32_t newest, uint32_t **chain, uint32_t *len)
{
	uint32_t id, n = 0;

	for (id = newest; id; id = tree->filters[id - 1]->prev)
		n++;
	*chain = xmalloc(n * sizeof(**chain));
	if (!*chain)
		return -1;
	*len = n;
	for (id = newest; id; id = tree->filters[id - 1]->prev)
		(*chain)[--n] = id;
	return 0;
}

static int invalid(struct rtask *t, const char *why, uint32_t tid)
{
	pr_err("Task %d: image seccomp-%d.img is invalid: %s (thread %u)", t->pid, t->pid, why,
	       tid);
	return -1;
}

static int load_threads(struct rst_ctx *rc, struct rtask *t, struct sc_rtask *l)
{
	SeccompEntry *tree = rc->shared[PART_SECCOMP];
	SeccompThread *th;
	size_t i;
	int idx;

	for (i = 0; i < l->e->n_threads; i++) {
		th = l->e->threads[i];
		idx = thread_index(t, th->tid);
		if (idx < 0 || l->mode[idx] || l->chain[idx])
			return invalid(t, "a thread unknown or repeated", th->tid);
		if (th->mode > SECCOMP_MODE_FILTER)
			return invalid(t, "an unknown mode", th->tid);
		if ((th->mode == SECCOMP_MODE_FILTER) != (th->has_filter && th->filter))
			return invalid(t, "filters without filter mode, or the reverse", th->tid);
		if (th->mode == SECCOMP_MODE_FILTER &&
		    (!tree || th->filter > tree->n_filters))
			return invalid(t, "a filter seccomp.img does not have", th->tid);
		l->mode[idx] = th->mode;
		if (th->mode == SECCOMP_MODE_FILTER &&
		    chain_of(tree, th->filter, &l->chain[idx], &l->len[idx]))
			return -1;
	}
	return 0;
}

/* The filters every thread has, from the oldest: the leader installs them with TSYNC. */
static void find_common(struct rtask *t, struct sc_rtask *l)
{
	uint32_t n = l->len[0];
	int i;

	for (i = 1; i < t->nr_threads; i++) {
		if (l->len[i] < n)
			n = l->len[i];
		while (n && memcmp(l->chain[i], l->chain[0], n * sizeof(uint32_t)))
			n--;
	}
	l->common = n;
}

static int seccomp_load(struct rst_ctx *rc, struct rtask *t)
{
	SeccompEntry *tree = rc->shared[PART_SECCOMP];
	struct sc_rtask *l;
	uint32_t j, own = 0;
	int i, err, ret, any = 0;

	l = xzalloc(sizeof(*l));
	if (!l)
		return -1;
	t->img[PART_SECCOMP] = l;
	/* no image: no thread of the task had seccomp */
	ret = img_read(rc->dirfd, IMG_SECCOMP_TASK, t->pid, (void **)&l->e, 1);
	if (ret <= 0)
		return ret;
	l->mode = xzalloc(t->nr_threads * sizeof(*l->mode));
	l->chain = xzalloc(t->nr_threads * sizeof(*l->chain));
	l->len = xzalloc(t->nr_threads * sizeof(*l->len));
	l->fprog = xzalloc(((tree ? tree->n_filters : 0) + 1) * sizeof(*l->fprog));
	if (!l->mode || !l->chain || !l->len || !l->fprog || load_threads(rc, t, l))
		return -1;
	find_common(t, l);
	for (i = 0; i < t->nr_threads; i++) {
		any |= l->mode[i];
		/* the leader installs what all share, each thread what is its own */
		t->batch_entries += l->len[i] + 1;
		if (i)
			own = max(own, l->len[i] - l->common + 1);
		for (j = 0; j < l->len[i]; j++) {
			if (l->fprog[l->chain[i][j]])
				continue;
			/* counted once: marks it until the batch places it */
			l->fprog[l->chain[i][j]] = 1;
			t->batch_data += tree->filters[l->chain[i][j] - 1]->prog.len + 64;
		}
	}
	t->thread_entries += own;
	if (any && ptrace_seccomp_probe(&err) != 1) {
		pr_err("Task %d: has seccomp, and the kernel refuses criu "
		       "PTRACE_O_SUSPEND_SECCOMP (%s): its seccomp would judge criu's own system "
		       "calls in it; not restored", t->pid, strerror(err));
		return -1;
	}
	pr_debug("Task %d: seccomp of %d thread(s), %u filter(s) shared by all", t->pid,
		 t->nr_threads, l->common);
	return 0;
}

/* Each filter this task uses, once, in the batch's data (every thread reads it there). */
static int place_filters(struct rst_ctx *rc, struct sc_rtask *l, struct batch *b)
{
	SeccompEntry *tree = rc->shared[PART_SECCOMP];
	struct sock_fprog fp;
	uint64_t insns;
	uint32_t id;

	for (id = 1; tree && id <= tree->n_filters; id++) {
		if (!l->fprog[id])
			continue;
		insns = batch_put(b, tree->filters[id - 1]->prog.data,
				  tree->filters[id - 1]->prog.len);
		fp.len = tree->filters[id - 1]->prog.len / sizeof(struct sock_filter);
		fp.filter = (struct sock_filter *)insns;
		l->fprog[id] = insns ? batch_put(b, &fp, sizeof(fp)) : 0;
		if (!l->fprog[id])
			return -1;
	}
	return 0;
}

static int queue_filters(struct rst_ctx *rc, struct sc_rtask *l, const uint32_t *ids,
			 uint32_t nr, unsigned long flags, struct batch *b)
{
	SeccompEntry *tree = rc->shared[PART_SECCOMP];
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (BATCH(b, "seccomp(SECCOMP_SET_MODE_FILTER) of a dumped filter", __NR_seccomp,
			  SECCOMP_SET_MODE_FILTER, flags | tree->filters[ids[i] - 1]->flags,
			  l->fprog[ids[i]]) < 0)
			return -1;
	return 0;
}

/* The leader, once the threads exist: the shared filters for all of them. */
static int seccomp_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct sc_rtask *l = t->img[PART_SECCOMP];
	/* TSYNC_ESRCH: a failed sync is an error, not a positive tid */
	unsigned long sync = t->nr_threads > 1 ?
		SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH : 0;

	if (!l->e)
		return 0;
	if (place_filters(rc, l, b))
		return -1;
	return queue_filters(rc, l, l->chain[0], l->common, sync, b);
}

/* Each thread, before the credentials: the filters it has on top of the shared ones. */
static int seccomp_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	struct sc_rtask *l = t->img[PART_SECCOMP];

	if (!l->e || l->len[th] <= l->common)
		return 0;
	return queue_filters(rc, l, l->chain[th] + l->common, l->len[th] - l->common, 0, b);
}

/* Each thread's last step: strict mode lets nothing but read, write, exit, sigreturn. */
static int seccomp_strict_thread_batch(struct rst_ctx *rc, struct rtask *t, int th,
				       struct batch *b)
{
	struct sc_rtask *l = t->img[PART_SECCOMP];

	if (!l || !l->e || l->mode[th] != SECCOMP_MODE_STRICT)
		return 0;
	return BATCH(b, "prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)", __NR_prctl,
		     PR_SET_SECCOMP, SECCOMP_MODE_STRICT) < 0 ? -1 : 0;
}

static void seccomp_release(struct rtask *t)
{
	struct sc_rtask *l = t->img[PART_SECCOMP];
	int i;

	if (!l)
		return;
	for (i = 0; l->chain && i < t->nr_threads; i++)
		free(l->chain[i]);
	free(l->chain);
	free(l->len);
	free(l->mode);
	free(l->fprog);
	img_free(IMG_SECCOMP_TASK, l->e);
	free(l);
	t->img[PART_SECCOMP] = NULL;
}

static void seccomp_release_tree(struct rst_ctx *rc)
{
	img_free(IMG_SECCOMP, rc->shared[PART_SECCOMP]);
	rc->shared[PART_SECCOMP] = NULL;
}

const struct part part_seccomp = {
	.name = "seccomp",
	.id = PART_SECCOMP,
	.check = seccomp_check,
	.dump = seccomp_dump,
	.dump_tree = seccomp_dump_tree,
	.load_tree = seccomp_load_tree,
	.load = seccomp_load,
	.batch = seccomp_batch,
	.thread_batch = seccomp_thread_batch,
	.release = seccomp_release,
	.release_tree = seccomp_release_tree,
};

/* Its own entry in the table, after the credentials; the image is part_seccomp's. */
const struct part part_seccomp_strict = {
	.name = "seccomp-strict",
	.id = PART_SECCOMP_STRICT,
	.thread_batch = seccomp_strict_thread_batch,
};
