// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU mapping of a task: which CPU it may run on here at all, and on
 * which CPUs each of its threads may run (affinity).
 *
 * Dump records, from outside, each thread's affinity (sched_getaffinity)
 * and the XSAVE components its registers use (XSTATE_BV of its
 * NT_X86_XSTATE area) in cpu-PID.img, and the dumping CPU in cpuinfo.img.
 * Scheduling policy, priority and nice are the sched part's (sched-PID.img).
 *
 * Restore refuses, in load and so before anything is created, a CPU that
 * lacks what the task may use (--cpu-cap; parts/cpu-info.c has the rules),
 * and maps each saved affinity to the CPUs online here:
 *  - a mask that held every CPU online at dump time means "not pinned":
 *    the thread gets every CPU here, whatever their number;
 *  - a CPU listed in --cpu-map SRC:DST becomes DST (which must be online);
 *  - a CPU online here stays;
 *  - any other CPU n, without --cpu-map, becomes online CPU number
 *    n mod (number of online CPUs), counting in increasing order: a pinned
 *    task stays pinned to as many CPUs as it can, spread as before;
 *    with --cpu-map, such CPUs are dropped, and an affinity left empty is
 *    an error naming the task and the CPUs.
 * Every change is logged at info level, and one warning line per task says
 * what the automatic rule did. CRIU_FAKE_ONLINE_CPUS=LIST replaces the
 * online CPU list read from sysfs: a test hook, to restore "on" a machine
 * with fewer CPUs (Documentation/cpu.md).
 *
 * The new task applies its affinity itself (child hook), before its batch.
 *
 * CPU namespaces (kernel/ patches, CLONE_NEWCPU): a tree may run in a
 * namespace where CPUs are numbered 0..n-1, each backed by a real CPU. A
 * task inside sees only virtual numbers, and must keep seeing the same
 * ones after a restore elsewhere. Dump records the namespace's map (read
 * from /proc/PID/cpu_map) and stores affinities in virtual numbers (what
 * sched_getaffinity() from outside returns is criu's numbering: the map
 * turned around). Restore makes a namespace with the same n virtual CPUs
 * before the root is forked (prefork hook: unshare and write
 * /proc/self/cpu_map), backed by CPUs chosen with the rules above, except
 * that they must be distinct: --cpu-map SRC:DST names the CPUs of the
 * dumping machine (the map's right column), a CPU online here is kept, and
 * without --cpu-map any other one takes online CPU number n mod count, or
 * the next free one. The affinities then need no change: they are virtual.
 * Only one namespace per tree, the root's, is supported; without CPU
 * namespaces in the kernel, restore refuses such images unless
 * --cpu-ns=ignore, which maps the affinities back to the dumped CPUs and
 * goes on as without a namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/cpu-info.h"
#include "parts/cpu-use.h"
#include "parts/part.h"
#include "task/ptrace.h"
#include "cpu.pb-c.h"

#define MAX_CPUS		(1 << 16)	/* bound for images, options, sysfs */
#define MAX_WORDS		(MAX_CPUS / 64)
#define XSTATE_BV_OFF		512		/* the XSAVE header's XSTATE_BV */
#define XSTATE_LEGACY		3ULL		/* x87 | SSE: the FXSAVE part */
#define FAKE_ONLINE_ENV		"CRIU_FAKE_ONLINE_CPUS"

#ifndef CLONE_NEWCPU
#define CLONE_NEWCPU		0x00000040	/* kernel/ patches: CPU namespaces */
#endif

/* ------------------------------------------------------------ CPU sets */

struct cpus {
	uint64_t *w;
	int nw;
};

static int cpus_grow(struct cpus *c, int nw)
{
	uint64_t *n;

	if (nw <= c->nw)
		return 0;
	n = xrealloc(c->w, nw * sizeof(*n));
	if (!n)
		return -1;
	memset(n + c->nw, 0, (nw - c->nw) * sizeof(*n));
	c->w = n;
	c->nw = nw;
	return 0;
}

static int cpus_set(struct cpus *c, int cpu)
{
	if (cpus_grow(c, cpu / 64 + 1))
		return -1;
	c->w[cpu / 64] |= 1ULL << (cpu % 64);
	return 0;
}

static int cpus_isset(const struct cpus *c, int cpu)
{
	return cpu / 64 < c->nw && (c->w[cpu / 64] >> (cpu % 64)) & 1;
}

/* The first CPU >= @cpu in @c, or -1. */
static int cpus_next(const struct cpus *c, int cpu)
{
	for (; cpu < c->nw * 64; cpu++)
		if (cpus_isset(c, cpu))
			return cpu;
	return -1;
}

static int cpus_count(const struct cpus *c)
{
	int i, n = 0;

	for (i = 0; i < c->nw; i++)
		n += __builtin_popcountll(c->w[i]);
	return n;
}

static int cpus_subset(const struct cpus *a, const struct cpus *b)
{
	int i;

	for (i = 0; i < a->nw; i++)
		if (a->w[i] & ~(i < b->nw ? b->w[i] : 0))
			return 0;
	return 1;
}

/* Keep in @a only the CPUs of @b. */
static void cpus_and(struct cpus *a, const struct cpus *b)
{
	int i;

	for (i = 0; i < a->nw; i++)
		a->w[i] &= i < b->nw ? b->w[i] : 0;
}

static int cpus_copy(struct cpus *to, const struct cpus *from)
{
	if (cpus_grow(to, from->nw))
		return -1;
	memcpy(to->w, from->w, from->nw * sizeof(*from->w));
	return 0;
}

static void cpus_free(struct cpus *c)
{
	free(c->w);
	c->w = NULL;
	c->nw = 0;
}

/* A CPU list as sysfs and taskset -c write it: "0-3,8,10-11". */
static int cpus_parse(const char *s, struct cpus *c)
{
	long a, b;
	char *end;

	while (*s && *s != '\n') {
		a = b = strtol(s, &end, 10);
		if (end == s)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				return -1;
		}
		if (a < 0 || b < a || b >= MAX_CPUS)
			return -1;
		for (; a <= b; a++)
			if (cpus_set(c, a))
				return -1;
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return cpus_count(c) ? 0 : -1;
}

static const char *cpus_str(const struct cpus *c, char *buf, size_t len)
{
	size_t off = 0;
	int a, b;

	buf[0] = 0;
	for (a = cpus_next(c, 0); a >= 0 && off < len; a = cpus_next(c, b + 1)) {
		for (b = a; cpus_isset(c, b + 1); b++)
			;
		if (a == b)
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", a);
		else
			off += snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", a, b);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

/* The kernel has CPU namespaces (kernel/ patches). */
static int have_cpu_ns(void)
{
	return access("/proc/self/ns/cpu", F_OK) == 0;
}

/* ---------------------------------------------------------------- dump */

static uint64_t dump_xstate_used;	/* over every task of this dump */

/* The tree's CPU namespace, found when its root is checked (dc->shared). */
struct cpu_ns_dump {
	uint64_t ns;		/* the root's namespace; 0: the kernel has none */
	uint32_t *real;		/* virtual CPU v is CPU real[v] for criu */
	int nr;			/* 0: the tree is in criu's namespace */
	/* read once for the whole dump */
	char *online_str;	/* criu's online CPU list, as the kernel shows it */
	struct cpus online;	/* the online CPUs, in the tree's numbers */
};

/*
 * The map of the namespace task @pid's children get (its own: checked),
 * "V CPU" per line, CPU as criu numbers it: -1 means criu sits in a
 * namespace that lacks it, below the tree's, and can't tell where it is.
 */
static int read_ns_map(pid_t pid, struct cpu_ns_dump *d)
{
	char path[64], *buf, *p, *end;
	long v, cpu;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/cpu_map", pid);
	buf = read_file(-1, path, NULL);
	if (!buf) {
		pr_perror("Can't read %s", path);
		return -1;
	}
	d->real = xzalloc(MAX_CPUS * sizeof(*d->real));
	if (!d->real)
		goto out;
	for (p = buf; *p; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		p = end;
		cpu = strtol(p, &end, 10);
		if (end == p || v != d->nr || v >= MAX_CPUS || cpu >= MAX_CPUS || cpu < -1)
			goto bad;
		if (cpu < 0) {
			pr_err("Task %d: CPU namespace: criu's own CPU namespace lacks the CPU "
			       "of virtual CPU %ld; dump from the tree's parent namespace", pid, v);
			goto out;
		}
		d->real[d->nr++] = cpu;
		while (*end == '\n' || *end == ' ')
			end++;
	}
	if (*p || !d->nr)
		goto bad;
	ret = 0;
	goto out;
bad:
	pr_err("Can't parse %s", path);
out:
	free(buf);
	return ret;
}

static struct dtask *root_of(struct dtask *t)
{
	while (t->parent)
		t = t->parent;
	return t;
}

/* An affinity read from outside (criu's numbers) in the namespace's numbers. */
static int to_virtual(const struct cpu_ns_dump *d, const struct cpus *real, struct cpus *virt)
{
	int v;

	for (v = 0; v < d->nr; v++)
		if (cpus_isset(real, d->real[v]) && cpus_set(virt, v))
			return -1;
	return 0;
}

/* The online CPUs, as the tree numbers them: "affinity all" means all of those. */
static int read_online_cpus(struct cpu_ns_dump *d)
{
	struct cpus real = { 0 };

	d->online_str = cpuinfo_read_online();
	if (!d->online_str)
		return -1;
	if (cpus_parse(d->online_str, &real)) {
		pr_err("Can't parse the online CPU list '%s'", d->online_str);
		cpus_free(&real);
		return -1;
	}
	if (!d->nr) {
		d->online = real;
		return 0;
	}
	/* "online" in the namespace: the virtual CPUs backed by online ones */
	if (to_virtual(d, &real, &d->online)) {
		cpus_free(&real);
		return -1;
	}
	cpus_free(&real);
	return 0;
}

/* The tree's CPU namespace (when the kernel has them) and the online CPUs. */
static struct cpu_ns_dump *tree_cpus(struct dump_ctx *dc, struct dtask *t)
{
	struct cpu_ns_dump *d = xzalloc(sizeof(*d));
	struct dtask *root = root_of(t);
	uint64_t kids, self;

	if (!d)
		return NULL;
	dc->shared[PART_CPU] = d;
	if (have_cpu_ns()) {
		d->ns = proc_ns_id(root->pid, 0, "cpu");
		self = proc_ns_id(0, 0, "cpu");
		kids = proc_ns_id(root->pid, 0, "cpu_for_children");
		if (!d->ns || !self || !kids)
			return NULL;
		/* the map shows the namespace for children: ours only when the same */
		if (d->ns != self && kids == d->ns && read_ns_map(root->pid, d))
			return NULL;
		if (d->nr)
			pr_info("The tree is in CPU namespace cpu:[%lu], of %d CPUs", d->ns, d->nr);
	}
	return read_online_cpus(d) ? NULL : d;
}

/* Every task of the tree in the root's CPU namespace, which it does not change. */
static int cpu_check(struct dump_ctx *dc, struct dtask *t)
{
	struct cpu_ns_dump *d = dc->shared[PART_CPU];
	uint64_t ns, kids;
	char buf[64];
	int i;

	if (!d) {
		d = tree_cpus(dc, t);
		if (!d)
			return -1;
	}
	if (!d->ns)
		return 0;
	for (i = 0; i < t->nr_threads; i++) {
		ns = proc_ns_id(t->pid, t->th[i].tid, "cpu");
		kids = proc_ns_id(t->pid, t->th[i].tid, "cpu_for_children");
		if (!ns || !kids)
			return -1;
		if (i)
			snprintf(buf, sizeof(buf), "Thread %d of task %d", t->th[i].tid, t->pid);
		else
			snprintf(buf, sizeof(buf), "Task %d", t->pid);
		if (ns != d->ns) {
			pr_err("%s is in CPU namespace cpu:[%lu], not in the root's (cpu:[%lu]); "
			       "nested CPU namespaces are not supported", buf, ns, d->ns);
			return -1;
		}
		if (kids != ns) {
			pr_err("%s unshared a CPU namespace: its children are born into "
			       "cpu:[%lu], not its own; nested CPU namespaces are not "
			       "supported", buf, kids);
			return -1;
		}
	}
	return 0;
}

static void cpu_dump_free(struct dump_ctx *dc)
{
	struct cpu_ns_dump *d = dc->shared[PART_CPU];

	if (d) {
		free(d->real);
		free(d->online_str);
		cpus_free(&d->online);
	}
	free(d);
	dc->shared[PART_CPU] = NULL;
}

static int read_affinity(pid_t tid, struct cpus *c)
{
	size_t bytes = 128;
	long n;

	for (;;) {
		if (cpus_grow(c, bytes / 8))
			return -1;
		/* the raw call says how many bytes the kernel's mask has */
		n = syscall(SYS_sched_getaffinity, tid, bytes, c->w);
		if (n >= 0)
			break;
		if (errno != EINVAL || bytes >= MAX_WORDS * 8) {
			pr_perror("Thread %d: can't read its CPU affinity", tid);
			return -1;
		}
		bytes *= 2;
	}
	c->nw = n / 8;
	while (c->nw && !c->w[c->nw - 1])
		c->nw--;
	return 0;
}

static int read_xstate_bv(pid_t tid, CpuThread *th)
{
	size_t len;
	void *xs;

	if (ptrace_get_xstate(tid, &xs, &len))
		return -1;
	th->has_xstate_bv = th->has_xstate_size = 1;
	th->xstate_size = len;
	th->xstate_bv = XSTATE_LEGACY;
	if (len >= XSTATE_BV_OFF + 8)
		memcpy(&th->xstate_bv, (char *)xs + XSTATE_BV_OFF, 8);
	free(xs);
	return 0;
}

/* The host's CPU, once for the tree, with what every task's xstate used. */
static int cpu_dump_tree(struct dump_ctx *dc)
{
	struct cpu_ns_dump *d = dc->shared[PART_CPU];
	struct cpuinfo_host h;
	int ret = -1;

	if (!d)
		return 0;
	if (cpuinfo_host_read(&h, d->online_str))
		goto out;
	h.e.has_xfeatures_used = 1;
	h.e.xfeatures_used = dump_xstate_used;
	ret = img_write(dc->dirfd, IMG_CPUINFO, 0, &h.e.base);
out:
	cpu_dump_free(dc);
	return ret;
}

static int cpu_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct cpu_ns_dump *d = dc->shared[PART_CPU];
	CpuEntry e = CPU_ENTRY__INIT;
	CpuThread *th, **pth;
	struct cpus real = { 0 }, *aff;
	int i, ret = -1;

	th = xzalloc(t->nr_threads * sizeof(*th));
	pth = xzalloc(t->nr_threads * sizeof(*pth));
	aff = xzalloc(t->nr_threads * sizeof(*aff));
	if (!th || !pth || !aff)
		goto out;
	if (d->nr) {
		e.ns_cpus = d->real;
		e.n_ns_cpus = d->nr;
	}
	for (i = 0; i < t->nr_threads; i++) {
		cpu_thread__init(&th[i]);
		th[i].tid = t->ns_tids[i];
		if (d->nr) {
			cpus_free(&real);
			if (read_affinity(t->tids[i], &real) || to_virtual(d, &real, &aff[i]))
				goto out;
		} else if (read_affinity(t->tids[i], &aff[i])) {
			goto out;
		}
		if (read_xstate_bv(t->tids[i], &th[i]))
			goto out;
		th[i].affinity = aff[i].w;
		th[i].n_affinity = aff[i].nw;
		th[i].has_affinity_all = 1;
		th[i].affinity_all = cpus_subset(&d->online, &aff[i]);
		dump_xstate_used |= th[i].xstate_bv;
		pth[i] = &th[i];
	}
	e.threads = pth;
	e.n_threads = t->nr_threads;
	if (!cpu_use_read(t, &e))
		ret = img_write(dc->dirfd, IMG_CPU, t->ns_pid, &e.base);
out:
	cpu_use_free(&e);
	for (i = 0; aff && i < t->nr_threads; i++)
		cpus_free(&aff[i]);
	cpus_free(&real);
	free(aff);
	free(pth);
	free(th);
	return ret;
}

/* ------------------------------------------------------------- restore */

struct cpu_rst {
	CpuEntry *e;
	struct cpus *set;	/* per thread of e: its affinity here; none: every CPU */
	int warned;
};

/* The tree's CPU namespace, as the first task's image gives it (rc->shared). */
struct cpu_ns_rst {
	int loaded;
	int nr;			/* virtual CPUs; 0: the tree had no namespace */
	uint32_t *dumped;	/* virtual CPU v ran on CPU dumped[v] */
	int make;		/* criu makes it (else --cpu-ns=ignore or none) */
	int *here;		/* ... backed by CPU here[v] (criu's numbers) */
	/* read once for the whole tree: CPUID is slow (a VM exit each) */
	struct cpus online;	/* the online CPUs here */
	CpuinfoEntry *img;	/* cpuinfo.img */
	struct cpuinfo_host *host;	/* this CPU */
};

struct cpu_map {
	int nr;
	struct { int src, dst; } *m;
};

static int map_lookup(const struct cpu_map *map, int cpu)
{
	int i;

	for (i = 0; i < map->nr; i++)
		if (map->m[i].src == cpu)
			return map->m[i].dst;
	return -1;
}

static int parse_map(const char *arg, const struct cpus *online, struct cpu_map *map)
{
	char *copy = xstrdup(arg), *tok, *save = NULL, *end, buf[256];
	long src, dst;
	int ret = -1;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		src = strtol(tok, &end, 10);
		if (end == tok || *end != ':' || src < 0 || src >= MAX_CPUS)
			goto bad;
		tok = end + 1;
		dst = strtol(tok, &end, 10);
		if (end == tok || *end || dst < 0 || dst >= MAX_CPUS)
			goto bad;
		if (map_lookup(map, src) >= 0) {
			pr_err("--cpu-map maps CPU %ld twice", src);
			goto out;
		}
		if (!cpus_isset(online, dst)) {
			pr_err("--cpu-map %ld:%ld: CPU %ld is not online here%s (%s: %s)",
			       src, dst, dst,
			       getenv(FAKE_ONLINE_ENV) ? "" : " or not in criu's cpuset",
			       getenv(FAKE_ONLINE_ENV) ? "online" : "usable",
			       cpus_str(online, buf, sizeof(buf)));
			goto out;
		}
		if (xgrow(map->m, map->nr))
			goto out;
		map->m[map->nr].src = src;
		map->m[map->nr++].dst = dst;
	}
	if (!map->nr) {
		tok = copy;
		goto bad;
	}
	ret = 0;
	goto out;
bad:
	pr_err("--cpu-map: '%s' is not SRC:DST[,SRC:DST...] (CPU numbers)", arg);
out:
	free(copy);
	return ret;
}

/* The online CPUs restore works with: sysfs, or the test hook. */
static int read_online(struct cpus *online)
{
	const char *fake = getenv(FAKE_ONLINE_ENV);
	char *s = NULL;
	int ret;

	if (fake) {
		pr_info("Online CPUs taken from %s: %s", FAKE_ONLINE_ENV, fake);
	} else {
		s = cpuinfo_read_online();
		if (!s)
			return -1;
	}
	ret = cpus_parse(fake ? fake : s, online);
	if (ret)
		pr_err("Can't parse the online CPU list '%s'%s", fake ? fake : s,
		       fake ? " of " FAKE_ONLINE_ENV : "");
	free(s);
	return ret;
}

/* The @n-th online CPU, counting from 0. */
static int nth_cpu(const struct cpus *c, int n)
{
	int cpu = cpus_next(c, 0);

	while (n-- > 0)
		cpu = cpus_next(c, cpu + 1);
	return cpu;
}

static int map_thread(struct rtask *t, struct cpu_rst *r, const CpuThread *th,
		      const struct cpus *saved_set, struct cpus *out,
		      const struct cpus *online, const struct cpu_map *map)
{
	const struct cpus saved = *saved_set;
	struct cpus missing = { 0 };
	char s1[256], s2[256], s3[256], s4[256];
	int cpu, dst, nr_online = cpus_count(online), ret = -1;

	for (cpu = cpus_next(&saved, 0); cpu >= 0; cpu = cpus_next(&saved, cpu + 1)) {
		dst = map_lookup(map, cpu);
		if (dst >= 0) {
			pr_info("Task %d: thread %u: CPU %d is CPU %d here (--cpu-map)",
				t->pid, th->tid, cpu, dst);
		} else if (cpus_isset(online, cpu)) {
			dst = cpu;
		} else {
			if (cpus_set(&missing, cpu))
				goto out;
			if (map->nr) {
				pr_info("Task %d: thread %u: CPU %d is not online and not in "
					"--cpu-map: dropped", t->pid, th->tid, cpu);
				continue;
			}
			dst = nth_cpu(online, cpu % nr_online);
			pr_info("Task %d: thread %u: CPU %d is not online: CPU %d here "
				"(online CPU number %d mod %d)", t->pid, th->tid, cpu, dst,
				cpu, nr_online);
		}
		if (cpus_set(out, dst))
			goto out;
	}
	cpus_str(&saved, s1, sizeof(s1));
	cpus_str(online, s2, sizeof(s2));
	cpus_str(&missing, s3, sizeof(s3));
	cpus_str(out, s4, sizeof(s4));
	if (!cpus_count(out)) {
		pr_err("Task %d: thread %u: its affinity %s maps to no CPU here: CPUs %s are "
		       "neither online (online: %s) nor in --cpu-map", t->pid, th->tid,
		       s1, s3, s2);
		goto out;
	}
	if (cpus_count(&missing) && !r->warned++)
		pr_warn("Task %d: thread %u: CPUs %s of its affinity %s are not online here "
			"(online: %s); %s; it runs on CPUs %s", t->pid, th->tid, s3, s1, s2,
			map->nr ? "they are not in --cpu-map: dropped" :
			"each missing CPU n became online CPU number n mod their count "
			"(--cpu-map chooses)", s4);
	else if (strcmp(s1, s4))
		pr_info("Task %d: thread %u: affinity %s is %s here", t->pid, th->tid, s1, s4);
	ret = 0;
out:
	cpus_free(&missing);
	return ret;
}

/*
 * Without the namespace (--cpu-ns=ignore): a virtual affinity becomes the
 * CPUs it stood for at dump, and goes through the rules like any other.
 */
static int to_dumped(const struct cpu_ns_rst *ns, const struct cpus *virt, struct cpus *out)
{
	int v;

	for (v = cpus_next(virt, 0); v >= 0; v = cpus_next(virt, v + 1))
		if (cpus_set(out, ns->dumped[v]))
			return -1;
	return 0;
}

static int plan_affinity(struct rst_ctx *rc, struct rtask *t, struct cpu_rst *r)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];
	const struct cpus *online = &ns->online;
	struct cpus dumped = { 0 };
	struct cpu_map map = { 0 };
	size_t i;
	int ret = -1;

	r->set = xzalloc(r->e->n_threads * sizeof(*r->set));
	if (!r->set)
		return -1;
	if (ns->make) {
		/* same virtual CPUs, same numbers: nothing to map */
		for (i = 0; i < r->e->n_threads; i++) {
			CpuThread *th = r->e->threads[i];
			const struct cpus saved = { th->affinity, th->n_affinity };

			if (!th->affinity_all && cpus_copy(&r->set[i], &saved))
				return -1;
		}
		return 0;
	}
	if (!online->nw && read_online(&ns->online))
		return -1;
	if (rc->opts->cpu_map && parse_map(rc->opts->cpu_map, online, &map))
		goto out;
	for (i = 0; i < r->e->n_threads; i++) {
		CpuThread *th = r->e->threads[i];
		const struct cpus saved = { th->affinity, th->n_affinity };

		/* an unpinned thread stays unpinned, on any number of CPUs */
		if (th->affinity_all)
			continue;
		cpus_free(&dumped);
		if (ns->nr && to_dumped(ns, &saved, &dumped))
			goto out;
		if (map_thread(t, r, th, ns->nr ? &dumped : &saved, &r->set[i], online, &map))
			goto out;
	}
	ret = 0;
