// SPDX-License-Identifier: GPL-2.0
/*
 * Attributes of a process the kernel keeps outside its memory and its
 * credentials: the OOM killer's oom_score_adj, the audit loginuid, the
 * membarrier registrations of its memory, and mlockall(MCL_FUTURE), the
 * lock every area mapped later gets.
 *
 * Dump reads the first two from /proc. The other two only the task can
 * show, in its batch: MEMBARRIER_CMD_GET_REGISTRATIONS (Linux 6.3) names
 * the registrations (older kernels: see membarrier_of()); no call reads the mm's default flags, so the batch
 * maps one page and looks at how the kernel treated it. MCL_FUTURE locks
 * it, and MADV_DONTNEED refuses a locked area (EINVAL); without
 * MCL_ONFAULT the lock also filled it (mincore). The page is unmapped in
 * the same batch.
 *
 * Restore, in the order the kernel allows:
 *   loginuid      the new task itself (the kernel takes it from the task
 *                 only), as criu, before the credentials: it needs
 *                 CAP_AUDIT_CONTROL
 *   membarrier,   in the batch, after the memory is back: MCL_FUTURE
 *   MCL_FUTURE    would lock the areas the restore maps
 *   oom_score_adj from outside, once the task exists (final). The tree
 *                 inherits criu's value and floor: raising it is always
 *                 allowed, lowering it below the floor needs
 *                 CAP_SYS_RESOURCE. The load tries the value on criu
 *                 itself first and refuses, before any task exists, what
 *                 the kernel would refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/caps.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task_props.pb-c.h"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT			4	/* Linux 4.4 */
#endif
#define MEMBARRIER_CMD_QUERY		0
#define MEMBARRIER_CMD_GET_REGISTRATIONS (1 << 9)	/* Linux 6.3 */
/* the REGISTER_* commands: global expedited, private expedited, sync-core, rseq */
#define MEMBARRIER_REGISTERS		((1 << 2) | (1 << 4) | (1 << 6) | (1 << 8))
#define MEMBARRIER_REGISTER_GLOBAL	(1 << 2)
#define MEMBARRIER_REGISTER_PRIVATE	(1 << 4)
#define CAP_AUDIT_CONTROL_NR		30
#define CAP_SYS_RESOURCE_NR		24
#define OOM_ADJ_MIN			-1000
#define OOM_ADJ_MAX			1000
#define LOGINUID_UNSET			4294967295U

#define MCL_UNKNOWN			-2	/* mcl_future() could not tell */

struct props_dump_priv {
	int mb_idx, query_idx, map_idx, advise_idx, core_idx;
	uint64_t vec;		/* mincore's byte, in the task */
};

/* ---------------------------------------------------------------- dump */

static int parse_long(char *text, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(text, &end, 10);
	return end == text || errno ? -1 : 0;
}

/* @pid 0: the caller itself (a new task's /proc may not show its pid so) */
static int read_long(pid_t pid, const char *name, long *v)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	return proc_read(path, parse_long, v);
}

static int props_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct props_dump_priv *p = xzalloc(sizeof(*p));
	long page = sysconf(_SC_PAGESIZE);
	uint64_t at;

	if (!p)
		return -1;
	t->priv[PART_TASK_PROPS] = p;
	p->vec = batch_put(b, NULL, 1);
	if (!p->vec)
		return -1;
	p->mb_idx = BATCH(b, "membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS)",
			  __NR_membarrier | SC_MAY_FAIL, MEMBARRIER_CMD_GET_REGISTRATIONS, 0, 0);
	p->query_idx = BATCH(b, "membarrier(MEMBARRIER_CMD_QUERY)", __NR_membarrier | SC_MAY_FAIL,
			     MEMBARRIER_CMD_QUERY, 0, 0);
	p->map_idx = BATCH(b, "mmap of a page to see MCL_FUTURE", __NR_mmap | SC_MAY_FAIL,
			   0, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->mb_idx < 0 || p->query_idx < 0 || p->map_idx < 0)
		return -1;
	at = batch_ret_remote(b, p->map_idx);
	p->advise_idx = BATCH(b, "madvise(MADV_DONTNEED) of that page",
			      __NR_madvise | SC_MAY_FAIL | SC_ARG0_AT, at, page, MADV_DONTNEED);
	p->core_idx = BATCH(b, "mincore of that page", __NR_mincore | SC_MAY_FAIL | SC_ARG0_AT,
			    at, page, p->vec);
	if (p->advise_idx < 0 || p->core_idx < 0 ||
	    BATCH(b, "munmap of that page", __NR_munmap | SC_MAY_FAIL | SC_ARG0_AT,
		  at, page) < 0)
		return -1;
	return 0;
}

/*
 * mlockall()'s flags for areas to come, as the batch's page showed them;
 * -1 on error, MCL_UNKNOWN where the page could not be mapped.
 */
