// SPDX-License-Identifier: GPL-2.0
/*
 * The restore driver: read -> namespaces -> fork -> parts -> resume.
 *
 * The new task starts as a copy of criu, created with its old pid by
 * clone3(set_tid). As itself it sets up what ordinary code can (files,
 * cwd, limits...), builds a batch of system calls in a trampoline area
 * placed where neither criu nor the dumped task has memory, and stops.
 * criu then runs the batch inside it: that unmaps criu, maps the dumped
 * memory and reads the pages straight from the page store. Last, criu
 * removes the trampoline, loads the registers and lets the task go.
 * Until then the task is traced with PTRACE_O_EXITKILL: if criu dies, so
 * does the half-restored task, and nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "dump.h"
#include "image/image.h"
#include "parts/part.h"
#include "parts/timens.h"
#include "task/ptrace.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#define RSEQ_FLAG_UNREGISTER	1

/* Top of the trampoline: room for moving the vDSO areas through. */
#define AREA_RESERVE		(32 * PAGE_SIZE)
#define AREA_MIN_ADDR		(1ULL << 30)

/* Shared page between criu and the new task before it stops. */
struct child_report {
	int nr, max;
	size_t size;
	char error[1024];
};

static int task_uses(struct rtask *t, int fd)
{
	int lo = 0, hi = t->nr_task_fds - 1, mid;

	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (t->task_fds[mid] == fd)
			return 1;
		if (t->task_fds[mid] < fd)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

int rst_park_fd(struct rtask *t, int fd)
{
	int slot;

	if (fd < 0)
		return -1;
	while (t->next_slot >= 0 &&
	       (task_uses(t, t->next_slot) || fcntl(t->next_slot, F_GETFD) >= 0))
		t->next_slot--;
	slot = t->next_slot--;
	if (slot < 0 || dup3(fd, slot, O_CLOEXEC) < 0) {
		pr_perror("Task %d: no free fd slot for criu's fd %d", t->pid, fd);
		close(fd);
		return -1;
	}
	close(fd);
	return slot;
}

static int keep_private(struct rtask *t, int fd)
{
	int *n = xrealloc(t->priv_fds, (t->nr_priv_fds + 1) * sizeof(int));

	if (!n)
		return -1;
	t->priv_fds = n;
	t->priv_fds[t->nr_priv_fds++] = fd;
	return 0;
}

int rst_private_fd(struct rtask *t, int fd)
{
	fd = rst_park_fd(t, fd);
	if (fd >= 0 && keep_private(t, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* In the new task: close every fd but criu's private ones. */
static int close_others(struct rtask *t)
{
	int *keep, i, from = 0;

	keep = xmalloc(t->nr_priv_fds * sizeof(int));
	if (!keep)
		return -1;
	memcpy(keep, t->priv_fds, t->nr_priv_fds * sizeof(int));
	qsort(keep, t->nr_priv_fds, sizeof(int), cmp_int);
	for (i = 0; i <= t->nr_priv_fds; i++) {
		unsigned int to = i < t->nr_priv_fds ? (unsigned int)keep[i] - 1 : ~0U;

		if ((i == t->nr_priv_fds || keep[i] > from) &&
		    syscall(SYS_close_range, from, to, 0)) {
			pr_perror("Task %d: can't close criu's fds", t->pid);
			free(keep);
			return -1;
		}
		if (i < t->nr_priv_fds)
			from = keep[i] + 1;
	}
	free(keep);
	return 0;
}

/*
 * criu's fds go to the top of what the task may use: raise the soft
 * RLIMIT_NOFILE to the hard one (allowed without privileges; the rlimit
 * part puts the task's own back later) and start a little above the
 * task's highest fd, so the fd table does not grow to the hard limit.
 */
static int init_slots(struct rtask *t)
{
	struct rlimit rl;
	int top = t->nr_task_fds ? t->task_fds[t->nr_task_fds - 1] : 0;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	t->next_slot = min((uint64_t)max(top + 128, 1024), (uint64_t)rl.rlim_max - 1);
	return 0;
}

static int read_tree(struct rst_ctx *rc, struct rtask *t, PstreeTask **root)
{
	InventoryEntry *inv;
	PstreeEntry *pt;
	int ret = -1;

	if (img_read(rc->dirfd, IMG_INVENTORY, 0, (void **)&inv, 0) < 0)
		return -1;
	if (inv->fmt_version != IMG_FMT_VERSION) {
		pr_err("Images have format version %u; this criu reads version %u",
		       inv->fmt_version, IMG_FMT_VERSION);
		goto out;
	}
	if (img_read(rc->dirfd, IMG_PSTREE, 0, (void **)&pt, 0) < 0)
		goto out;
	if (pt->n_tasks != 1 || pt->tasks[0]->pid != inv->root_pid ||
	    pt->tasks[0]->n_threads != 1 || pt->tasks[0]->pid < 2 ||
	    pt->tasks[0]->pid > (1U << 22)) {
		pr_err("Image pstree.img does not describe one single-threaded task %u",
		       inv->root_pid);
		img_free(IMG_PSTREE, pt);
		goto out;
	}
	t->pid = inv->root_pid;
	*root = pt->tasks[0];
	pt->tasks[0] = NULL;
	pt->n_tasks = 0;
	img_free(IMG_PSTREE, pt);
	ret = 0;
out:
	img_free(IMG_INVENTORY, inv);
	return ret;
}

static int range_cmp(const void *a, const void *b)
{
	const struct rst_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A place for the trampoline that neither criu nor the task uses. */
static uint64_t pick_area(struct rtask *t, size_t size)
{
	struct proc_maps self;
	struct rst_range *all;
	uint64_t from = AREA_MIN_ADDR, found = 0;
	int i, nr;

	if (proc_read_maps(getpid(), 0, &self))
		return 0;
	nr = self.nr + t->nr_used;
	all = xmalloc(nr * sizeof(*all));
	if (!all)
		goto out;
	for (i = 0; i < self.nr; i++) {
		all[i].start = self.vma[i].start;
		all[i].end = self.vma[i].end;
	}
	memcpy(all + self.nr, t->used, t->nr_used * sizeof(*all));
	qsort(all, nr, sizeof(*all), range_cmp);
	for (i = 0; i < nr && !found; i++) {
		if (all[i].start >= from + size + PAGE_SIZE)
			found = from;
		from = max(from, all[i].end + PAGE_SIZE);
	}
	free(all);
out:
	proc_maps_free(&self);
	return found;
}

static void child_fail(struct child_report *rep)
{
	const char *e = log_first_error();

	snprintf(rep->error, sizeof(rep->error), "%s", e ? e : "unknown error");
	_exit(1);
}

static void child_main(struct rst_ctx *rc, struct rtask *t, PstreeTask *pt,
		       struct child_report *rep, pid_t criu)
{
	struct batch b;
	sigset_t all;
	void *area;
	int i, max;

	/* until criu traces us (and EXITKILL takes over), die with criu */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != criu)
		_exit(3);

	if (pt->sid == (uint32_t)t->pid ? setsid() < 0 :
	    (pt->pgid == (uint32_t)t->pid && setpgid(0, 0))) {
		pr_perror("Task %d: can't restore its session/group", t->pid);
		child_fail(rep);
	}
	/* criu's own fds move out of the task's way; everything else goes */
	if (init_slots(t))
		child_fail(rep);
	rc->dirfd = rst_private_fd(t, rc->dirfd);
	if (rc->dirfd < 0)
		child_fail(rep);
	if (log_fd() >= 0) {
		int lfd = rst_private_fd(t, dup(log_fd()));

		if (lfd >= 0)
			log_set_fd(lfd);
	}
	if (close_others(t))
		child_fail(rep);
	pr_debug("Task %d: started", t->pid);
	for (i = 0; i < PART_NR; i++) {
		if (parts[i]->child && parts[i]->child(rc, t))
			child_fail(rep);
		pr_debug("Task %d: %s done", t->pid, parts[i]->name);
	}
	area = mmap((void *)t->area, t->area_size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (area != (void *)t->area) {
		pr_perror("Task %d: can't map the trampoline at %#lx", t->pid, t->area);
		child_fail(rep);
	}
	max = 64 + t->batch_entries + t->nr_priv_fds;
	if (batch_init(&b, area, t->area, t->area_size - AREA_RESERVE, max))
		child_fail(rep);
	pr_debug("Task %d: trampoline mapped", t->pid);
	/* entry 0: criu's inherited rseq registration, filled in by the parent */
	if (BATCH(&b, "rseq unregistration", __NR_getpid) < 0 ||
	    BATCH(&b, "prctl(PR_SET_PDEATHSIG, 0)", __NR_prctl, PR_SET_PDEATHSIG, 0) < 0)
		child_fail(rep);
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->batch && parts[i]->batch(rc, t, &b))
			child_fail(rep);
	for (i = 0; i < t->nr_priv_fds; i++)
		if (BATCH(&b, "close of criu's fd", __NR_close, t->priv_fds[i]) < 0)
			child_fail(rep);
	pr_debug("Task %d: batch built", t->pid);
	rep->nr = b.nr;
	rep->max = b.max;
	rep->size = b.size;
	/*
	 * Nothing of the task's may run before it is whole, but SIGTRAP stays
	 * open: the executor's int3 would otherwise reset its handler.
	 */
	sigfillset(&all);
	sigdelset(&all, SIGTRAP);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
		pr_perror("Task %d: can't let criu trace it", t->pid);
		child_fail(rep);
	}
	raise(SIGSTOP);
	_exit(2);	/* never resumed here */
}

static pid_t fork_task(struct rst_ctx *rc, struct rtask *t, PstreeTask *pt,
		       struct child_report *rep)
{
	pid_t want = t->pid;
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&want,
		.set_tid_size = 1,
	};
	pid_t criu = getpid();
	long pid;

	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		child_main(rc, t, pt, rep, criu);
	if (pid < 0) {
		if (errno == EEXIST)
			pr_err("Task %d: can't restore, pid %d is in use", t->pid, t->pid);
		else
			pr_perror("Task %d: can't create it with its pid", t->pid);
		return -1;
	}
	return pid;
}

static int unregister_criu_rseq(struct rtask *t)
{
	struct ptrace_rseq_conf c;
	struct sc_entry e = { .nr = __NR_rseq };
	struct iovec l = { &e, sizeof(e) }, r;

	if (ptrace_get_rseq(t->pid, &c))
		return c.rseq_abi_pointer ? -1 : 0;
	if (!c.rseq_abi_pointer)
		return 0;
	e.args[0] = c.rseq_abi_pointer;
	e.args[1] = c.rseq_abi_size;
	e.args[2] = RSEQ_FLAG_UNREGISTER;
	e.args[3] = c.signature;
	r.iov_base = (void *)(t->area + PAGE_SIZE);	/* entry 0 */
	r.iov_len = sizeof(e);
	if (process_vm_writev(t->pid, &l, 1, &r, 1, 0) != sizeof(e)) {
		pr_perror("Task %d: can't write its trampoline", t->pid);
		return -1;
	}
	return 0;
}

/* Runs the task's batch; on failure names the step that failed. */
static int run_batch(struct rtask *t, struct child_report *rep,
		     struct user_regs_struct *base)
{
	struct batch b;
	struct iovec l, r;
	void *buf;
	int done, ret = -1;

	buf = xmalloc(rep->size);
	if (!buf)
		return -1;
	b.local = buf;
	b.remote = t->area;
	b.size = rep->size;
	b.nr = rep->nr;
	b.max = rep->max;
	done = executor_run(t->pid, base, &b, t->area + t->area_size - AREA_RESERVE);
	if (done < 0)
		goto out;
	if (done < b.nr) {
		l.iov_base = buf;
		l.iov_len = batch_area_size(b.max, 0);
		r.iov_base = (void *)t->area;
		r.iov_len = l.iov_len;
		if (process_vm_readv(t->pid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len) {
			pr_perror("Task %d: step %d of its restore failed", t->pid, done);
			goto out;
		}
		errno = -batch_entry(&b, done)->ret;
		pr_perror("Task %d: %s (step %d of %d) failed", t->pid,
			  batch_desc(&b, done), done, b.nr);
		goto out;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

static int bring_to_life(struct rst_ctx *rc, struct rtask *t, struct child_report *rep)
{
	struct user_regs_struct base;
	uint64_t insn;
	long rc_munmap;
	int status, i;

	while (waitpid(t->pid, &status, __WALL) < 0)
		if (errno != EINTR) {
			pr_perror("Task %d: can't wait for it", t->pid);
			return -1;
		}
	if (!WIFSTOPPED(status)) {
		/* the task's own error names what failed */
		pr_err("%s", rep->error[0] ? rep->error : "the new task died while preparing");
		return -1;
	}
	if (WSTOPSIG(status) != SIGSTOP) {
		pr_err("Task %d: stopped by signal %d while preparing", t->pid,
		       WSTOPSIG(status));
		return -1;
	}
	pr_debug("Task %d: prepared itself, running its batch of %d", t->pid, rep->nr);
	if (ptrace(PTRACE_SETOPTIONS, t->pid, 0,
		   PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) {
		pr_perror("Task %d: can't set ptrace options", t->pid);
		return -1;
	}
	if (ptrace_get_regs(t->pid, &base) || unregister_criu_rseq(t) ||
	    run_batch(t, rep, &base))
		return -1;
	pr_debug("Task %d: batch done", t->pid);
	/* the executor's own syscall instruction removes the trampoline */
	extern const char executor_code_start[], executor_syscall_insn[];
	insn = t->area + (executor_syscall_insn - executor_code_start);
	if (remote_syscall(t->pid, &base, insn, &rc_munmap, __NR_munmap, t->area,
			   t->area_size, 0, 0, 0, 0) || rc_munmap) {
		pr_err("Task %d: can't unmap the trampoline (%ld)", t->pid, rc_munmap);
		return -1;
	}
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->final && parts[i]->final(rc, t))
			return -1;
	return 0;
}

static int write_pidfile(const char *path, pid_t pid)
{
	char buf[16];
	int fd, len;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_perror("Can't create pidfile %s", path);
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "%d", pid);
	if (write(fd, buf, len) != len) {
		pr_perror("Can't write pidfile %s", path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int wait_task(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror("Can't wait for task %d", pid);
			return -1;
		}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int cr_restore(const struct opts *o)
{
	struct rst_ctx rc = { .opts = o };
	struct rtask t = { 0 };
	struct child_report *rep = MAP_FAILED;
	PstreeTask *pt = NULL;
	pid_t pid = -1;
	int i, ret = -1;

	rc.dirfd = open(o->images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rc.dirfd < 0) {
		pr_perror("Can't open the images directory %s", o->images_dir);
		return -1;
	}
	if (read_tree(&rc, &t, &pt) || timens_load(&rc))
		goto out;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->load && parts[i]->load(&rc, &t))
			goto out;
	t.area_size = batch_area_size(64 + t.batch_entries, (64 << 10) + t.batch_data) +
		      AREA_RESERVE;
	t.area = pick_area(&t, t.area_size);
	if (!t.area) {
		pr_err("Task %d: no free place for the restore trampoline", t.pid);
		goto out;
	}
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	if (rep == MAP_FAILED) {
		pr_perror("Can't map a page");
		goto out;
	}
	if (timens_prepare(&rc))
		goto out;
	pr_debug("Forking task %d", t.pid);
	pid = fork_task(&rc, &t, pt, rep);
	if (pid < 0 || bring_to_life(&rc, &t, rep))
		goto out;
	if (o->pidfile && write_pidfile(o->pidfile, pid))
		goto out;
	if (ptrace(PTRACE_DETACH, pid, 0, 0)) {
		pr_perror("Task %d: can't let it go", pid);
		goto out;
	}
	pr_info("Restored task %d", pid);
	ret = o->restore_detached ? 0 : wait_task(pid);
	pid = -1;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
	}
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->release)
			parts[i]->release(&t);
	if (rep != MAP_FAILED)
		munmap(rep, sizeof(*rep));
	if (pt)
		pstree_task__free_unpacked(pt, NULL);
	free(t.used);
	free(t.priv_fds);
	free(t.task_fds);
	close(rc.dirfd);
	return ret;
}