out:
	cpus_free(&dumped);
	free(map.m);
	return ret;
}

/*
 * The CPUs a namespace made here may hold: online ones that criu itself may
 * run on, as the kernel takes only CPUs of the writer's cpuset in a map
 * (criu's affinity is within its cpuset). The test hook's list is taken
 * as it is.
 */
static int read_usable(struct cpus *online)
{
	struct cpus mine = { 0 };
	char s1[256], s2[256];

	if (read_online(online))
		return -1;
	if (getenv(FAKE_ONLINE_ENV))
		return 0;
	if (read_affinity(0, &mine))
		return -1;
	if (!cpus_subset(online, &mine))
		pr_info("CPUs online: %s; criu may run on (its cpuset): %s",
			cpus_str(online, s1, sizeof(s1)), cpus_str(&mine, s2, sizeof(s2)));
	cpus_and(online, &mine);
	cpus_free(&mine);
	return 0;
}

/*
 * The real CPUs backing the namespace here, distinct as the kernel wants:
 * --cpu-map first, then a usable CPU (read_usable()) stays, then (without
 * --cpu-map) usable CPU number n mod count or the next free one after it.
 */
static int plan_ns(struct rst_ctx *rc, struct cpu_ns_rst *ns)
{
	struct cpus online = { 0 }, taken = { 0 };
	struct cpu_map map = { 0 };
	char s1[256], s2[256];
	int v, cpu, src, nr_online, moved = 0, ret = -1;

	if (read_usable(&online))
		return -1;
	if (rc->opts->cpu_map && parse_map(rc->opts->cpu_map, &online, &map))
		goto out;
	nr_online = cpus_count(&online);
	if (ns->nr > nr_online) {
		pr_err("The tree's CPU namespace has %d CPUs; only %d are online here and in "
		       "criu's cpuset (%s), and a CPU namespace needs distinct CPUs "
		       "(--cpu-ns=ignore restores without it)", ns->nr, nr_online,
		       cpus_str(&online, s1, sizeof(s1)));
		goto out;
	}
	ns->here = xmalloc(ns->nr * sizeof(*ns->here));
	if (!ns->here)
		goto out;
	for (v = 0; v < ns->nr; v++) {
		ns->here[v] = cpu = map_lookup(&map, ns->dumped[v]);
		if (cpu < 0)
			continue;
		if (cpus_isset(&taken, cpu)) {
			pr_err("--cpu-map puts two CPUs of the tree's CPU namespace onto CPU %d; "
			       "they must be distinct", cpu);
			goto out;
		}
		if (cpus_set(&taken, cpu))
			goto out;
	}
	for (v = 0; v < ns->nr; v++) {
		src = ns->dumped[v];
		if (ns->here[v] < 0 && cpus_isset(&online, src) && !cpus_isset(&taken, src)) {
			ns->here[v] = src;
			if (cpus_set(&taken, src))
				goto out;
		}
	}
	for (v = 0; v < ns->nr; v++) {
		src = ns->dumped[v];
		if (ns->here[v] >= 0)
			continue;
		if (map.nr) {
			pr_err("The tree's virtual CPU %d ran on CPU %d, which is %s here and not "
			       "in --cpu-map", v, src, cpus_isset(&online, src) ?
			       "taken by --cpu-map" : "not online (or not in criu's cpuset)");
			goto out;
		}
		cpu = nth_cpu(&online, src % nr_online);
		while (cpus_isset(&taken, cpu)) {
			cpu = cpus_next(&online, cpu + 1);
			if (cpu < 0)
				cpu = cpus_next(&online, 0);
		}
		ns->here[v] = cpu;
		if (cpus_set(&taken, cpu))
			goto out;
		moved++;
	}
	for (v = 0; v < ns->nr; v++)
		pr_info("CPU namespace: virtual CPU %d ran on CPU %u, runs on CPU %d here", v,
			ns->dumped[v], ns->here[v]);
	if (moved)
		pr_warn("%d CPU(s) of the tree's CPU namespace are not online here, not in "
			"criu's cpuset or not free (usable: %s); they run on CPUs %s (--cpu-map "
			"chooses); the tree still sees CPUs 0-%d", moved, cpus_str(&online, s1, sizeof(s1)),
			cpus_str(&taken, s2, sizeof(s2)), ns->nr - 1);
	ret = 0;
out:
	cpus_free(&online);
	cpus_free(&taken);
	free(map.m);
	return ret;
}

