// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread signal state: the blocked mask, the alternate signal stack,
 * the private pending queue; and the process's shared pending queue.
 *
 * Dump reads from outside what the kernel shows there: the mask (taken by
 * the driver before it blocked everything) and both queues, with their
 * full siginfo, by PTRACE_PEEKSIGINFO. Only sigaltstack has to be asked
 * inside the task. Restore lets the new task queue each signal to itself
 * (a task may queue any si_code to itself), in the dumped order, while the
 * driver keeps signals blocked; the mask is put back last, from criu.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/ptrace.h"
#include "signal.pb-c.h"

#define SIGINFO_SIZE	128
#define PEEK_CHUNK	32
#define NSIG_KERNEL	64

#ifndef SS_AUTODISARM
#define SS_AUTODISARM	(1U << 31)
#endif

/* The kernel's stack_t on x86_64. */
struct kstack {
	uint64_t sp;
	int32_t flags;
	int32_t pad;
	uint64_t size;
};

/* Our own copy of the uapi struct: glibc's name for it varies. */
struct peek_args {
	uint64_t off;
	uint32_t flags;
	int32_t nr;
};

/* SIGKILL and SIGSTOP pending mean the task is dying or stopping. */
static int sig_queueable(int sig)
{
	return sig >= 1 && sig <= NSIG_KERNEL && sig != SIGKILL && sig != SIGSTOP;
}

static int siginfo_signo(const uint8_t *si)
{
	int sig;

	memcpy(&sig, si, sizeof(sig));
	return sig;
}

/* ---------------------------------------------------------------- dump */

/* The executor's int3 would take the place of a pending SIGTRAP: lost. */
static int signal_check(struct dump_ctx *dc, struct dtask *t)
{
	if ((t->status.sig_pnd | t->status.shd_pnd) & (1ULL << (SIGTRAP - 1))) {
		pr_err("Task %d has a SIGTRAP pending, which criu's breakpoints would "
		       "consume; not supported", t->pid);
		return -1;
	}
	return 0;
}

/* Where each thread's sigaltstack answer lands in its batch. */
static int signal_prepare_thread(struct dump_ctx *dc, struct dtask *t, int th,
				 struct batch *b)
{
	uint64_t *ss = t->priv[PART_SIGNAL];

	if (!ss) {
		ss = xzalloc(t->nr_threads * sizeof(*ss));
		if (!ss)
			return -1;
		t->priv[PART_SIGNAL] = ss;
	}
	ss[th] = batch_put(b, NULL, sizeof(struct kstack));
	if (!ss[th])
		return -1;
	return BATCH(b, "sigaltstack(get)", __NR_sigaltstack, 0, ss[th]) < 0 ? -1 : 0;
}

struct sig_queue {
	SiginfoEntry **ents;
	size_t nr, max;
};

static int queue_add(struct sig_queue *q, const uint8_t *si)
{
	SiginfoEntry *e, **n;

	if (q->nr == q->max) {
		q->max = q->max ? q->max * 2 : 16;
		n = xrealloc(q->ents, q->max * sizeof(*n));
		if (!n)
			return -1;
		q->ents = n;
	}
	e = xmalloc(sizeof(*e) + SIGINFO_SIZE);
	if (!e)
		return -1;
	siginfo_entry__init(e);
	e->siginfo.data = (uint8_t *)(e + 1);
	e->siginfo.len = SIGINFO_SIZE;
	memcpy(e->siginfo.data, si, SIGINFO_SIZE);
	q->ents[q->nr++] = e;
	return 0;
}

static void queue_free(struct sig_queue *q)
{
	while (q->nr)
		free(q->ents[--q->nr]);
	free(q->ents);
	q->ents = NULL;
	q->max = 0;
}

/*
 * A standard signal may be pending without a queue entry, when the
 * sender's siginfo could not be allocated (RLIMIT_SIGPENDING). The task
 * would then receive a zeroed siginfo with SI_USER; save just that.
 */
static int add_bare(struct sig_queue *q, uint64_t pending, uint64_t found)
{
	uint8_t si[SIGINFO_SIZE];
	int sig;

	for (sig = 1; sig <= NSIG_KERNEL; sig++) {
		if (!sig_queueable(sig) || !(pending & ~found & (1ULL << (sig - 1))))
			continue;
		memset(si, 0, sizeof(si));
		memcpy(si, &sig, sizeof(sig));	/* si_code 0 is SI_USER */
		if (queue_add(q, si))
			return -1;
	}
	return 0;
}