static int mcl_future(struct dtask *t, struct batch *b, struct props_dump_priv *p)
{
	int64_t map = batch_entry(b, p->map_idx)->ret;
	int64_t adv = batch_entry(b, p->advise_idx)->ret;
	uint8_t *vec = batch_local(b, p->vec);

	/* a locked page past RLIMIT_MEMLOCK is refused at mmap */
	if (map == -EAGAIN) {
		pr_warn("Task %d: MCL_FUTURE with its locked memory at RLIMIT_MEMLOCK: "
			"MCL_ONFAULT can't be told, taken as absent", t->pid);
		return MCL_FUTURE;
	}
	/* a task at its RLIMIT_AS or map count: not worth failing its dump */
	if (map < 0 && map > -4096) {
		pr_warn("Task %d: can't map a page to look for MCL_FUTURE (%s): not kept",
			t->pid, strerror(-map));
		return MCL_UNKNOWN;
	}
	if (adv == 0)
		return 0;
	if (adv != -EINVAL || batch_entry(b, p->core_idx)->ret) {
		pr_err("Task %d: can't tell whether MCL_FUTURE is set: madvise %s, mincore %s",
		       t->pid, strerror(adv < 0 ? -adv : 0),
		       strerror(-batch_entry(b, p->core_idx)->ret));
		return -1;
	}
	return MCL_FUTURE | (*vec & 1 ? 0 : MCL_ONFAULT);
}

/*
 * The registrations, or where the kernel can't list them (before 6.3) the
 * cheap ones it offers, registered again for good measure: a barrier the
 * task asks for then works, at the price of the IPIs other processes'
 * global expedited barriers send it. Sync-core and rseq ones, which cost
 * more, are left out.
 */
static int membarrier_of(struct dtask *t, struct batch *b, struct props_dump_priv *p,
			 TaskPropsEntry *e)
{
	int64_t mb = batch_entry(b, p->mb_idx)->ret;
	int64_t query = batch_entry(b, p->query_idx)->ret;

	if (mb >= 0) {
		e->has_membarrier = 1;
		e->membarrier = mb;
		return 0;
	}
	if (mb != -EINVAL && mb != -ENOSYS) {
		pr_err("Task %d: membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS): %s", t->pid,
		       strerror(-mb));
		return -1;
	}
	if (query <= 0)
		return 0;	/* no membarrier at all: nothing registered */
	e->has_membarrier = 1;
	e->membarrier = query & (MEMBARRIER_REGISTER_GLOBAL | MEMBARRIER_REGISTER_PRIVATE);
	pr_warn("Task %d: the kernel can't list membarrier registrations: the expedited "
		"ones it offers (%#x) will be registered", t->pid, e->membarrier);
	return 0;
}

static int props_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct props_dump_priv *p = t->priv[PART_TASK_PROPS];
	TaskPropsEntry e = TASK_PROPS_ENTRY__INIT;
	char path[64];
	long v;
	int mcl, ret = -1;

	if (read_long(t->pid, "oom_score_adj", &v))
		goto out;
	e.has_oom_score_adj = 1;
	e.oom_score_adj = v;
	snprintf(path, sizeof(path), "/proc/%d/loginuid", t->pid);
	if (!access(path, F_OK)) {
		if (read_long(t->pid, "loginuid", &v))
			goto out;
		e.has_loginuid = 1;
		e.loginuid = v;
	}
	if (membarrier_of(t, b, p, &e))
		goto out;
	mcl = mcl_future(t, b, p);
	if (mcl < 0 && mcl != MCL_UNKNOWN)
		goto out;
	e.has_mcl_future = mcl >= 0;
	e.mcl_future = mcl >= 0 ? mcl : 0;
	ret = img_write(dc->dirfd, IMG_TASK_PROPS, t->ns_pid, &e.base);
