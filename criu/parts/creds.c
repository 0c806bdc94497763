// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials: real, effective, saved and fs user and group ids, the
 * supplementary groups, the five capability sets, securebits, keep_caps
 * and no_new_privs.
 *
 * Each thread has its own: a thread whose credentials differ from the
 * leader's (changed with raw system calls in that thread alone) has an
 * entry of its own in the image, and makes them itself at restore.
 *
 * Dump takes the ids, groups and capabilities from /proc/PID/status and
 * asks the task for securebits, keep_caps and dumpable, which only the
 * task itself can read.
 *
 * Restore runs last in the batch: every other step may need root. The new
 * task starts as criu (root, criu's capabilities), and each change must
 * still be allowed when it comes, which fixes the order:
 *   groups, gids                    need CAP_SETGID
 *   keep_caps, uids                 setresuid keeps the permitted set
 *   capset(eff = prm = all we have, dumped inheritable)
 *                                   setresuid may have emptied the
 *                                   effective set; the inheritable one must
 *                                   be set while the bounding set allows it
 *   fsgid, fsuid                    need CAP_SETGID/CAP_SETUID
 *   ambient raise                   needs the cap permitted and inheritable
 *   bounding drop, securebits       need CAP_SETPCAP, and securebits may
 *                                   forbid ambient raises
 *   capset(the dumped sets)         gives up what the task did not have
 *   no_new_privs
 * Steps that change nothing are left out: a root task with criu's own
 * capabilities needs none. A change of euid, egid, fsuid or fsgid makes
 * the kernel clear the parent death signal and reset dumpable, so both are
 * put back after it: the signal as the earlier steps armed it, dumpable
 * as the image says.
 *
 * setfsuid() and setfsgid() can't report failure, so the final hook
 * compares what /proc shows with the image.
 */
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stddef.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/caps.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/idmap.h"
#include "creds.pb-c.h"

#define NGROUPS_LIMIT		65536
#define SECBITS_KNOWN		0xfffU	/* up to the exec restriction bits of 6.14 */
#define CAPS_MAX		64

struct creds_dump_priv {
	int securebits_idx, keepcaps_idx, dumpable_idx;
	int *th_securebits_idx;		/* per thread, in its own batch */
};

/* ---------------------------------------------------------------- dump */

static int same_creds(const struct proc_status *a, const struct proc_status *b)
{
	return !memcmp(a->uid, b->uid, sizeof(a->uid)) &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid)) && a->ngroups == b->ngroups &&
	       (!a->ngroups || !memcmp(a->groups, b->groups, a->ngroups * sizeof(*a->groups))) &&
	       a->cap_inh == b->cap_inh && a->cap_prm == b->cap_prm &&
	       a->cap_eff == b->cap_eff && a->cap_bnd == b->cap_bnd &&
	       a->cap_amb == b->cap_amb && a->no_new_privs == b->no_new_privs;
}

static int creds_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct creds_dump_priv *p = xzalloc(sizeof(*p));

	if (!p)
		return -1;
	t->priv[PART_CREDS] = p;
	p->th_securebits_idx = xzalloc(t->nr_threads * sizeof(int));
	if (!p->th_securebits_idx)
		return -1;
	p->securebits_idx = BATCH(b, "prctl(PR_GET_SECUREBITS)", __NR_prctl,
				  PR_GET_SECUREBITS);
	p->keepcaps_idx = BATCH(b, "prctl(PR_GET_KEEPCAPS)", __NR_prctl, PR_GET_KEEPCAPS);
	p->dumpable_idx = BATCH(b, "prctl(PR_GET_DUMPABLE)", __NR_prctl, PR_GET_DUMPABLE);
	return p->securebits_idx < 0 || p->keepcaps_idx < 0 || p->dumpable_idx < 0 ? -1 : 0;
}

/* securebits (keep_caps among them) are each thread's: it must say them itself */
static int creds_prepare_thread(struct dump_ctx *dc, struct dtask *t, int th, struct batch *b)
{
	struct creds_dump_priv *p = t->priv[PART_CREDS];

	if (!th)
		return 0;
	p->th_securebits_idx[th] = BATCH(b, "prctl(PR_GET_SECUREBITS)", __NR_prctl,
					 PR_GET_SECUREBITS);
	return p->th_securebits_idx[th] < 0 ? -1 : 0;
}