/* Reads one pending queue of @tid in order; @pending is its bitmap. */
static int peek_queue(pid_t tid, int shared, uint64_t pending, struct sig_queue *q)
{
	uint8_t buf[PEEK_CHUNK * SIGINFO_SIZE];
	struct peek_args a = {
		.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
		.nr = PEEK_CHUNK,
	};
	uint64_t found = 0;
	long n, i;
	int sig;

	for (;;) {
		n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, buf);
		if (n < 0) {
			pr_perror("Task %d: can't read its %s pending signals", tid,
				  shared ? "shared" : "private");
			return -1;
		}
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			sig = siginfo_signo(buf + i * SIGINFO_SIZE);
			if (!sig_queueable(sig))
				continue;
			found |= 1ULL << (sig - 1);
			if (queue_add(q, buf + i * SIGINFO_SIZE))
				return -1;
		}
		a.off += n;
	}
	return add_bare(q, pending, found);
}

static int dump_thread(struct dtask *t, int th, struct sig_queue *q,
		       struct sig_queue *shared, ThreadSignalEntry *te)
{
	pid_t tid = t->th[th].tid;
	const struct proc_status *st = thread_status(t, th);
	int ret;

	te->tid = t->ns_tids[th];
	te->blocked = t->th[th].sigmask;
	/*
	 * The bitmaps first (read while the task froze): a signal sent since
	 * shows in the queue.
	 */
	ret = peek_queue(tid, 0, st->sig_pnd, q);
	if (!ret && tid == t->pid)
		ret = peek_queue(tid, 1, st->shd_pnd, shared);
	if (ret)
		return -1;
	te->pending = q->ents;
	te->n_pending = q->nr;
	pr_debug("Task %d: thread %d blocks %#lx, %zu signals pending", t->pid, tid,
		 te->blocked, q->nr);
	return 0;
}

static int signal_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	uint64_t *remote_ss = t->priv[PART_SIGNAL];
	SignalEntry se = SIGNAL_ENTRY__INIT;
	SigaltstackEntry *ss = NULL;
	ThreadSignalEntry *te = NULL, **pte = NULL;
	struct sig_queue *qs = NULL, shared = { 0 };
	struct kstack *ks;
	int i, ret = -1;

	te = xzalloc(t->nr_threads * sizeof(*te));
	pte = xzalloc(t->nr_threads * sizeof(*pte));
	qs = xzalloc(t->nr_threads * sizeof(*qs));
	ss = xzalloc(t->nr_threads * sizeof(*ss));
	if (!te || !pte || !qs || !ss || !remote_ss)
		goto out;
	for (i = 0; i < t->nr_threads; i++) {
		thread_signal_entry__init(&te[i]);
		pte[i] = &te[i];
		if (dump_thread(t, i, &qs[i], &shared, &te[i]))
			goto out;
		sigaltstack_entry__init(&ss[i]);
		ks = batch_local(&t->th[i].b, remote_ss[i]);
		ss[i].sp = ks->sp;
		/* on the stack is a property of the registers, not of the setting */
		ss[i].flags = (uint32_t)ks->flags & ~SS_ONSTACK;
		ss[i].size = ks->size;
		te[i].altstack = &ss[i];
	}
	se.threads = pte;
	se.n_threads = t->nr_threads;
	se.shared_pending = shared.ents;
	se.n_shared_pending = shared.nr;
	ret = img_write(dc->dirfd, IMG_SIGNAL, t->ns_pid, &se.base);
out:
	for (i = 0; qs && i < t->nr_threads; i++)
		queue_free(&qs[i]);
	queue_free(&shared);
	free(qs);
	free(pte);
	free(te);
	free(ss);
	free(remote_ss);
	t->priv[PART_SIGNAL] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static int check_queue(struct rtask *t, SiginfoEntry **q, size_t n, const char *what)
{
	size_t i;
	int sig;

	for (i = 0; i < n; i++) {
		if (q[i]->siginfo.len != SIGINFO_SIZE) {
			pr_err("Task %d: image signal has a %s siginfo of %zu bytes, not %d",
			       t->pid, what, q[i]->siginfo.len, SIGINFO_SIZE);
			return -1;
		}
		sig = siginfo_signo(q[i]->siginfo.data);
		if (!sig_queueable(sig) || sig == SIGTRAP) {
			pr_err("Task %d: image signal has %s pending signal %d, which "
			       "can't be restored", t->pid, what, sig);
			return -1;
		}
	}
	return 0;
}

