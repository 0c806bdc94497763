// SPDX-License-Identifier: GPL-2.0
/*
 * Signal dispositions: handler, flags, restorer and mask of every signal.
 *
 * The kernel shows them nowhere outside the task, so dump asks the task
 * itself: one rt_sigaction(sig, NULL, &old) per signal in the batch. Only
 * non-default ones are saved. Restore sets every signal, default ones
 * included, because the new task starts as a fork of criu and carries
 * criu's own dispositions.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "sigact.pb-c.h"

#define NSIG_KERNEL	64

/*
 * The kernel's struct sigaction on x86_64 (not glibc's, whose mask is
 * 128 bytes): the size argument of rt_sigaction is the 8-byte mask.
 */
struct ksigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

/* SIGKILL and SIGSTOP can be neither caught nor ignored. */
static int sig_settable(unsigned int sig)
{
	return sig >= 1 && sig <= NSIG_KERNEL && sig != SIGKILL && sig != SIGSTOP;
}

/* ---------------------------------------------------------------- dump */

/*
 * The executor stops on an int3; its SIGTRAP, forced on a task that
 * ignores SIGTRAP, resets the disposition to SIG_DFL, in the dumped task
 * and again in the restored one.
 */
static int sigact_check(struct dump_ctx *dc, struct dtask *t)
{
	if (t->status.sig_ign & (1ULL << (SIGTRAP - 1))) {
		pr_err("Task %d ignores SIGTRAP, which criu's breakpoints would reset; "
		       "not supported", t->pid);
		return -1;
	}
	return 0;
}

struct sigact_dump_priv {
	uint64_t acts;		/* remote ksigaction[NSIG_KERNEL], by sig - 1 */
};

static int sigact_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct sigact_dump_priv *p = xzalloc(sizeof(*p));
	unsigned int sig;

	if (!p)
		return -1;
	t->priv[PART_SIGACT] = p;
	p->acts = batch_put(b, NULL, NSIG_KERNEL * sizeof(struct ksigaction));
	if (!p->acts)
		return -1;
	for (sig = 1; sig <= NSIG_KERNEL; sig++) {
		if (!sig_settable(sig))
			continue;
		if (BATCH(b, "rt_sigaction(get)", __NR_rt_sigaction, sig, 0,
			  p->acts + (sig - 1) * sizeof(struct ksigaction),
			  sizeof(uint64_t)) < 0)
			return -1;
	}
	return 0;
}

static int sigact_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct sigact_dump_priv *p = t->priv[PART_SIGACT];
	SigactEntry se = SIGACT_ENTRY__INIT;
	SigactionEntry ents[NSIG_KERNEL], *pents[NSIG_KERNEL];
	struct ksigaction *ka;
	unsigned int sig;
	int ret;

	ka = batch_local(b, p->acts);
	for (sig = 1; sig <= NSIG_KERNEL; sig++, ka++) {
		if (!sig_settable(sig))
			continue;
		if (ka->handler == (uint64_t)(uintptr_t)SIG_DFL && !ka->flags && !ka->mask)
			continue;
		sigaction_entry__init(&ents[se.n_acts]);
		ents[se.n_acts].sig = sig;
		ents[se.n_acts].handler = ka->handler;
		ents[se.n_acts].flags = ka->flags;
		ents[se.n_acts].restorer = ka->restorer;
		ents[se.n_acts].mask = ka->mask;
		pents[se.n_acts] = &ents[se.n_acts];
		se.n_acts++;
		pr_debug("Task %d: signal %u handler %#lx flags %#lx mask %#lx", t->pid,
			 sig, ka->handler, ka->flags, ka->mask);
	}
	se.acts = pents;
	ret = img_write(dc->dirfd, IMG_SIGACT, t->ns_pid, &se.base);
	free(p);
	t->priv[PART_SIGACT] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static int sigact_load(struct rst_ctx *rc, struct rtask *t)
{
	SigactEntry *se;
	uint64_t seen = 0;
	size_t i;
	unsigned int sig;

	if (img_read(rc->dirfd, IMG_SIGACT, t->pid, (void **)&se, 0) < 0)
		return -1;
	t->img[PART_SIGACT] = se;
	for (i = 0; i < se->n_acts; i++) {
		sig = se->acts[i]->sig;
		if (!sig_settable(sig)) {
			pr_err("Task %d: image sigact has an action for invalid signal %u",
			       t->pid, sig);
			return -1;
		}
		if (seen & (1ULL << (sig - 1))) {
			pr_err("Task %d: image sigact has two actions for signal %u",
			       t->pid, sig);
			return -1;
		}
		seen |= 1ULL << (sig - 1);
		if (sig == SIGTRAP && se->acts[i]->handler == (uint64_t)(uintptr_t)SIG_IGN) {
			pr_err("Task %d: image sigact ignores SIGTRAP, which can't be restored",
			       t->pid);
			return -1;
		}
	}
	/* one call per signal; the default ones share a zeroed action */
	t->batch_entries += NSIG_KERNEL - 2;
	t->batch_data += (se->n_acts + 1) * sizeof(struct ksigaction);
	return 0;
}

static int sigact_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	SigactEntry *se = t->img[PART_SIGACT];
	uint64_t acts[NSIG_KERNEL + 1] = { 0 }, dfl;
	struct ksigaction ka;
	unsigned int sig;
	size_t i;

	dfl = batch_put(b, NULL, sizeof(ka));
	if (!dfl)
		return -1;
	for (i = 0; i < se->n_acts; i++) {
		ka.handler = se->acts[i]->handler;
		ka.flags = se->acts[i]->flags;
		ka.restorer = se->acts[i]->restorer;
		ka.mask = se->acts[i]->mask;
		acts[se->acts[i]->sig] = batch_put(b, &ka, sizeof(ka));
		if (!acts[se->acts[i]->sig])
			return -1;
	}
	for (sig = 1; sig <= NSIG_KERNEL; sig++) {
		if (!sig_settable(sig))
			continue;
		if (BATCH(b, "rt_sigaction(set)", __NR_rt_sigaction, sig,
			  acts[sig] ? acts[sig] : dfl, 0, sizeof(uint64_t)) < 0)
			return -1;
	}
	return 0;
}

static void sigact_release(struct rtask *t)
{
	img_free(IMG_SIGACT, t->img[PART_SIGACT]);
	t->img[PART_SIGACT] = NULL;
}

const struct part part_sigact = {
	.name = "sigact",
	.id = PART_SIGACT,
	.check = sigact_check,
	.prepare = sigact_prepare,
	.dump = sigact_dump,
	.load = sigact_load,
	.batch = sigact_batch,
	.release = sigact_release,
};