/* The first task sets the tree's CPU namespace; the others must agree. */
static int load_ns(struct rst_ctx *rc, struct rtask *t, CpuEntry *e)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];
	char buf[256];
	size_t i;

	if (!ns) {
		ns = rc->shared[PART_CPU] = xzalloc(sizeof(*ns));
		if (!ns)
			return -1;
	}
	if (ns->loaded) {
		if (e->n_ns_cpus != (size_t)ns->nr ||
		    memcmp(e->ns_cpus, ns->dumped, ns->nr * sizeof(*ns->dumped))) {
			pr_err("Task %d: image cpu is invalid: its CPU namespace is not the "
			       "other tasks'", t->pid);
			return -1;
		}
		return 0;
	}
	ns->loaded = 1;
	if (!e->n_ns_cpus)
		return 0;
	if (e->n_ns_cpus > MAX_CPUS) {
		pr_err("Task %d: image cpu is invalid: a CPU namespace of %zu CPUs", t->pid,
		       e->n_ns_cpus);
		return -1;
	}
	ns->nr = e->n_ns_cpus;
	ns->dumped = xmalloc(ns->nr * sizeof(*ns->dumped));
	if (!ns->dumped)
		return -1;
	for (i = 0; i < e->n_ns_cpus; i++) {
		if (e->ns_cpus[i] >= MAX_CPUS) {
			pr_err("Task %d: image cpu is invalid: CPU %u in its CPU namespace",
			       t->pid, e->ns_cpus[i]);
			return -1;
		}
		ns->dumped[i] = e->ns_cpus[i];
	}
	if (rc->opts->cpu_ns_ignore) {
		pr_warn("--cpu-ns=ignore: the tree's CPU namespace (%d CPUs) is not restored; "
			"its affinities are mapped to this machine's CPUs", ns->nr);
		return 0;
	}
	if (!have_cpu_ns()) {
		snprintf(buf, sizeof(buf), "%u", ns->dumped[0]);
		for (i = 1; i < (size_t)ns->nr && strlen(buf) < sizeof(buf) - 16; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ",%u",
				 ns->dumped[i]);
		pr_err("The tree ran in a CPU namespace (%d virtual CPUs on CPUs %s) and this "
		       "kernel has no CPU namespaces (kernel/README.md); --cpu-ns=ignore "
		       "restores without it", ns->nr, buf);
		return -1;
	}
	ns->make = 1;
	return plan_ns(rc, ns);
}