static int signal_load(struct rst_ctx *rc, struct rtask *t)
{
	ThreadSignalEntry *te;
	SignalEntry *se;
	size_t nr, i, most;

	if (img_read(rc->dirfd, IMG_SIGNAL, t->pid, (void **)&se, 0) < 0)
		return -1;
	t->img[PART_SIGNAL] = se;
	if (se->n_threads != (size_t)t->nr_threads) {
		pr_err("Task %d: image signal has %zu threads, the tree %d", t->pid,
		       se->n_threads, t->nr_threads);
		return -1;
	}
	nr = se->n_shared_pending;
	for (i = 0, most = 0; i < se->n_threads; i++) {
		te = se->threads[i];
		if (te->tid != (uint32_t)t->tids[i]) {
			pr_err("Task %d: image signal has thread %u where the tree has %d",
			       t->pid, te->tid, t->tids[i]);
			return -1;
		}
		if (te->altstack && (te->altstack->flags & ~(SS_DISABLE | SS_AUTODISARM))) {
			pr_err("Task %d: image signal has invalid sigaltstack flags %#x",
			       t->pid, te->altstack->flags);
			return -1;
		}
		if (check_queue(t, te->pending, te->n_pending, "private"))
			return -1;
		nr += te->n_pending;
		if (i)
			most = max(most, te->n_pending);
	}
	if (check_queue(t, se->shared_pending, se->n_shared_pending, "shared"))
		return -1;
	/* the leader queues the shared ones and its own, each thread its own */
	t->batch_entries += nr + 1;
	t->batch_data += nr * SIGINFO_SIZE + sizeof(struct kstack) + 16;
	t->thread_entries += most + 1;
	t->thread_data += most * SIGINFO_SIZE + sizeof(struct kstack) + 16;
	return 0;
}

static int queue_signals(struct rtask *t, struct batch *b, SiginfoEntry **q, size_t n,
			 pid_t tid)
{
	uint64_t info;
	size_t i;
	int sig, idx;

	for (i = 0; i < n; i++) {
		sig = siginfo_signo(q[i]->siginfo.data);
		info = batch_put(b, q[i]->siginfo.data, SIGINFO_SIZE);
		if (!info)
			return -1;
		if (!tid)
			idx = BATCH(b, "rt_sigqueueinfo of a shared pending signal",
				    __NR_rt_sigqueueinfo, t->pid, sig, info);
		else
			idx = BATCH(b, "rt_tgsigqueueinfo of a pending signal",
				    __NR_rt_tgsigqueueinfo, t->pid, tid, sig, info);
		if (idx < 0)
			return -1;
	}
	return 0;
}

/* In the leader: the process's shared queue. */
static int signal_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	SignalEntry *se = t->img[PART_SIGNAL];

	return queue_signals(t, b, se->shared_pending, se->n_shared_pending, 0);
}

static int signal_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	ThreadSignalEntry *te = ((SignalEntry *)t->img[PART_SIGNAL])->threads[th];
	struct kstack ks = { .flags = SS_DISABLE };
	uint64_t addr;

	/* always set: a fork of criu would otherwise keep criu's */
	if (te->altstack) {
		ks.sp = te->altstack->sp;
		ks.flags = te->altstack->flags;
		ks.size = te->altstack->size;
	}
	addr = batch_put(b, &ks, sizeof(ks));
	if (!addr || BATCH(b, "sigaltstack(set)", __NR_sigaltstack, addr, 0) < 0)
		return -1;
	/*
	 * Each thread queues its own: only to itself may a thread queue any
	 * si_code (a tgkill()ed signal's SI_TKILL included).
	 */
	return queue_signals(t, b, te->pending, te->n_pending, t->tids[th]);
}

static int signal_final(struct rst_ctx *rc, struct rtask *t)
{
	SignalEntry *se = t->img[PART_SIGNAL];
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (ptrace_set_sigmask(t->host_tids[i], se->threads[i]->blocked))
			return -1;
	return 0;
}

static void signal_release(struct rtask *t)
{
	img_free(IMG_SIGNAL, t->img[PART_SIGNAL]);
	t->img[PART_SIGNAL] = NULL;
}

const struct part part_signal = {
	.name = "signal",
	.id = PART_SIGNAL,
	.check = signal_check,
	.prepare_thread = signal_prepare_thread,
	.dump = signal_dump,
	.load = signal_load,
	.batch = signal_batch,
	.thread_batch = signal_thread_batch,
	.final = signal_final,
	.release = signal_release,
};
