// SPDX-License-Identifier: GPL-2.0
/*
 * A task gets its session only from the task that forks it, and its
 * process group from it too, or later by joining a group that exists at
 * that moment. Most tasks are simply forked by their parent. An orphan a
 * subreaper or an init adopted may be in a session its parent never was
 * in: a sibling that leads that session forks it with CLONE_PARENT, so
 * its parent stays right. When that leader is gone, a helper with the
 * leader's pid takes its place just long enough to fork, then exits and
 * is reaped. A group whose leader is gone is rebuilt the same way.
 * Zombies that led something do the same before they exit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "tree/plan.h"

#define NO_ID	0xffffffffU	/* a session or group criu's task can't have */

struct plan {
	struct plan_task *t;
	int nr, cap;
	uint32_t *bsid, *bpgid;	/* what each task has once forked */
	int *hash, mask;	/* pid -> index + 1 */
};

static int find(struct plan *p, uint32_t pid)
{
	int h = (pid * 2654435761U) & p->mask;

	for (; p->hash[h]; h = (h + 1) & p->mask)
		if (p->t[p->hash[h] - 1].pid == pid)
			return p->hash[h] - 1;
	return -1;
}

static void add(struct plan *p, int i)
{
	int h = (p->t[i].pid * 2654435761U) & p->mask;

	while (p->hash[h])
		h = (h + 1) & p->mask;
	p->hash[h] = i + 1;
}

/* A child a session leader forks before its setsid stays in the old session. */
static int before(struct plan *p, int c, int i)
{
	return p->t[i].sid != p->t[c].sid && p->t[i].sid != p->t[i].pid;
}

static uint32_t sid_from(struct plan *p, int c, int i)
{
	return before(p, c, i) ? p->bsid[c] : p->t[c].sid;
}

/* A task makes its own group before it forks; it joins another one later. */
static uint32_t pgid_from(struct plan *p, int c, int i)
{
	if (before(p, c, i) || p->t[c].pgid != p->t[c].pid)
		return p->bpgid[c];
	return p->t[c].pid;
}

static void set_creator(struct plan *p, int i, int c)
{
	p->t[i].creator = c;
	p->bsid[i] = sid_from(p, c, i);
	p->bpgid[i] = pgid_from(p, c, i);
}

static int add_helper(struct plan *p, int i, uint32_t pid, uint32_t sid, int creator)
{
	struct plan_task *h;
	int k = p->nr;

	if (k >= p->cap)
		return -1;
	h = &p->t[p->nr++];
	memset(h, 0, sizeof(*h));
	h->pid = h->pgid = pid;
	h->sid = sid;
	h->ppid = p->t[i].ppid;
	h->parent = p->t[i].parent;
	h->helper = 1;
	add(p, k);
	set_creator(p, k, creator);
	pr_debug("Tree: helper %u (session %u) for task %u, forked by %u", pid, sid,
		 p->t[i].pid, p->t[creator].pid);
	return k;
}

/* Outside ids are those of criu's session and group (--shell-job). */
static int outside(struct plan *p, uint32_t id)
{
	return id == NO_ID || id == p->bsid[0] || id == p->bpgid[0];
}

static int plan_session(struct plan *p, int i)
{
	struct plan_task *k = &p->t[i];
	int par = k->parent, l;

	if (k->sid == k->pid || sid_from(p, par, i) == k->sid) {
		set_creator(p, i, par);
		return 0;
	}
	l = find(p, k->sid);
	if (l < 0 && !outside(p, k->sid))
		l = add_helper(p, i, k->sid, k->sid, par);
	if (l < 0 || l == i || p->t[l].parent != par || p->t[l].sid != p->t[l].pid) {
		pr_err("Task %u is in session %u, which neither its parent %u nor a sibling "
		       "leads; not supported", k->pid, k->sid, k->ppid);
		return -1;
	}
	set_creator(p, i, l);
	return 0;
}

