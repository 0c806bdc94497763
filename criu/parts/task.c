// SPDX-License-Identifier: GPL-2.0
/*
 * Small attributes of a task and of its threads: personality, the parent
 * death signal, the child subreaper flag, and per thread the name (comm),
 * the clear_child_tid address of set_tid_address(2), the robust futex list
 * and the rseq registration.
 *
 * Read from outside where the kernel shows them (/proc personality and
 * comm, get_robust_list(2), PTRACE_GET_RSEQ_CONFIGURATION); the prctl()
 * getters only answer for the calling thread, so they run inside it: the
 * tid address in each thread, the others in the leader.
 *
 * Restore sets the subreaper flag as the new task itself (child hook). The
 * rest waits for the batch, after the memory: the
 * per-thread pointers point into it, READ_IMPLIES_EXEC in the personality
 * would make its PROT_READ areas executable as they are mapped, and the
 * driver keeps the parent death signal at SIGKILL until criu traces the
 * task. The new task inherited criu's own clear_child_tid and robust list,
 * which point into criu's memory: both are always replaced, by zero if the
 * dumped task had none. criu's rseq registration is dropped by the driver
 * before the batch runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/ptrace.h"
#include "task.pb-c.h"

#define TASK_COMM_LEN		16
#define RSEQ_MIN_LEN		32	/* the original struct rseq */

struct task_dump_priv {
	int pdeath_idx, subreaper_idx;
	uint64_t pdeath, subreaper;	/* out buffers in the task */
	uint64_t *tidaddr;		/* per thread, in its own batch */
};

struct task_loaded {
	TaskEntry *te;
	pid_t criu;		/* the restoring process, the new task's parent */
};

/* ---------------------------------------------------------------- dump */

static struct task_dump_priv *dump_priv(struct dtask *t)
{
	struct task_dump_priv *p = t->priv[PART_TASK];

	if (p)
		return p;
	p = xzalloc(sizeof(*p));
	if (p)
		p->tidaddr = xzalloc(t->nr_threads * sizeof(uint64_t));
	if (!p || !p->tidaddr) {
		free(p);
		return NULL;
	}
	t->priv[PART_TASK] = p;
	return p;
}

static int task_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct task_dump_priv *p = dump_priv(t);

	if (!p)
		return -1;
	p->pdeath = batch_put(b, NULL, sizeof(int));
	p->subreaper = batch_put(b, NULL, sizeof(int));
	if (!p->pdeath || !p->subreaper)
		return -1;
	p->pdeath_idx = BATCH(b, "prctl(PR_GET_PDEATHSIG)", __NR_prctl,
			      PR_GET_PDEATHSIG, p->pdeath);
	p->subreaper_idx = BATCH(b, "prctl(PR_GET_CHILD_SUBREAPER)", __NR_prctl,
				 PR_GET_CHILD_SUBREAPER, p->subreaper);
	return p->pdeath_idx < 0 || p->subreaper_idx < 0 ? -1 : 0;
}

static int task_prepare_thread(struct dump_ctx *dc, struct dtask *t, int th, struct batch *b)
{
	struct task_dump_priv *p = dump_priv(t);

	if (!p)
		return -1;
	p->tidaddr[th] = batch_put(b, NULL, sizeof(uint64_t));
	if (!p->tidaddr[th] || BATCH(b, "prctl(PR_GET_TID_ADDRESS)", __NR_prctl,
				     PR_GET_TID_ADDRESS, p->tidaddr[th]) < 0)
		return -1;
	return 0;
}

static int read_personality(pid_t pid, uint32_t *pers)
{
	char path[64], *buf, *end;
	unsigned long v;

	snprintf(path, sizeof(path), "/proc/%d/personality", pid);
	buf = read_file(-1, path, NULL);
	if (!buf) {
		pr_perror("Task %d: can't read its personality", pid);
		return -1;
	}
	v = strtoul(buf, &end, 16);
	if (end == buf || v > UINT32_MAX) {
		pr_err("Task %d: can't parse %s", pid, path);
		free(buf);
		return -1;
	}
	free(buf);
	*pers = v;
	return 0;
}

/* comm may hold any byte but NUL; only the trailing newline is ours */
static char *read_comm(pid_t pid, pid_t tid)
{
	char path[64], *buf;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	buf = read_file(-1, path, &len);
	if (!buf) {
		pr_perror("Thread %d: can't read its name", tid);
		return NULL;
	}
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return buf;
}