/* cpuinfo.img and this CPU, once for the tree. */
static int load_cpuinfo(struct rst_ctx *rc, struct rtask *t, struct cpu_ns_rst *ns)
{
	int ret;

	if (ns->host)
		return 0;
	ret = img_read(rc->dirfd, IMG_CPUINFO, 0, (void **)&ns->img, 1);
	if (ret <= 0) {
		if (!ret)
			pr_err("Task %d: cpuinfo.img is missing, the CPU can't be checked; "
			       "--cpu-cap=none skips the check", t->pid);
		return -1;
	}
	if (cpuinfo_validate(ns->img))
		return -1;
	ns->host = xmalloc(sizeof(*ns->host));
	if (!ns->host || cpuinfo_host_read(ns->host, NULL)) {
		free(ns->host);
		ns->host = NULL;
		return -1;
	}
	return 0;
}

static int check_cpu(struct rst_ctx *rc, struct rtask *t, CpuEntry *e)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];
	struct cpu_need need = { .mask = e->cpu_mask, .jit = e->jit,
				 .hwcaps_level = e->hwcaps_level, .hwcaps_path = e->hwcaps_path };
	CpuinfoEntry *img;
	char why[2048];
	size_t i;
	int ret;

	if (load_cpuinfo(rc, t, ns))
		return -1;
	img = ns->img;
	for (i = 0; i < e->n_threads; i++)
		need.xfeatures |= e->threads[i]->xstate_bv;
	ret = cpuinfo_compare_host(img, ns->host, &need, rc->opts->cpu_cap, why, sizeof(why));
	if (ret > 0) {
		pr_err("Task %d needs what this CPU lacks (dumped on %s, x86-64-v%d; this CPU "
		       "x86-64-v%d): %s; --cpu-cap=none skips the checks", t->pid,
		       img->model_name ? img->model_name : img->vendor,
		       img->has_x86_64_level ? (int)img->x86_64_level : cpuinfo_level(img),
		       cpuinfo_level(&ns->host->e), why);
		ret = -1;
	} else if (!ret && need.excused[0]) {
		pr_info("Task %d: this CPU lacks %s, which its glibc was started without "
			"(glibc.cpu.hwcaps=%s)", t->pid, need.excused, e->cpu_mask);
	}
	return ret;
}