out:
	free(p);
	t->priv[PART_TASK_PROPS] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static int write_text(const char *path, long v)
{
	char buf[32];
	int fd, len, ret;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld", v);
	ret = write(fd, buf, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * Whether oom_score_adj @want can be set on a task criu forks: tried on
 * criu itself, which the tree inherits it from, and put back (raising
 * is always allowed).
 */
static int oom_possible(pid_t pid, int want)
{
	long cur;

	if (read_long(0, "oom_score_adj", &cur))
		return -1;
	if (want >= cur || cap_have(CAP_SYS_RESOURCE_NR))
		return 0;
	if (write_text("/proc/self/oom_score_adj", want)) {
		pr_err("Task %d: can't restore oom_score_adj %d: lowering it below criu's "
		       "%ld needs CAP_SYS_RESOURCE, which criu lacks (%s)", pid, want, cur,
		       strerror(errno));
		return -1;
	}
	if (write_text("/proc/self/oom_score_adj", cur)) {
		pr_perror("Task %d: can't put criu's own oom_score_adj back to %ld", pid, cur);
		return -1;
	}
	return 0;
}

/*
 * LOGINUID_UNSET (no loginuid was set) is all a kernel without audit can
 * have: nothing to restore there
 */
static int loginuid_possible(pid_t pid, uint32_t want)
{
	long cur;

	if (access("/proc/self/loginuid", F_OK) && want == LOGINUID_UNSET)
		return 0;
	if (access("/proc/self/loginuid", F_OK)) {
		pr_err("Task %d: image task_props has loginuid %u, but this kernel has no "
		       "audit loginuid", pid, want);
		return -1;
	}
	if (read_long(0, "loginuid", &cur))
		return -1;
	if ((uint32_t)cur != want && !cap_have(CAP_AUDIT_CONTROL_NR)) {
		pr_err("Task %d: can't restore loginuid %u: setting it needs "
		       "CAP_AUDIT_CONTROL, which criu lacks", pid, want);
		return -1;
	}
	return 0;
}

static int membarrier_possible(pid_t pid, uint32_t want)
{
	long avail;

	if (want & ~MEMBARRIER_REGISTERS) {
		pr_err("Task %d: image task_props has unknown membarrier registrations %#x",
		       pid, want & ~MEMBARRIER_REGISTERS);
		return -1;
	}
	if (!want)
		return 0;
	avail = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (avail < 0 || (want & ~avail)) {
		pr_err("Task %d: can't restore membarrier registrations %#x: the kernel "
		       "offers %#lx", pid, want, avail < 0 ? 0 : avail);
		return -1;
	}
	return 0;
}

static int props_load(struct rst_ctx *rc, struct rtask *t)
{
	TaskPropsEntry *e;

	if (img_read(rc->dirfd, IMG_TASK_PROPS, t->pid, (void **)&e, 0) < 0)
		return -1;
	t->img[PART_TASK_PROPS] = e;
	if ((e->has_oom_score_adj &&
	     (e->oom_score_adj < OOM_ADJ_MIN || e->oom_score_adj > OOM_ADJ_MAX)) ||
	    (e->has_mcl_future && e->mcl_future && e->mcl_future != MCL_FUTURE &&
	     e->mcl_future != (MCL_FUTURE | MCL_ONFAULT))) {
		pr_err("Task %d: image task_props is invalid: oom_score_adj %d, mlockall %#x",
		       t->pid, e->oom_score_adj, e->mcl_future);
		return -1;
	}
	if (e->has_oom_score_adj && oom_possible(t->pid, e->oom_score_adj))
		return -1;
	if (e->has_loginuid && loginuid_possible(t->pid, e->loginuid))
		return -1;
	if (e->has_membarrier && membarrier_possible(t->pid, e->membarrier))
		return -1;
	t->batch_entries += 5;		/* four registrations, mlockall */
	return 0;
}

/* The kernel takes a loginuid only from the task itself. */
static int props_child(struct rst_ctx *rc, struct rtask *t)
{
	TaskPropsEntry *e = t->img[PART_TASK_PROPS];
	long cur;

	if (!e->has_loginuid ||
	    (e->loginuid == LOGINUID_UNSET && access("/proc/self/loginuid", F_OK)))
		return 0;
	if (read_long(0, "loginuid", &cur))
		return -1;
	if ((uint32_t)cur == e->loginuid)
		return 0;
	if (write_text("/proc/self/loginuid", e->loginuid)) {
		pr_perror("Task %d: can't set its loginuid to %u (it was %ld)", t->pid,
			  e->loginuid, cur);
		return -1;
	}
	return 0;
}

static int props_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	TaskPropsEntry *e = t->img[PART_TASK_PROPS];
	int bit;

	for (bit = 1; e->has_membarrier && bit <= (int)e->membarrier; bit <<= 1)
		if ((e->membarrier & bit) &&
		    BATCH(b, "membarrier registration", __NR_membarrier, bit, 0, 0) < 0)
			return -1;
	if (e->has_mcl_future && e->mcl_future &&
	    BATCH(b, "mlockall of the areas to come", __NR_mlockall, e->mcl_future) < 0)
		return -1;
	return 0;
}

static int props_final(struct rst_ctx *rc, struct rtask *t)
{
	TaskPropsEntry *e = t->img[PART_TASK_PROPS];
	char path[64];

	if (!e->has_oom_score_adj)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", t->host_pid);
	if (write_text(path, e->oom_score_adj)) {
		pr_perror("Task %d: can't set its oom_score_adj to %d%s", t->pid,
			  e->oom_score_adj, errno == EACCES ?
			  " (lowering it needs CAP_SYS_RESOURCE, which criu lacks)" : "");
		return -1;
	}
	return 0;
}

static void props_release(struct rtask *t)
{
	img_free(IMG_TASK_PROPS, t->img[PART_TASK_PROPS]);
	t->img[PART_TASK_PROPS] = NULL;
}

const struct part part_task_props = {
	.name = "task_props",
	.id = PART_TASK_PROPS,
	.prepare = props_prepare,
	.dump = props_dump,
	.load = props_load,
	.child = props_child,
	.batch = props_batch,
	.final = props_final,
	.release = props_release,
};