/* The start time where the kernel can set it again (kernel/ patches). */
static int read_start_time(pid_t pid, pid_t tid, uint64_t *ns)
{
	char path[64], *buf;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/start_time", pid, tid);
	buf = read_file(-1, path, NULL);
	if (!buf)
		return -1;
	*ns = strtoull(buf, NULL, 10);
	free(buf);
	return 0;
}

static int fill_thread(pid_t pid, pid_t tid, TaskThread *th, RseqEntry *rs)
{
	struct proc_stat st;
	struct ptrace_rseq_conf rc;
	struct robust_list_head *head;
	size_t len;
	int ret;

	th->tid = tid;
	th->comm = read_comm(pid, tid);
	if (!th->comm)
		return -1;
	if (!proc_read_stat(pid, tid, &st)) {
		th->has_start_ticks = 1;
		th->start_ticks = st.starttime;
	}
	if (!read_start_time(pid, tid, &th->start_time_ns))
		th->has_start_time_ns = 1;
	if (syscall(SYS_get_robust_list, tid, &head, &len)) {
		pr_perror("Thread %d: can't read its robust futex list", tid);
		return -1;
	}
	th->robust_list = (uintptr_t)head;
	th->robust_list_len = len;
	ret = ptrace_get_rseq(tid, &rc);
	if (ret < 0)
		return -1;
	if (ret == 0 && rc.rseq_abi_pointer) {
		rs->ptr = rc.rseq_abi_pointer;
		rs->len = rc.rseq_abi_size;
		rs->flags = rc.flags;
		rs->sig = rc.signature;
		th->rseq = rs;
	}
	return 0;
}

static int task_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct task_dump_priv *p = t->priv[PART_TASK];
	TaskEntry te = TASK_ENTRY__INIT;
	TaskThread *th = NULL, **pth = NULL;
	RseqEntry *rs = NULL;
	int i, ret = -1;

	if (read_personality(t->pid, &te.personality))
		goto out;
	te.pdeath_sig = *(int *)batch_local(b, p->pdeath);
	te.child_subreaper = !!*(int *)batch_local(b, p->subreaper);
	th = xzalloc(t->nr_threads * sizeof(*th));
	pth = xzalloc(t->nr_threads * sizeof(*pth));
	rs = xzalloc(t->nr_threads * sizeof(*rs));
	if (!th || !pth || !rs)
		goto out;
	for (i = 0; i < t->nr_threads; i++) {
		task_thread__init(&th[i]);
		rseq_entry__init(&rs[i]);
		pth[i] = &th[i];
		if (fill_thread(t->pid, t->tids[i], &th[i], &rs[i]))
			goto out;
		th[i].tid = t->ns_tids[i];
		th[i].tid_address = *(uint64_t *)batch_local(&t->th[i].b, p->tidaddr[i]);
	}
	te.threads = pth;
	te.n_threads = t->nr_threads;
	ret = img_write(dc->dirfd, IMG_TASK, t->ns_pid, &te.base);
out:
	for (i = 0; th && i < t->nr_threads; i++)
		free(th[i].comm);
	free(th);
	free(pth);
	free(rs);
	free(p->tidaddr);
	free(p);
	t->priv[PART_TASK] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static const char *thread_invalid(const TaskThread *th)
{
	const RseqEntry *rs = th->rseq;

	if (strlen(th->comm) >= TASK_COMM_LEN)
		return "a name longer than 15 bytes";
	if (th->robust_list_len != sizeof(struct robust_list_head))
		return "a robust list of a foreign size";
	if (rs && rs->ptr && (rs->len < RSEQ_MIN_LEN || rs->ptr % RSEQ_MIN_LEN || rs->flags))
		return "an rseq area of bad size, alignment or flags";
	return NULL;
}

static int task_load(struct rst_ctx *rc, struct rtask *t)
{
	struct task_loaded *l = xzalloc(sizeof(*l));
	const char *why = NULL;
	TaskEntry *te;
	size_t i;

	if (!l)
		return -1;
	t->img[PART_TASK] = l;
	l->criu = getpid();
	if (img_read(rc->dirfd, IMG_TASK, t->pid, (void **)&l->te, 0) < 0)
		return -1;
	te = l->te;
	if (te->personality == 0xffffffff)
		why = "personality 0xffffffff only queries";
	else if (te->pdeath_sig >= _NSIG)
		why = "the parent death signal is out of range";
	else if (te->n_threads != (size_t)t->nr_threads)
		why = "its threads are not the tree's";
	for (i = 0; !why && i < te->n_threads; i++) {
		why = thread_invalid(te->threads[i]);
		if (!why && te->threads[i]->tid != (uint32_t)t->tids[i])
			why = "its threads are not the tree's";
	}
	if (why) {
		pr_err("Task %d: image task is invalid: %s", t->pid, why);
		return -1;
	}
	for (i = 0; i < te->n_threads; i++) {
		TaskThread *th = te->threads[i];
		struct rst_range *w;

		if (!th->rseq || !th->rseq->ptr)
			continue;
		/* the kernel writes the rseq area once the executor's rseq() returns */
		w = xpush(t->written, t->nr_written);
		if (!w)
			return -1;
		w->start = th->rseq->ptr;
		w->end = th->rseq->ptr + max(th->rseq->len, 32U);
	}
	t->batch_entries += 5;
	t->batch_data += TASK_COMM_LEN;
	t->thread_entries += 4;
	t->thread_data += TASK_COMM_LEN;
	return 0;
}