static int validate(struct rtask *t, CpuEntry *e)
{
	int own = 0;
	size_t i;

	for (i = 0; i < e->n_threads; i++) {
		CpuThread *th = e->threads[i];
		const struct cpus saved = { th->affinity, th->n_affinity };

		if (th->n_affinity > MAX_WORDS || (!th->affinity_all && !cpus_count(&saved))) {
			pr_err("Task %d: image cpu is invalid: thread %u has an affinity of "
			       "%zu words, %d CPUs", t->pid, th->tid, th->n_affinity,
			       cpus_count(&saved));
			return -1;
		}
		/* virtual numbers: below the namespace's count */
		if (e->n_ns_cpus && cpus_next(&saved, e->n_ns_cpus) >= 0) {
			pr_err("Task %d: image cpu is invalid: thread %u has CPU %d in its "
			       "affinity, the CPU namespace %zu CPUs", t->pid, th->tid,
			       cpus_next(&saved, e->n_ns_cpus), e->n_ns_cpus);
			return -1;
		}
		own |= th->tid == (uint32_t)t->pid;
	}
	if (!own) {
		pr_err("Task %d: image cpu is invalid: no entry for the task itself", t->pid);
		return -1;
	}
	return 0;
}

static int cpu_load(struct rst_ctx *rc, struct rtask *t)
{
	struct cpu_rst *r = xzalloc(sizeof(*r));

	if (!r)
		return -1;
	t->img[PART_CPU] = r;
	if (img_read(rc->dirfd, IMG_CPU, t->pid, (void **)&r->e, 0) < 0 || validate(t, r->e) ||
	    load_ns(rc, t, r->e))
		return -1;
	if (rc->opts->cpu_cap != CPU_CAP_NONE && check_cpu(rc, t, r->e))
		return -1;
	return plan_affinity(rc, t, r);
}

