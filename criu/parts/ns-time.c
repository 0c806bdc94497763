// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces: CLOCK_MONOTONIC and CLOCK_BOOTTIME (and their COARSE,
 * RAW and ALARM variants, which the kernel shifts by the same offsets) go
 * on inside the restored tree from where they were when it was frozen.
 *
 * A tree may hold several namespaces: a task that unshared CLONE_NEWTIME
 * gets one for its children (time_for_children) while it stays in its own
 * (time); its children are born into the new one and may do it again. The
 * dump records, for every task, both of them, and for every distinct
 * namespace the clocks inside it at one moment: the host's clocks, read
 * once when every task has been dumped (the tree is still frozen), plus
 * its offsets.
 *
 * Restore recreates each namespace, with offsets computed against one
 * reading of the host's clocks, so all of them continue from the dump and
 * keep their distances to each other exactly. Who creates which:
 *  - a namespace that some task had as time_for_children but was not in
 *    itself (it unshared): that task, first thing, before it forks (early
 *    hook). Its children are born into it; a descendant in it that was not
 *    born there joins it with setns() through the fd the maker opened,
 *    which every task it forks afterwards inherits.
 *  - every other namespace: criu, right before it forks the root
 *    (unshare, offsets, an fd every task inherits).
 * Every new task first joins its own namespace with setns() (it is still
 * single-threaded criu code then), then makes the one for its children if
 * it is the maker. Offsets can be written until a task enters a namespace,
 * which is why each is made by unsharing and filled in before any fork.
 *
 * Refused at the dump: threads in other namespaces than their leader, a
 * namespace unshared and not entered by two tasks (CLONE_VM children
 * share the parent's), a task in a namespace that another task made for
 * its children when it is not one of that task's descendants.
 *
 * Offsets are relative to the host's clocks, whatever namespace criu sits
 * in, so criu's own namespace's offsets are taken out of its readings.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "timens.pb-c.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080	/* Linux 5.6 */
#endif

#define NSEC		1000000000LL
/* the kernel keeps namespace clocks below KTIME_SEC_MAX / 2 (~146 years) */
#define MAX_CLOCK_NS	(4000000000LL * NSEC)

struct offsets {
	int64_t mono, boot;
};

/* The offsets of the namespace task @pid (0: criu) is in. */
static int own_offsets(pid_t pid, struct offsets *o)
{
	return proc_timens_offsets(pid, &o->mono, &o->boot);
}

/* The host's clocks now: ours, less our own namespace's offsets. */
static int host_clocks(struct offsets *now)
{
	struct offsets self;

	if (own_offsets(0, &self))
		return -1;
	now->mono = clock_ns(CLOCK_MONOTONIC) - self.mono;
	now->boot = clock_ns(CLOCK_BOOTTIME) - self.boot;
	return 0;
}

/* ---------------------------------------------------------------- dump */

struct tn_dtask {
	struct dtask *t;
	uint64_t ns, kids;	/* time, time_for_children */
};

struct tn_dump {
	struct offsets host;	/* the moment of the dump */
	int64_t realtime;
	struct tn_dtask *tasks;
	int nr;
};

static int descends(struct dtask *t, struct dtask *from)
{
	for (t = t->parent; t; t = t->parent)
		if (t == from)
			return 1;
	return 0;
}

/* The namespace a task made for its children is its own to make again. */
static int check_made(struct tn_dump *d, struct dtask *t, uint64_t ns, uint64_t kids)
{
	struct tn_dtask *e;
	int i;

	for (i = 0; i < d->nr; i++) {
		e = &d->tasks[i];
		if (ns != kids && e->ns != e->kids && e->kids == kids) {
			pr_err("Task %d and task %d both have time_for_children:[%lu] without "
			       "being in it; not supported", e->t->pid, t->pid, kids);
			return -1;
		}
		if (e->ns != e->kids && e->kids == ns && !descends(t, e->t)) {
			pr_err("Task %d is in time:[%lu], which task %d made for its children, "
			       "but is not one of its descendants; not supported", t->pid, ns,
			       e->t->pid);
			return -1;
		}
		/* those in it come after its maker: tree order is parents first */
		if (ns != kids && e->ns == kids) {
			pr_err("Task %d is in time:[%lu], which task %d made for its children, "
			       "but is not one of its descendants; not supported", e->t->pid,
			       kids, t->pid);
			return -1;
		}
	}
	return 0;
}

static int tn_check(struct dump_ctx *dc, struct dtask *t)
{
	struct tn_dump *d = dc->shared[PART_TIMENS];
	struct tn_dtask *n;
	uint64_t ns, kids;
	int i;

	if (!d) {
		d = xzalloc(sizeof(*d));
		if (!d)
			return -1;
		dc->shared[PART_TIMENS] = d;
	}
	ns = proc_ns_id(t->pid, 0, "time");
	kids = proc_ns_id(t->pid, 0, "time_for_children");
	if (!ns || !kids)
		return -1;
	for (i = 1; i < t->nr_threads; i++)
		if (proc_ns_id(t->pid, t->th[i].tid, "time") != ns ||
		    proc_ns_id(t->pid, t->th[i].tid, "time_for_children") != kids) {
			pr_err("Task %d: thread %d is in other time namespaces than its "
			       "leader; not supported", t->pid, t->th[i].tid);
			return -1;
		}
	if (check_made(d, t, ns, kids))
		return -1;
	n = xpush(d->tasks, d->nr);
	if (!n)
		return -1;
	n->t = t;
	n->ns = ns;
	n->kids = kids;
	return 0;
}

/*
 * A namespace's offsets: timens_offsets of a task whose children it is
 * for shows them; else a task in it (which may take a helper joining it).
 */
static int ns_offsets(struct tn_dump *d, uint64_t ns, struct offsets *o)
{
	char path[64];
	int i;

	for (i = 0; i < d->nr; i++) {
		if (d->tasks[i].kids != ns)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/timens_offsets", d->tasks[i].t->pid);
		return proc_read(path, proc_parse_timens_offsets, &o->mono, &o->boot);
	}
	for (i = 0; i < d->nr; i++)
		if (d->tasks[i].ns == ns)
			return own_offsets(d->tasks[i].t->pid, o);
	return -1;
}

static uint32_t ns_index(uint64_t *ids, int *nr, uint64_t ns)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (ids[i] == ns)
			return i + 1;
	ids[(*nr)++] = ns;
	return *nr;
}

