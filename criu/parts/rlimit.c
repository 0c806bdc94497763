// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits of a task.
 *
 * Dump reads /proc/PID/limits: prlimit() on a task of another user needs
 * CAP_SYS_RESOURCE, the file does not.
 *
 * Restore sets them in the batch, not in the child hook: the hooks after
 * ours still open files and move them above fd_base, and allocate memory,
 * which a low RLIMIT_NOFILE, RLIMIT_AS or RLIMIT_DATA would refuse. Once
 * the batch runs nothing opens files any more.
 *
 * Raising a hard limit above criu's needs CAP_SYS_RESOURCE, which criu may
 * lack. Rather than guess, the batch first sets what surely works (criu's
 * hard limit, the soft one capped by it), then tries the dumped pair,
 * allowed to fail. The final hook compares /proc/PID/limits with the image
 * and names each limit that stayed lower.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "rlimit.pb-c.h"

static const char *const rlimit_names[RLIM_NLIMITS] = {
	[RLIMIT_CPU] = "RLIMIT_CPU",		[RLIMIT_FSIZE] = "RLIMIT_FSIZE",
	[RLIMIT_DATA] = "RLIMIT_DATA",		[RLIMIT_STACK] = "RLIMIT_STACK",
	[RLIMIT_CORE] = "RLIMIT_CORE",		[RLIMIT_RSS] = "RLIMIT_RSS",
	[RLIMIT_NPROC] = "RLIMIT_NPROC",	[RLIMIT_NOFILE] = "RLIMIT_NOFILE",
	[RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK",	[RLIMIT_AS] = "RLIMIT_AS",
	[RLIMIT_LOCKS] = "RLIMIT_LOCKS",	[RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
	[RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE",	[RLIMIT_NICE] = "RLIMIT_NICE",
	[RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",	[RLIMIT_RTTIME] = "RLIMIT_RTTIME",
};

/* ---------------------------------------------------------------- dump */

static int rlimit_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct proc_rlimit lim[RLIM_NLIMITS];
	RlimitOne one[RLIM_NLIMITS], *pone[RLIM_NLIMITS];
	RlimitEntry re = RLIMIT_ENTRY__INIT;
	int i, nr;

	nr = proc_read_limits(t->pid, lim, RLIM_NLIMITS);
	if (nr < 0)
		return -1;
	for (i = 0; i < nr; i++) {
		rlimit_one__init(&one[i]);
		one[i].resource = lim[i].resource;
		one[i].cur = lim[i].cur;
		one[i].max = lim[i].max;
		pone[i] = &one[i];
	}
	re.limits = pone;
	re.n_limits = nr;
	return img_write(dc->dirfd, IMG_RLIMIT, t->ns_pid, &re.base);
}

/* ------------------------------------------------------------- restore */

static int rlimit_load(struct rst_ctx *rc, struct rtask *t)
{
	unsigned int seen = 0;
	RlimitEntry *re;
	RlimitOne *o;
	size_t i;

	if (img_read(rc->dirfd, IMG_RLIMIT, t->pid, (void **)&re, 0) < 0)
		return -1;
	t->img[PART_RLIMIT] = re;
	for (i = 0; i < re->n_limits; i++) {
		o = re->limits[i];
		if (o->resource >= RLIM_NLIMITS || (seen & (1U << o->resource)) ||
		    o->cur > o->max) {
			pr_err("Task %d: image rlimit is invalid: entry #%zu (resource %u, %lu/%lu)",
			       t->pid, i, o->resource, o->cur, o->max);
			return -1;
		}
		seen |= 1U << o->resource;
	}
	/* at most two prlimit64 calls and two pairs of values per limit */
	t->batch_entries += 2 * re->n_limits;
	t->batch_data += 2 * re->n_limits * (sizeof(struct rlimit) + 16);
	return 0;
}

static int queue_prlimit(struct batch *b, unsigned int res, uint64_t cur, uint64_t max,
			 int may_fail)
{
	struct rlimit want = { .rlim_cur = cur, .rlim_max = max };
	uint64_t addr;

	addr = batch_put(b, &want, sizeof(want));
	if (!addr || BATCH(b, "prlimit64 of a resource limit",
			   __NR_prlimit64 | (may_fail ? SC_MAY_FAIL : 0),
			   0, res, addr, 0) < 0)
		return -1;
	return 0;
}

static int rlimit_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	RlimitEntry *re = t->img[PART_RLIMIT];
	struct rlimit now;
	RlimitOne *o;
	uint64_t cur;
	size_t i;

	for (i = 0; i < re->n_limits; i++) {
		o = re->limits[i];
		if (getrlimit(o->resource, &now)) {
			pr_perror("Task %d: can't read %s", t->pid, rlimit_names[o->resource]);
			return -1;
		}
		if (now.rlim_cur == o->cur && now.rlim_max == o->max)
			continue;
		if (o->max <= now.rlim_max) {
			if (queue_prlimit(b, o->resource, o->cur, o->max, 0))
				return -1;
			continue;
		}
		cur = min(o->cur, (uint64_t)now.rlim_max);
		if (cur != now.rlim_cur &&
		    queue_prlimit(b, o->resource, cur, now.rlim_max, 0))
			return -1;
		if (queue_prlimit(b, o->resource, o->cur, o->max, 1))
			return -1;
	}
	return 0;
}

static const char *limit_str(uint64_t v, char *buf, size_t len)
{
	if (v == RLIM_INFINITY)
		return "unlimited";
	snprintf(buf, len, "%lu", v);
	return buf;
}

/* Names each limit the batch could not raise as far as the image says. */
static int rlimit_final(struct rst_ctx *rc, struct rtask *t)
{
	RlimitEntry *re = t->img[PART_RLIMIT];
	struct proc_rlimit lim[RLIM_NLIMITS];
	char b[4][24];
	RlimitOne *o;
	size_t i;
	int j, nr;

	nr = proc_read_limits(t->host_pid, lim, RLIM_NLIMITS);
	if (nr < 0)
		return -1;
	for (i = 0; i < re->n_limits; i++)
		for (j = 0; j < nr; j++) {
			o = re->limits[i];
			if (lim[j].resource != (int)o->resource ||
			    (lim[j].cur == o->cur && lim[j].max == o->max))
				continue;
			pr_warn("Task %d: %s is %s/%s, not %s/%s as dumped "
				"(raising a hard limit needs CAP_SYS_RESOURCE)",
				t->pid, rlimit_names[o->resource],
				limit_str(lim[j].cur, b[0], sizeof(b[0])),
				limit_str(lim[j].max, b[1], sizeof(b[1])),
				limit_str(o->cur, b[2], sizeof(b[2])),
				limit_str(o->max, b[3], sizeof(b[3])));
		}
	return 0;
}

static void rlimit_release(struct rtask *t)
{
	img_free(IMG_RLIMIT, t->img[PART_RLIMIT]);
	t->img[PART_RLIMIT] = NULL;
}

const struct part part_rlimit = {
	.name = "rlimit",
	.id = PART_RLIMIT,
	.dump = rlimit_dump,
	.load = rlimit_load,
	.batch = rlimit_batch,
	.final = rlimit_final,
	.release = rlimit_release,
};