static void fill_entry(CredsEntry *ce, const struct proc_status *st, uint32_t securebits)
{
	ce->uid = st->uid[0];
	ce->euid = st->uid[1];
	ce->suid = st->uid[2];
	ce->fsuid = st->uid[3];
	ce->gid = st->gid[0];
	ce->egid = st->gid[1];
	ce->sgid = st->gid[2];
	ce->fsgid = st->gid[3];
	ce->groups = st->groups;
	ce->n_groups = st->ngroups;
	ce->cap_inh = st->cap_inh;
	ce->cap_prm = st->cap_prm;
	ce->cap_eff = st->cap_eff;
	ce->cap_bnd = st->cap_bnd;
	ce->cap_amb = st->cap_amb;
	ce->no_new_privs = st->no_new_privs;
	ce->securebits = securebits;
	ce->has_keep_caps = 1;
	ce->keep_caps = !!(securebits & SECBIT_KEEP_CAPS);
}

struct thread_creds {
	CredsThread *ents;
	CredsEntry *creds;
	CredsThread **ptrs;
	int nr;
};

static void thread_creds_free(struct thread_creds *tc)
{
	free(tc->ents);
	free(tc->creds);
	free(tc->ptrs);
}

/* The threads whose credentials are not the leader's, each with its own. */
static int other_threads(struct dtask *t, struct creds_dump_priv *p, uint32_t secbits,
			 struct thread_creds *tc)
{
	int i, n = t->nr_threads;
	uint32_t bits;

	tc->ents = xzalloc(n * sizeof(*tc->ents));
	tc->creds = xzalloc(n * sizeof(*tc->creds));
	tc->ptrs = xzalloc(n * sizeof(*tc->ptrs));
	if (!tc->ents || !tc->creds || !tc->ptrs)
		return -1;
	for (i = 1; i < n; i++) {
		bits = batch_entry(&t->th[i].b, p->th_securebits_idx[i])->ret;
		if (same_creds(&t->status, thread_status(t, i)) && bits == secbits)
			continue;
		creds_entry__init(&tc->creds[tc->nr]);
		fill_entry(&tc->creds[tc->nr], thread_status(t, i), bits);
		creds_thread__init(&tc->ents[tc->nr]);
		tc->ents[tc->nr].tid = t->ns_tids[i];
		tc->ents[tc->nr].creds = &tc->creds[tc->nr];
		tc->ptrs[tc->nr] = &tc->ents[tc->nr];
		pr_info("Task %d: thread %d has credentials of its own", t->pid, t->tids[i]);
		tc->nr++;
	}
	return 0;
}

static int creds_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct creds_dump_priv *p = t->priv[PART_CREDS];
	CredsEntry ce = CREDS_ENTRY__INIT;
	struct thread_creds tc = { 0 };
	uint32_t secbits;
	int ret = -1;

	secbits = batch_entry(b, p->securebits_idx)->ret;
	fill_entry(&ce, &t->status, secbits);
	ce.keep_caps = batch_entry(b, p->keepcaps_idx)->ret > 0;
	ce.has_dumpable = 1;
	ce.dumpable = batch_entry(b, p->dumpable_idx)->ret;
	if (other_threads(t, p, secbits, &tc))
		goto out;
	ce.threads = tc.ptrs;
	ce.n_threads = tc.nr;
	ret = img_write(dc->dirfd, IMG_CREDS, t->ns_pid, &ce.base);
out:
	thread_creds_free(&tc);
	free(p->th_securebits_idx);
	free(p);
	t->priv[PART_CREDS] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

/* The credentials a new task starts with: criu's own. */
struct cur_creds {
	uid_t uid[4];
	gid_t gid[4];
	gid_t *groups;
	int ngroups;
	uint64_t eff, prm, inh, bnd, amb;
	int last_cap, securebits, nnp;
};

/* The bounding set and, by where it ends, the last capability known here. */
static uint64_t read_bounding(int *last_cap)
{
	uint64_t bnd = 0;
	int cap, r;

	for (cap = 0; cap < CAPS_MAX; cap++) {
		r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		if (r)
			bnd |= 1ULL << cap;
	}
	*last_cap = cap - 1;
	return bnd;
}