static void tn_dump_free(struct dump_ctx *dc)
{
	struct tn_dump *d = dc->shared[PART_TIMENS];

	if (d)
		free(d->tasks);
	free(d);
	dc->shared[PART_TIMENS] = NULL;
}

static int tn_dump_tree(struct dump_ctx *dc)
{
	struct tn_dump *d = dc->shared[PART_TIMENS];
	TimensEntry e = TIMENS_ENTRY__INIT;
	TimensNs *nss = NULL, **pns = NULL;
	TimensTask *tts = NULL, **ptt = NULL;
	struct offsets o;
	uint64_t *ids = NULL;
	int i, nr = 0, ret = -1;

	if (!d)
		return 0;
	/*
	 * The dump's moment: after every task's timers and queued signals were
	 * read, so that nothing they hold happened later. The tree was frozen
	 * all along and saw no clock since the freeze; an expiry that came
	 * while it was frozen (its signal queued, or due before this moment)
	 * is delivered right after the restore, late by what the dump took,
	 * never before its time. Read at the freeze instead, a slow dump (a
	 * loaded guest: a second) had such a signal arrive at a clock reading
	 * earlier than its expiry.
	 */
	if (host_clocks(&d->host))
		goto out;
	d->realtime = clock_ns(CLOCK_REALTIME);
	ids = xzalloc(2 * d->nr * sizeof(*ids));
	tts = xzalloc(d->nr * sizeof(*tts));
	ptt = xzalloc(d->nr * sizeof(*ptt));
	nss = xzalloc(2 * d->nr * sizeof(*nss));
	pns = xzalloc(2 * d->nr * sizeof(*pns));
	if (!ids || !tts || !ptt || !nss || !pns)
		goto out;
	for (i = 0; i < d->nr; i++) {
		timens_task__init(&tts[i]);
		tts[i].pid = d->tasks[i].t->ns_pid;
		tts[i].ns = ns_index(ids, &nr, d->tasks[i].ns);
		tts[i].ns_for_children = ns_index(ids, &nr, d->tasks[i].kids);
		ptt[i] = &tts[i];
	}
	for (i = 0; i < nr; i++) {
		if (ns_offsets(d, ids[i], &o))
			goto out;
		timens_ns__init(&nss[i]);
		nss[i].id = i + 1;
		nss[i].monotonic_ns = d->host.mono + o.mono;
		nss[i].boottime_ns = d->host.boot + o.boot;
		nss[i].has_monotonic_offset_ns = nss[i].has_boottime_offset_ns = 1;
		nss[i].monotonic_offset_ns = o.mono;
		nss[i].boottime_offset_ns = o.boot;
		pns[i] = &nss[i];
		pr_info("Time namespace %d (time:[%lu]): monotonic %ld ns, boottime %ld ns "
			"inside", i + 1, ids[i], nss[i].monotonic_ns, nss[i].boottime_ns);
	}
	/* the root's, for readers of the first version */
	e.monotonic_ns = nss[tts[0].ns - 1].monotonic_ns;
	e.boottime_ns = nss[tts[0].ns - 1].boottime_ns;
	e.has_host_monotonic_ns = e.has_host_boottime_ns = e.has_realtime_ns = 1;
	e.host_monotonic_ns = d->host.mono;
	e.host_boottime_ns = d->host.boot;
	e.realtime_ns = d->realtime;
	e.nss = pns;
	e.n_nss = nr;
	dc->restore_shared += nr;	/* each one criu makes, for every task to inherit */
	e.tasks = ptt;
	e.n_tasks = d->nr;
	ret = img_write(dc->dirfd, IMG_TIMENS, 0, &e.base);
out:
	free(ids);
	free(tts);
	free(ptt);
	free(nss);
	free(pns);
	tn_dump_free(dc);
	return ret;
}

