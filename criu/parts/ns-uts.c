// SPDX-License-Identifier: GPL-2.0
/*
 * UTS namespaces: the host and domain names a task made for itself with
 * unshare(CLONE_NEWUTS) (or clone), anywhere in the tree.
 *
 * A task whose UTS namespace is not its parent's (for the root: not
 * criu's) made it: the dump asks uname() inside the task, in its batch,
 * which answers from the task's own namespace without criu joining it,
 * and writes uts-PID.img. Restore gives that task a new namespace with
 * those names first thing, before it forks: its children are born into
 * it, as they were. The others stay in their parent's.
 *
 * Refused: a namespace entered by more than one task (setns(2) into
 * another task's, or back into criu's): restore would have to make two
 * tasks share one namespace that neither made at fork.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "uts.pb-c.h"

/* Tree-wide during a dump: the namespaces some task made. */
struct uts_seen {
	uint64_t *ns;
	pid_t *maker;
	int nr;
};

/* Per task from check to dump: where uname() answers in its batch. */
struct uts_dump {
	uint64_t buf;
};

static int uts_new(struct dump_ctx *dc, struct dtask *t, uint64_t ns)
{
	struct uts_seen *s = dc->shared[PART_NS_UTS];
	int i;

	if (!s) {
		s = xzalloc(sizeof(*s));
		if (!s)
			return -1;
		dc->shared[PART_NS_UTS] = s;
	}
	for (i = 0; i < s->nr; i++)
		if (s->ns[i] == ns) {
			pr_err("Task %d joined the UTS namespace uts:[%lu] of task %d; "
			       "a UTS namespace shared other than by birth is not supported",
			       t->pid, ns, s->maker[i]);
			return -1;
		}
	if (xgrow(s->ns, s->nr) || xgrow(s->maker, s->nr))
		return -1;
	s->ns[s->nr] = ns;
	s->maker[s->nr++] = t->pid;
	return 0;
}

static int uts_check(struct dump_ctx *dc, struct dtask *t)
{
	uint64_t ns, outer, self, th;
	struct uts_dump *d;
	int i;

	self = proc_ns_id(0, 0, "uts");
	ns = proc_ns_id(t->pid, 0, "uts");
	outer = t->parent ? proc_ns_id(t->parent->pid, 0, "uts") : self;
	if (!self || !ns || !outer)
		return -1;
	for (i = 1; i < t->nr_threads; i++) {
		th = proc_ns_id(t->pid, t->th[i].tid, "uts");
		if (!th)
			return -1;
		if (th != ns) {
			pr_err("Task %d: thread %d is in a UTS namespace of its own "
			       "(uts:[%lu]); not supported", t->pid, t->th[i].tid, th);
			return -1;
		}
	}
	if (ns == outer)
		return 0;
	if (ns == self) {
		pr_err("Task %d went back into criu's UTS namespace uts:[%lu]; not supported",
		       t->pid, ns);
		return -1;
	}
	if (uts_new(dc, t, ns))
		return -1;
	d = xzalloc(sizeof(*d));
	if (!d)
		return -1;
	t->priv[PART_NS_UTS] = d;
	return 0;
}

static int uts_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct uts_dump *d = t->priv[PART_NS_UTS];

	if (!d)
		return 0;
	d->buf = batch_put(b, NULL, sizeof(struct utsname));
	if (!d->buf || BATCH(b, "uname", __NR_uname, d->buf) < 0)
		return -1;
	return 0;
}

static int uts_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct uts_dump *d = t->priv[PART_NS_UTS];
	UtsEntry e = UTS_ENTRY__INIT;
	struct utsname *u;
	int ret;

	if (!d)
		return 0;
	u = batch_local(b, d->buf);
	/* the kernel NUL-terminates them; a task's memory is not to be trusted */
	u->nodename[sizeof(u->nodename) - 1] = '\0';
	u->domainname[sizeof(u->domainname) - 1] = '\0';
	e.hostname = u->nodename;
	e.domainname = u->domainname;
	pr_info("Task %d: UTS namespace of its own: host %s, domain %s", t->pid,
		e.hostname, e.domainname);
	ret = img_write(dc->dirfd, IMG_UTS, t->ns_pid, &e.base);
	free(d);
	t->priv[PART_NS_UTS] = NULL;
	return ret;
}

static int uts_dump_tree(struct dump_ctx *dc)
{
	struct uts_seen *s = dc->shared[PART_NS_UTS];

	if (s) {
		free(s->ns);
		free(s->maker);
		free(s);
		dc->shared[PART_NS_UTS] = NULL;
	}
	return 0;
}

static int uts_load(struct rst_ctx *rc, struct rtask *t)
{
	UtsEntry *e;
	int ret;

	ret = img_read(rc->dirfd, IMG_UTS, t->pid, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	t->img[PART_NS_UTS] = e;
	/* the kernel's limit, __NEW_UTS_LEN */
	if (strlen(e->hostname) > 64 || strlen(e->domainname) > 64) {
		pr_err("Task %d: image uts has names longer than 64 bytes", t->pid);
		return -1;
	}
	return 0;
}

/* In the new task, before it forks: its children are born into it. */
static int uts_early(struct rst_ctx *rc, struct rtask *t)
{
	UtsEntry *e = t->img[PART_NS_UTS];

	if (!e)
		return 0;
	if (unshare(CLONE_NEWUTS)) {
		pr_perror("Task %d: can't create its UTS namespace", t->pid);
		return -1;
	}
	if (sethostname(e->hostname, strlen(e->hostname)) ||
	    setdomainname(e->domainname, strlen(e->domainname))) {
		pr_perror("Task %d: can't set its host name %s or domain name %s", t->pid,
			  e->hostname, e->domainname);
		return -1;
	}
	return 0;
}

static void uts_release(struct rtask *t)
{
	img_free(IMG_UTS, t->img[PART_NS_UTS]);
	t->img[PART_NS_UTS] = NULL;
}

const struct part part_ns_uts = {
	.name = "ns_uts",
	.id = PART_NS_UTS,
	.check = uts_check,
	.prepare = uts_prepare,
	.dump = uts_dump,
	.dump_tree = uts_dump_tree,
	.load = uts_load,
	.early = uts_early,
	.release = uts_release,
};