static int read_cur(struct cur_creds *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int cap;

	if (getresuid(&c->uid[0], &c->uid[1], &c->uid[2]) ||
	    getresgid(&c->gid[0], &c->gid[1], &c->gid[2]) ||
	    syscall(SYS_capget, &h, d))
		return -1;
	/* an invalid id changes nothing and returns the current one */
	c->uid[3] = setfsuid(-1);
	c->gid[3] = setfsgid(-1);
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	c->bnd = read_bounding(&c->last_cap);
	c->amb = 0;
	for (cap = 0; cap <= c->last_cap; cap++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			c->amb |= 1ULL << cap;
	c->securebits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	c->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (c->securebits < 0 || c->nnp < 0)
		return -1;
	c->ngroups = getgroups(0, NULL);
	if (c->ngroups < 0)
		return -1;
	c->groups = xmalloc((c->ngroups + 1) * sizeof(gid_t));
	if (!c->groups || getgroups(c->ngroups, c->groups) != c->ngroups)
		return -1;
	return 0;
}

static uint64_t caps_known(int last_cap)
{
	return last_cap >= 63 ? ~0ULL : (1ULL << (last_cap + 1)) - 1;
}

/* What can't be given back from here, as one reason (and @caps), or NULL. */
static const char *impossible(const CredsEntry *ce, const struct cur_creds *c,
			      uint64_t *caps)
{
	*caps = (ce->cap_prm | ce->cap_inh) & ~caps_known(c->last_cap);
	if (*caps)
		return "capabilities this kernel does not know";
	*caps = ce->cap_prm & ~c->prm;
	if (*caps)
		return "permitted capabilities criu does not have";
	/* capset() without CAP_SETPCAP effective, as after setresuid() */
	*caps = ce->cap_inh & ~(c->inh | (c->prm & c->bnd));
	if (*caps)
		return "inheritable capabilities criu can't grant";
	if (c->nnp && !ce->no_new_privs)
		return "no_new_privs off, while criu runs with it";
	return NULL;
}

/*
 * Refused before any task exists: criu can give no task more than it has
 * itself. The capabilities are named, the usual cause being a criu that
 * runs without some of root's.
 */
static int check_possible(pid_t pid, const CredsEntry *ce, int own_userns)
{
	struct cur_creds c = { 0 };
	const char *why;
	char names[512];
	uint64_t caps;
	int ret = -1;

	if (read_cur(&c)) {
		pr_perror("Task %d: can't read criu's own credentials", pid);
		goto out;
	}
	/* in a user namespace of its own a task starts with every capability */
	if (own_userns)
		c.prm = c.bnd = caps_known(c.last_cap);
	why = impossible(ce, &c, &caps);
	if (why)
		pr_err("Task %d: image creds has %s%s%s%s", pid, why, caps ? ": " : "",
		       caps ? cap_names(caps, names, sizeof(names)) : "",
		       caps && !(caps & ~caps_known(c.last_cap)) ? " (run criu as root)" : "");
	else
		ret = 0;
out:
	free(c.groups);
	return ret;
}

/* What a valid entry must hold, or NULL; keep_caps folded into securebits. */
static const char *invalid(CredsEntry *ce)
{
	if (ce->cap_eff & ~ce->cap_prm)
		return "effective capabilities beyond the permitted ones";
	if (ce->cap_amb & ~(ce->cap_prm & ce->cap_inh))
		return "ambient capabilities not both permitted and inheritable";
	if (ce->securebits & ~SECBITS_KNOWN)
		return "unknown securebits";
	if (ce->n_groups > NGROUPS_LIMIT)
		return "too many groups";
	if (ce->uid == (uint32_t)-1 || ce->euid == (uint32_t)-1 ||
	    ce->suid == (uint32_t)-1 || ce->fsuid == (uint32_t)-1 ||
	    ce->gid == (uint32_t)-1 || ce->egid == (uint32_t)-1 ||
	    ce->sgid == (uint32_t)-1 || ce->fsgid == (uint32_t)-1)
		return "an id of -1";
	/* keep_caps is a securebit; where the image has both, it decides */
	if (ce->has_keep_caps) {
		ce->securebits &= ~SECBIT_KEEP_CAPS;
		if (ce->keep_caps)
			ce->securebits |= SECBIT_KEEP_CAPS;
	}
	return NULL;
}

static int thread_of(const struct rtask *t, uint32_t tid)
{
	int i;

	for (i = 1; i < t->nr_threads; i++)
		if ((uint32_t)t->tids[i] == tid)
			return i;
	return -1;
}

/* A thread's own entry: one of the task's threads, once, with no threads of its own. */
static const char *invalid_thread(const struct rtask *t, const CredsEntry *ce, size_t i)
{
	const CredsThread *ct = ce->threads[i];
	size_t j;

	if (thread_of(t, ct->tid) < 0)
		return "credentials of a thread the task does not have";
	for (j = 0; j < i; j++)
		if (ce->threads[j]->tid == ct->tid)
			return "a thread's credentials twice";
	if (ct->creds->n_threads)
		return "threads inside a thread's credentials";
	return invalid(ct->creds);
}

/* The entry of thread @th: its own, or the task's. */
static CredsEntry *creds_of(const struct rtask *t, int th)
{
	CredsEntry *ce = t->img[PART_CREDS];
	size_t i;

	for (i = 0; th && i < ce->n_threads; i++)
		if (ce->threads[i]->tid == (uint32_t)t->tids[th])
			return ce->threads[i]->creds;
	return ce;
}

static int creds_load(struct rst_ctx *rc, struct rtask *t)
{
	const char *why;
	CredsEntry *ce;
	size_t i, groups;

	if (img_read(rc->dirfd, IMG_CREDS, t->pid, (void **)&ce, 0) < 0)
		return -1;
	t->img[PART_CREDS] = ce;
	why = invalid(ce);
	for (i = 0; !why && i < ce->n_threads; i++)
		why = invalid_thread(t, ce, i);
	if (why) {
		pr_err("Task %d: image creds is invalid: %s", t->pid, why);
		return -1;
	}
	if (check_possible(t->pid, ce, rc->idmap != NULL))
		return -1;
	groups = ce->n_groups;
	for (i = 0; i < ce->n_threads; i++) {
		if (check_possible(ce->threads[i]->tid, ce->threads[i]->creds, rc->idmap != NULL))
			return -1;
		groups = max(groups, ce->threads[i]->creds->n_groups);
	}
	/* every thread changes its own: the leader in the task's batch */
	t->batch_entries += 16 + 2 * CAPS_MAX;
	t->batch_data += ce->n_groups * sizeof(uint32_t) + 256;
	t->thread_entries += 16 + 2 * CAPS_MAX;
	t->thread_data += groups * sizeof(uint32_t) + 256;
	return 0;
}

static int queue_capset(struct batch *b, const char *desc, uint64_t eff, uint64_t prm,
			uint64_t inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)eff, (uint32_t)prm, (uint32_t)inh },
		{ eff >> 32, prm >> 32, inh >> 32 },
	};
	uint64_t rh, rd;

	rh = batch_put(b, &h, sizeof(h));
	rd = batch_put(b, d, sizeof(d));
	if (!rh || !rd || BATCH(b, desc, __NR_capset, rh, rd) < 0)
		return -1;
	return 0;
}