/* ------------------------------------------------------------- restore */

struct tn_ns {
	uint32_t id;
	int64_t mono, boot;	/* inside it at the dump */
	pid_t maker;		/* the task that makes it; 0: criu */
	int fd;			/* once made: to join it */
};

struct tn_rst {
	TimensEntry *img;
	struct tn_ns *ns;
	int nr;
	struct offsets host;	/* the reading every namespace's offsets are set against */
};

/* Per task: indexes in tn_rst.ns. */
struct tn_task {
	int ns, kids;
};

static int bad_image(const char *why, uint32_t what)
{
	pr_err("Image timens.img is invalid: %s (%u)", why, what);
	return -1;
}

static int find_ns(struct tn_rst *r, uint32_t id)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->ns[i].id == id)
			return i;
	return -1;
}

static int tn_load_tree(struct rst_ctx *rc)
{
	struct tn_rst *r = xzalloc(sizeof(*r));
	TimensEntry *e;
	size_t i, nr;

	if (!r)
		return -1;
	rc->shared[PART_TIMENS] = r;
	if (img_read(rc->dirfd, IMG_TIMENS, 0, (void **)&r->img, 0) < 0)
		return -1;
	e = r->img;
	nr = e->n_nss ? e->n_nss : 1;
	if (nr > (1 << 16))
		return bad_image("too many namespaces", nr);
	r->ns = xzalloc(nr * sizeof(*r->ns));
	if (!r->ns)
		return -1;
	for (i = 0; i < nr; i++) {
		struct tn_ns *n = &r->ns[i];

		n->fd = -1;
		n->id = e->n_nss ? e->nss[i]->id : 1;
		n->mono = e->n_nss ? e->nss[i]->monotonic_ns : e->monotonic_ns;
		n->boot = e->n_nss ? e->nss[i]->boottime_ns : e->boottime_ns;
		if (!n->id || find_ns(r, n->id) >= 0)
			return bad_image("a namespace id is 0 or repeated", n->id);
		if (n->mono < 0 || n->boot < 0 || n->mono > MAX_CLOCK_NS ||
		    n->boot > MAX_CLOCK_NS || n->boot < n->mono - NSEC) {
			pr_err("Image timens.img has impossible clocks in namespace %u "
			       "(monotonic %ld, boottime %ld)", n->id, n->mono, n->boot);
			return -1;
		}
		r->nr++;
	}
	for (i = 0; i < e->n_tasks; i++)
		if (find_ns(r, e->tasks[i]->ns) < 0 ||
		    find_ns(r, e->tasks[i]->ns_for_children) < 0)
			return bad_image("a task names an unknown namespace", e->tasks[i]->pid);
	return 0;
}