static int plan_group(struct plan *p, int i)
{
	struct plan_task *k = &p->t[i];
	int g;

	if (k->pgid == k->pid || p->bpgid[i] == k->pgid)
		return 0;
	g = find(p, k->pgid);
	if (g >= 0 && p->t[g].helper && p->t[g].parent == k->parent &&
	    p->t[g].sid == k->sid) {
		set_creator(p, i, g);
		return 0;
	}
	if (g >= 0) {
		/* joined in the batch: the group must still be there then */
		if (p->t[g].pgid != p->t[g].pid) {
			pr_err("Task %u is in process group %u, which its leader left; "
			       "not supported", k->pid, k->pgid);
			return -1;
		}
		return 0;
	}
	if (outside(p, k->pgid)) {
		pr_err("Task %u is in process group %u, which is outside the tree; "
		       "not supported", k->pid, k->pgid);
		return -1;
	}
	g = add_helper(p, i, k->pgid, k->sid, k->creator);
	if (g < 0)
		return -1;
	set_creator(p, i, g);
	return 0;
}

/*
 * A helper's group lives on after it exits only in the tasks it forked
 * into it: whoever joins it later needs one of them.
 */
static int check_helper_groups(struct plan *p)
{
	int i, j, h, held;

	for (i = 0; i < p->nr; i++) {
		h = find(p, p->t[i].pgid);
		if (h < 0 || !p->t[h].helper || p->t[i].creator == h)
			continue;
		held = 0;
		for (j = 0; j < p->nr && !held; j++)
			held = p->t[j].creator == h && p->t[j].pgid == p->t[h].pid &&
			       !p->t[j].helper;
		if (!held) {
			pr_err("Task %u is in process group %u, whose leader is gone, and no "
			       "sibling of the leader is left in it; not supported",
			       p->t[i].pid, p->t[i].pgid);
			return -1;
		}
	}
	return 0;
}

static int link_parents(struct plan *p)
{
	int i;

	for (i = 0; i < p->nr; i++) {
		p->t[i].helper = 0;
		p->t[i].creator = -1;
		p->t[i].parent = i ? find(p, p->t[i].ppid) : -1;
		if (i && (p->t[i].parent < 0 || p->t[i].parent >= i)) {
			pr_err("Task %u: its parent %u is not in the tree before it",
			       p->t[i].pid, p->t[i].ppid);
			return -1;
		}
		if (i && p->t[p->t[i].parent].zombie) {
			pr_err("Task %u: a zombie has children", p->t[i].ppid);
			return -1;
		}
	}
	return 0;
}

int tree_plan(struct plan_task *t, int nr, int cap)
{
	struct plan p = { .t = t, .nr = nr, .cap = cap };
	int i, size = 16, ret = -1;

	while (size < 2 * cap)
		size *= 2;
	p.mask = size - 1;
	p.hash = xzalloc(size * sizeof(int));
	p.bsid = xmalloc(cap * sizeof(uint32_t));
	p.bpgid = xmalloc(cap * sizeof(uint32_t));
	if (!p.hash || !p.bsid || !p.bpgid)
		goto out;
	for (i = 0; i < nr; i++) {
		if (find(&p, t[i].pid) >= 0) {
			pr_err("Task %u is in the tree twice", t[i].pid);
			goto out;
		}
		add(&p, i);
	}
	if (link_parents(&p))
		goto out;
	p.bsid[0] = t[0].sid == t[0].pid ? NO_ID : t[0].sid;
	p.bpgid[0] = t[0].pgid == t[0].pid ? NO_ID : t[0].pgid;
	for (i = 1; i < nr; i++)
		if (plan_session(&p, i) || plan_group(&p, i))
			goto out;
	if (check_helper_groups(&p))
		goto out;
	ret = p.nr;
out:
	free(p.hash);
	free(p.bsid);
	free(p.bpgid);
	return ret;
}