static int queue_ids(struct batch *b, const CredsEntry *ce, struct cur_creds *c)
{
	int uid_chg, gid_chg, grp_chg;
	uint64_t groups;

	grp_chg = ce->n_groups != (size_t)c->ngroups ||
		  memcmp(ce->groups, c->groups, ce->n_groups * sizeof(gid_t));
	gid_chg = ce->gid != c->gid[0] || ce->egid != c->gid[1] || ce->sgid != c->gid[2];
	uid_chg = ce->uid != c->uid[0] || ce->euid != c->uid[1] || ce->suid != c->uid[2];
	if (grp_chg) {
		groups = batch_put(b, ce->groups, ce->n_groups * sizeof(gid_t));
		if ((ce->n_groups && !groups) ||
		    BATCH(b, "setgroups to the dumped groups", __NR_setgroups,
			  ce->n_groups, groups) < 0)
			return -1;
	}
	if (gid_chg && BATCH(b, "setresgid to the dumped gids", __NR_setresgid,
			     ce->gid, ce->egid, ce->sgid) < 0)
		return -1;
	if (uid_chg && !(c->securebits & SECBIT_KEEP_CAPS)) {
		if (BATCH(b, "prctl(PR_SET_KEEPCAPS, 1)", __NR_prctl, PR_SET_KEEPCAPS, 1) < 0)
			return -1;
		c->securebits |= SECBIT_KEEP_CAPS;
	}
	if (uid_chg && BATCH(b, "setresuid to the dumped uids", __NR_setresuid,
			     ce->uid, ce->euid, ce->suid) < 0)
		return -1;
	if (uid_chg || ce->cap_inh != c->inh) {
		if (queue_capset(b, "capset of all criu's caps and the dumped inheritable",
				 c->prm, c->prm, ce->cap_inh))
			return -1;
		c->eff = c->prm;
		c->inh = ce->cap_inh;
	}
	/* setresuid/setresgid have set the fs ids to the effective ones */
	if (ce->fsgid != (gid_chg ? ce->egid : c->gid[3]) &&
	    BATCH(b, "setfsgid to the dumped fsgid", __NR_setfsgid, ce->fsgid) < 0)
		return -1;
	if (ce->fsuid != (uid_chg ? ce->euid : c->uid[3]) &&
	    BATCH(b, "setfsuid to the dumped fsuid", __NR_setfsuid, ce->fsuid) < 0)
		return -1;
	return uid_chg;
}