static int tn_load(struct rst_ctx *rc, struct rtask *t)
{
	struct tn_rst *r = rc->shared[PART_TIMENS];
	struct tn_task *tt = xzalloc(sizeof(*tt));
	TimensTask *e = NULL;
	size_t i;

	if (!tt)
		return -1;
	t->img[PART_TIMENS] = tt;
	for (i = 0; i < r->img->n_tasks; i++)
		if (r->img->tasks[i]->pid == (uint32_t)t->pid)
			e = r->img->tasks[i];
	if (!e) {
		if (r->img->n_tasks)
			return bad_image("no entry for a task", t->pid);
		return 0;	/* a first-version image: one namespace for all */
	}
	tt->ns = find_ns(r, e->ns);
	tt->kids = find_ns(r, e->ns_for_children);
	if (tt->ns == tt->kids)
		return 0;
	if (r->ns[tt->kids].maker)
		return bad_image("two tasks make one namespace", t->pid);
	r->ns[tt->kids].maker = t->pid;
	return 0;
}

/* As the kernel takes an offset: seconds and a non-negative nanosecond part. */
static void fmt_offset(char *buf, size_t len, int64_t ns)
{
	long long sec = ns / NSEC, nsec = ns % NSEC;

	if (nsec < 0) {
		nsec += NSEC;
		sec--;
	}
	snprintf(buf, len, "%lld %lld", sec, nsec);
}

/* The namespace of our children from now on gets @n's clocks. */
static int make_ns(struct tn_rst *r, struct tn_ns *n, const char *who)
{
	char buf[128], sm[32], sb[32];
	int fd, len;

	fmt_offset(sm, sizeof(sm), n->mono - r->host.mono);
	fmt_offset(sb, sizeof(sb), n->boot - r->host.boot);
	len = snprintf(buf, sizeof(buf), "monotonic %s\nboottime %s\n", sm, sb);
	if (unshare(CLONE_NEWTIME)) {
		pr_perror("%s: can't create time namespace %u", who, n->id);
		return -1;
	}
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len) {
		pr_perror("%s: can't set the offsets of time namespace %u (monotonic %s, "
			  "boottime %s)", who, n->id, sm, sb);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	n->fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (n->fd < 0) {
		pr_perror("%s: can't open time namespace %u", who, n->id);
		return -1;
	}
	pr_info("%s: time namespace %u, offsets monotonic %s, boottime %s", who, n->id,
		sm, sb);
	return 0;
}

/* In criu: one reading of the host's clocks for all, and the namespaces no task makes. */
static int tn_prefork(struct rst_ctx *rc)
{
	struct tn_rst *r = rc->shared[PART_TIMENS];
	int i;

	if (host_clocks(&r->host))
		return -1;
	for (i = 0; i < r->nr; i++) {
		if (r->ns[i].maker)
			continue;
		if (make_ns(r, &r->ns[i], "criu"))
			return -1;
		r->ns[i].fd = rst_inherit_fd(rc, r->ns[i].fd);
		if (r->ns[i].fd < 0)
			return -1;
	}
	return 0;
}

/* In the new task, before it forks: into its namespace; then its children's. */
static int tn_early(struct rst_ctx *rc, struct rtask *t)
{
	struct tn_rst *r = rc->shared[PART_TIMENS];
	struct tn_task *tt = t->img[PART_TIMENS];
	struct tn_ns *n = &r->ns[tt->ns];
	char who[32];

	if (n->fd < 0) {
		pr_err("Task %d: its time namespace %u is made by task %d, not one of its "
		       "ancestors", t->pid, n->id, n->maker);
		return -1;
	}
	/* also ends any namespace for children we were born with */
	if (setns(n->fd, CLONE_NEWTIME)) {
		pr_perror("Task %d: can't enter its time namespace %u", t->pid, n->id);
		return -1;
	}
	if (tt->kids == tt->ns)
		return 0;
	/* the fd stays open until our children are forked: they may need it */
	snprintf(who, sizeof(who), "Task %d", t->pid);
	return make_ns(r, &r->ns[tt->kids], who);
}

static void tn_release(struct rtask *t)
{
	free(t->img[PART_TIMENS]);
	t->img[PART_TIMENS] = NULL;
}

static void tn_release_tree(struct rst_ctx *rc)
{
	struct tn_rst *r = rc->shared[PART_TIMENS];

	if (!r)
		return;
	img_free(IMG_TIMENS, r->img);
	free(r->ns);
	free(r);
	rc->shared[PART_TIMENS] = NULL;
}

const struct part part_timens = {
	.name = "timens",
	.id = PART_TIMENS,
	.check = tn_check,
	.dump_tree = tn_dump_tree,
	.load_tree = tn_load_tree,
	.load = tn_load,
	.prefork = tn_prefork,
	.early = tn_early,
	.release = tn_release,
	.release_tree = tn_release_tree,
};