static int apply_affinity(struct rtask *t, pid_t who, const struct cpus *c)
{
	static uint64_t every[MAX_WORDS / 8];	/* 8192 CPUs: any real machine */
	char buf[256];

	if (!c->nw) {
		/* the kernel keeps the CPUs that exist and the cpuset allows */
		memset(every, 0xff, sizeof(every));
		if (sched_setaffinity(who, sizeof(every), (cpu_set_t *)every)) {
			pr_perror("Task %d: can't let thread %d run on every CPU", t->pid, who);
			return -1;
		}
		return 0;
	}
	if (sched_setaffinity(who, c->nw * sizeof(uint64_t), (cpu_set_t *)c->w)) {
		pr_perror("Task %d: can't set the CPU affinity of thread %d to %s", t->pid,
			  who, cpus_str(c, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

static const struct cpus *thread_set(struct cpu_rst *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->e->n_threads; i++)
		if (r->e->threads[i]->tid == (uint32_t)tid)
			return &r->set[i];
	return NULL;
}

/* In the new task, as itself: the main thread, before its threads exist. */
static int cpu_child(struct rst_ctx *rc, struct rtask *t)
{
	return apply_affinity(t, 0, thread_set(t->img[PART_CPU], t->pid));
}

/*
 * The other threads, from criu, once they exist. In the namespace criu
 * speaks real CPUs: a virtual set goes through the namespace's map.
 */
static int cpu_final(struct rst_ctx *rc, struct rtask *t)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];
	struct cpus real = { 0 };
	const struct cpus *c;
	int i, v, ret = 0;

	for (i = 1; i < t->nr_threads && !ret; i++) {
		c = thread_set(t->img[PART_CPU], t->tids[i]);
		if (!c)
			continue;
		if (ns && ns->make && c->nw) {
			cpus_free(&real);
			for (v = cpus_next(c, 0); v >= 0; v = cpus_next(c, v + 1))
				if (cpus_set(&real, ns->here[v]))
					ret = -1;
			c = &real;
		}
		if (!ret)
			ret = apply_affinity(t, t->host_tids[i], c);
	}
	cpus_free(&real);
	return ret;
}

/*
 * In criu, right before the root is forked: the namespace it is born in.
 * Its map can be written until the first task enters it, that fork.
 * criu may fork afterwards but not create threads (it creates none).
 */
static int cpu_prefork(struct rst_ctx *rc)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];
	size_t len = 0, size;
	char *buf;
	int v, fd, ret = -1;

	if (!ns || !ns->make)
		return 0;
	size = ns->nr * 24 + 1;
	buf = xmalloc(size);
	if (!buf)
		return -1;
	for (v = 0; v < ns->nr; v++)
		len += snprintf(buf + len, size - len, "%d %d\n", v, ns->here[v]);
	if (unshare(CLONE_NEWCPU)) {
		pr_perror("Can't create the tree's CPU namespace");
		goto out;
	}
	/* one write: the kernel takes the whole map at once */
	fd = open("/proc/self/cpu_map", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		pr_perror("Can't set the map of the tree's CPU namespace (%d CPUs)", ns->nr);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	pr_info("CPU namespace of %d CPUs made for the tree", ns->nr);
	ret = 0;
out:
	free(buf);
	return ret;
}

static void cpu_release(struct rtask *t)
{
	struct cpu_rst *r = t->img[PART_CPU];
	size_t i;

	if (!r)
		return;
	for (i = 0; r->set && i < r->e->n_threads; i++)
		cpus_free(&r->set[i]);
	free(r->set);
	img_free(IMG_CPU, r->e);
	free(r);
	t->img[PART_CPU] = NULL;
}

static void cpu_release_tree(struct rst_ctx *rc)
{
	struct cpu_ns_rst *ns = rc->shared[PART_CPU];

	if (!ns)
		return;
	free(ns->dumped);
	free(ns->here);
	cpus_free(&ns->online);
	img_free(IMG_CPUINFO, ns->img);
	free(ns->host);
	free(ns);
	rc->shared[PART_CPU] = NULL;
}

const struct part part_cpu = {
	.name = "cpu",
	.id = PART_CPU,
	.check = cpu_check,
	.dump = cpu_dump,
	.dump_tree = cpu_dump_tree,
	.load = cpu_load,
	.prefork = cpu_prefork,
	.child = cpu_child,
	.final = cpu_final,
	.release = cpu_release,
	.release_tree = cpu_release_tree,
};