static int queue_caps(struct batch *b, const CredsEntry *ce, struct cur_creds *c,
		      int uid_chg)
{
	int cap;

	if (c->amb & ~ce->cap_amb) {
		if (BATCH(b, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", __NR_prctl, PR_CAP_AMBIENT,
			  PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
			return -1;
		c->amb = 0;
	}
	for (cap = 0; cap <= c->last_cap; cap++)
		if ((ce->cap_amb & ~c->amb & (1ULL << cap)) &&
		    BATCH(b, "prctl(PR_CAP_AMBIENT_RAISE)", __NR_prctl, PR_CAP_AMBIENT,
			  PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
			return -1;
	for (cap = 0; cap <= c->last_cap; cap++)
		if ((c->bnd & ~ce->cap_bnd & (1ULL << cap)) &&
		    BATCH(b, "prctl(PR_CAPBSET_DROP)", __NR_prctl, PR_CAPBSET_DROP, cap) < 0)
			return -1;
	if (ce->securebits != (uint32_t)c->securebits &&
	    BATCH(b, "prctl(PR_SET_SECUREBITS) to the dumped bits", __NR_prctl,
		  PR_SET_SECUREBITS, ce->securebits) < 0)
		return -1;
	/* setfsuid() moves the filesystem caps in or out of the effective set */
	if ((uid_chg || ce->fsuid != c->uid[3] || ce->cap_eff != c->eff ||
	     ce->cap_prm != c->prm || ce->cap_inh != c->inh) &&
	    queue_capset(b, "capset to the dumped caps", ce->cap_eff, ce->cap_prm,
			 ce->cap_inh))
		return -1;
	if (ce->no_new_privs && !c->nnp &&
	    BATCH(b, "prctl(PR_SET_NO_NEW_PRIVS)", __NR_prctl, PR_SET_NO_NEW_PRIVS,
		  1, 0, 0, 0) < 0)
		return -1;
	return 0;
}

static int unmapped(const struct rtask *t, int gid, uint32_t host)
{
	pr_err("Task %d: its %s %u is not mapped into its user namespace", t->pid,
	       gid ? "group id" : "user id", host);
	return -1;
}

/*
 * The ids to set from inside: in the tree's user namespace its own (the
 * image has them as criu saw them, and the final check compares so).
 */
static int inside_ids(struct rst_ctx *rc, struct rtask *t, const CredsEntry *ce,
		      CredsEntry *in, uint32_t **groups)
{
	uint32_t *ids[8] = { &in->uid, &in->euid, &in->suid, &in->fsuid,
			     &in->gid, &in->egid, &in->sgid, &in->fsgid };
	size_t i;

	*in = *ce;
	*groups = xmalloc((ce->n_groups + 1) * sizeof(uint32_t));
	if (!*groups)
		return -1;
	in->groups = *groups;
	for (i = 0; i < 8; i++)
		if (idmap_inside(rc->idmap, i >= 4, *ids[i], ids[i]))
			return unmapped(t, i >= 4, *ids[i]);
	for (i = 0; i < ce->n_groups; i++)
		if (idmap_inside(rc->idmap, 1, ce->groups[i], &in->groups[i]))
			return unmapped(t, 1, ce->groups[i]);
	return 0;
}

/*
 * Credentials belong to each thread: every thread, the leader last of all
 * its steps, changes its own (they start as criu's, all the same).
 */
static int creds_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	CredsEntry *ce = creds_of(t, th), in;
	struct cur_creds c = { 0 };
	uint32_t *groups = NULL;
	uint64_t lost;
	int uid_chg, reset, get = -1, set, ret = -1;

	if (inside_ids(rc, t, ce, &in, &groups))
		goto out;
	ce = &in;
	if (read_cur(&c)) {
		pr_perror("Task %d: can't read the credentials it starts with", t->pid);
		goto out;
	}
	lost = ce->cap_bnd & ~c.bnd & caps_known(c.last_cap);
	if (lost)
		pr_warn("Task %d: bounding set capabilities %#lx stay dropped: criu lacks them",
			t->pid, lost);
	/* the kernel resets these two on such a change (commit_creds) */
	reset = ce->euid != c.uid[1] || ce->egid != c.gid[1] || ce->fsuid != c.uid[3] ||
		ce->fsgid != c.gid[3];
	/*
	 * The parent death signal is armed by an earlier batch step: a GET
	 * before the change writes it straight into the argument of a SET
	 * after it.
	 */
	if (reset) {
		get = BATCH(b, "prctl(PR_GET_PDEATHSIG) before the id change", __NR_prctl,
			    PR_GET_PDEATHSIG, 0);
		if (get < 0)
			goto out;
	}
	uid_chg = queue_ids(b, ce, &c);
	if (uid_chg < 0 || queue_caps(b, ce, &c, uid_chg))
		goto out;
	if (reset) {
		set = BATCH(b, "prctl(PR_SET_PDEATHSIG) after the id change", __NR_prctl,
			    PR_SET_PDEATHSIG, 0);
		if (set < 0)
			goto out;
		batch_entry(b, get)->args[1] = batch_entries_remote(b) +
			set * sizeof(struct sc_entry) + offsetof(struct sc_entry, args[1]);
	}
	if (reset && ce->has_dumpable && ce->dumpable <= 1 &&
	    BATCH(b, "prctl(PR_SET_DUMPABLE) after the id change", __NR_prctl,
		  PR_SET_DUMPABLE, ce->dumpable) < 0)
		goto out;
	ret = 0;
out:
	free(c.groups);
	free(groups);
	return ret;
}

/* What of @ce differs in the credentials of @pid (criu's view), or NULL. */
static const char *differs(pid_t pid, const CredsEntry *ce, uint64_t bnd, int *err)
{
	uint32_t uid[4] = { ce->uid, ce->euid, ce->suid, ce->fsuid };
	uint32_t gid[4] = { ce->gid, ce->egid, ce->sgid, ce->fsgid };
	const char *why = NULL;
	struct proc_status st;

	*err = proc_read_status(pid, &st);
	if (*err)
		return NULL;
	if (memcmp(st.uid, uid, sizeof(uid)) || memcmp(st.gid, gid, sizeof(gid)))
		why = "user or group ids";
	else if (st.ngroups != (int)ce->n_groups ||
		 memcmp(st.groups, ce->groups, ce->n_groups * sizeof(uint32_t)))
		why = "supplementary groups";
	else if (st.cap_eff != ce->cap_eff || st.cap_prm != ce->cap_prm ||
		 st.cap_inh != ce->cap_inh || st.cap_amb != ce->cap_amb ||
		 st.cap_bnd != (ce->cap_bnd & bnd))
		why = "capabilities";
	else if (st.no_new_privs != ce->no_new_privs)
		why = "no_new_privs";
	proc_status_free(&st);
	return why;
}

/* setfsuid and setfsgid fail silently: see that everything took, in every thread. */
static int creds_final(struct rst_ctx *rc, struct rtask *t)
{
	const char *why;
	uint64_t bnd;
	int th, last, err;

	bnd = read_bounding(&last);
	/* a new user namespace gives its first task every capability, bounding too */
	if (rc->idmap)
		bnd = caps_known(last);
	for (th = 0; th < t->nr_threads; th++) {
		why = differs(th ? t->host_tids[th] : t->host_pid, creds_of(t, th), bnd, &err);
		if (err)
			return -1;
		if (why) {
			pr_err("Task %d: after restore the %s of thread %d differ from image creds",
			       t->pid, why, t->tids[th]);
			return -1;
		}
	}
	return 0;
}

static void creds_release(struct rtask *t)
{
	img_free(IMG_CREDS, t->img[PART_CREDS]);
	t->img[PART_CREDS] = NULL;
}

const struct part part_creds = {
	.name = "creds",
	.id = PART_CREDS,
	.prepare = creds_prepare,
	.prepare_thread = creds_prepare_thread,
	.dump = creds_dump,
	.load = creds_load,
	.thread_batch = creds_thread_batch,
	.final = creds_final,
	.release = creds_release,
};