static int task_child(struct rst_ctx *rc, struct rtask *t)
{
	struct task_loaded *l = t->img[PART_TASK];
	TaskEntry *te = l->te;

	if (prctl(PR_SET_CHILD_SUBREAPER, te->child_subreaper, 0, 0, 0)) {
		pr_perror("Task %d: can't set its subreaper flag", t->pid);
		return -1;
	}
	return 0;
}

static int task_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct task_loaded *l = t->img[PART_TASK];

	/* after the memory: READ_IMPLIES_EXEC would make its PROT_READ areas executable */
	if (BATCH(b, "personality", __NR_personality, l->te->personality) < 0)
		return -1;
	/* not in the child hook: until the batch, the driver's SIGKILL is armed */
	if (!l->te->pdeath_sig)
		return 0;
	if (BATCH(b, "prctl(PR_SET_PDEATHSIG)", __NR_prctl, PR_SET_PDEATHSIG,
		  l->te->pdeath_sig) < 0)
		return -1;
	/* the dumped parent is gone: criu is the parent now, and -d ends it */
	/* (a pid namespace's init sees a parent outside it, criu, as 0) */
	if (rc->opts->restore_detached && (getppid() == l->criu || !getppid()))
		pr_warn("Task %d: its parent death signal %u will fire when criu exits",
			t->pid, l->te->pdeath_sig);
	return 0;
}

/* What each thread sets for itself: its name and its own pointers. */
static int task_thread_batch(struct rst_ctx *rc, struct rtask *t, int i, struct batch *b)
{
	TaskThread *th = ((struct task_loaded *)t->img[PART_TASK])->te->threads[i];
	uint64_t name = batch_put(b, th->comm, strlen(th->comm) + 1);

	if (!name || BATCH(b, "prctl(PR_SET_NAME)", __NR_prctl, PR_SET_NAME, name) < 0 ||
	    BATCH(b, "set_tid_address", __NR_set_tid_address, th->tid_address) < 0 ||
	    BATCH(b, "set_robust_list", __NR_set_robust_list, th->robust_list,
		  th->robust_list_len) < 0)
		return -1;
	if (th->rseq && th->rseq->ptr &&
	    BATCH(b, "rseq registration", __NR_rseq, th->rseq->ptr, th->rseq->len, 0,
		  th->rseq->sig) < 0)
		return -1;
	return 0;
}

/*
 * The start time, where the kernel lets criu set it (kernel/ patches):
 * after the task exists in its time namespace, before it runs again.
 */
static int task_final(struct rst_ctx *rc, struct rtask *t)
{
	TaskEntry *te = ((struct task_loaded *)t->img[PART_TASK])->te;
	static int said;
	char path[64], buf[32];
	size_t i;
	int fd, len;

	for (i = 0; i < te->n_threads; i++) {
		if (!te->threads[i]->has_start_time_ns)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/start_time", t->host_pid,
			 t->host_tids[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			if (!said++)
				pr_info("This kernel can't set start times: /proc/PID/stat "
					"starttime of restored tasks will differ");
			return 0;
		}
		len = snprintf(buf, sizeof(buf), "%lu", te->threads[i]->start_time_ns);
		if (fd < 0 || write(fd, buf, len) != len) {
			pr_perror("Task %d: can't set the start time of thread %d", t->pid,
				  t->tids[i]);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static void task_release(struct rtask *t)
{
	struct task_loaded *l = t->img[PART_TASK];

	if (!l)
		return;
	img_free(IMG_TASK, l->te);
	free(l);
	t->img[PART_TASK] = NULL;
}

const struct part part_task = {
	.name = "task",
	.id = PART_TASK,
	.prepare = task_prepare,
	.prepare_thread = task_prepare_thread,
	.dump = task_dump,
	.load = task_load,
	.child = task_child,
	.batch = task_batch,
	.thread_batch = task_thread_batch,
	.final = task_final,
	.release = task_release,
};
