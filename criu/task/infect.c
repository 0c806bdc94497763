// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "core/log.h"
#include "core/util.h"
#include "task/infect.h"
#include "task/ptrace.h"

static uint64_t find_vdso_syscall(pid_t pid, const struct proc_maps *maps)
{
	const struct proc_vma *v = NULL;
	uint8_t buf[4 * PAGE_SIZE];
	struct iovec l, r;
	size_t len, i;
	int k;

	for (k = 0; k < maps->nr; k++)
		if (maps->vma[k].path && !strcmp(maps->vma[k].path, "[vdso]"))
			v = &maps->vma[k];
	if (!v)
		return 0;
	len = min((size_t)(v->end - v->start), sizeof(buf));
	l.iov_base = buf;
	l.iov_len = len;
	r.iov_base = (void *)v->start;
	r.iov_len = len;
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return 0;
	for (i = 0; i + 1 < len; i++)
		if (buf[i] == 0x0f && buf[i + 1] == 0x05)
			return v->start + i;
	return 0;
}

#define SIGBIT(s)	(1ULL << ((s) - 1))

/* MAP_FIXED_NOREPLACE: 4.17; Debian 12's headers have it, kept for older ones. */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* Nothing of the task's may run while its registers are borrowed. */
static uint64_t borrowed_mask(const struct infect *inf, const struct infect_thread *th)
{
	/*
	 * Without a way home the executor ends in int3: a blocked SIGTRAP
	 * would reset the task's handler for it to the default.
	 */
	return ~SIGBIT(th->frame ? inf->sig : SIGTRAP);
}

/* Where the thread goes if criu vanishes now: home through its munmap. */
static int park(struct infect *inf, struct infect_thread *th)
{
	/* its own fs and gs bases: rt_sigreturn leaves them as they are */
	struct user_regs_struct r = th->regs;

	r.orig_rax = -1;
	r.rip = inf->g.sc_ret;
	r.rax = __NR_munmap;
	r.rdi = th->area;
	r.rsi = th->size;
	r.rsp = th->frame;
	return ptrace_set_regs(th->tid, &r);
}

/* A lone syscall in a borrowed thread, through its way home if it has one. */
static int thread_syscall(struct infect *inf, struct infect_thread *th, long *ret,
			  long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	struct user_regs_struct base = th->regs;
	uint64_t ip;

	if (th->frame) {
		base.rsp = th->frame;
		ip = inf->g.sc_ret;
	} else {
		/* only a thread without a way home needs it: found when asked */
		if (!inf->sc_ip)
			inf->sc_ip = find_vdso_syscall(inf->pid, inf->maps);
		ip = inf->sc_ip;
	}
	if (!ip) {
		pr_err("Task %d: no syscall instruction to run system calls in thread %d with",
		       inf->pid, th->tid);
		return -1;
	}
	return remote_syscall(th->tid, &base, ip, ret, nr, a0, a1, a2, a3, a4, a5);
}

/*
 * Where the scratch areas go: the start of the largest free range, a page
 * away from what is below it, so that the leader's area can grow upwards
 * as far as its batch needs (infect_resize). @hole_end is a page below
 * the next area; 0: no range at all.
 */
static uint64_t find_hole(const struct proc_maps *maps, uint64_t *hole_end)
{
	uint64_t best = 0, len = 0;
	int i;

	*hole_end = 0;
	for (i = maps->nr - 1; i > 0; i--) {
		const struct proc_vma *lo = &maps->vma[i - 1], *hi = &maps->vma[i];

		/* below a stack, the kernel keeps a guard gap */
		if (hi->start >= (1ULL << 47) || (hi->path && !strcmp(hi->path, "[stack]")))
			continue;
		if (hi->start - lo->end > len + 2 * PAGE_SIZE) {
			len = hi->start - lo->end - 2 * PAGE_SIZE;
			best = lo->end + PAGE_SIZE;
			*hole_end = hi->start - PAGE_SIZE;
		}
	}
	return best;
}

/*
 * The thread's scratch area. With glibc's munmap() at hand, the mmap is
 * made at a free address with the stack pointer on the word below the
 * thread's frame: a criu killed after it lets the mmap return into
 * munmap(rdi, rsi) of the very same range, then into the sigreturn.
 * Otherwise the area would outlive a criu that died in the few
 * microseconds before the thread is parked on its munmap.
 */
static long map_area(struct infect *inf, struct infect_thread *th, uint64_t at, size_t size)
{
	const long prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	const long flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	struct user_regs_struct base = th->regs;
	long ret;

	if (th->frame && inf->g.unmap) {
		base.rsp = th->frame - 8;
		if (remote_syscall(th->tid, &base, inf->g.sc_ret, &ret, __NR_mmap, at,
				   size, prot, flags, -1, 0))
			return -EIO;
		/* not ours: never let it return into that munmap */
		if ((uint64_t)ret != at && ptrace_set_regs(th->tid, &th->regs))
			return -EIO;
	} else if (thread_syscall(inf, th, &ret, __NR_mmap, at, size, prot, flags, -1, 0)) {
		return -EIO;
	}
	if ((uint64_t)ret == at || (ret < 0 && ret > -4096))
		return ret;
	/* a kernel without MAP_FIXED_NOREPLACE took it as a hint: not where we want it */
	if (thread_syscall(inf, th, &ret, __NR_munmap, ret, size, 0, 0, 0, 0))
		return -EIO;
	return -EEXIST;
}

int infect_start(struct infect *inf, pid_t pid, const struct proc_maps *maps,
		 const struct proc_status *st, size_t lead, size_t per, int nr_threads)
{
	memset(inf, 0, sizeof(*inf));
	inf->pid = pid;
	inf->lead = lead;
	inf->per = per;
	inf->maps = maps;
	inf->th = xzalloc(nr_threads * sizeof(*inf->th));
	if (!inf->th)
		return -1;
	inf->max = nr_threads;
	inf->sig = sigframe_pick_signal(st);
	if (!inf->sig) {
		pr_info("Task %d: no signal it ignores: dumped without a way home", pid);
	} else if (gadgets_find(pid, maps, &inf->g)) {
		pr_info("Task %d: no sigreturn in its code: dumped without a way home", pid);
		inf->sig = 0;
	}
	inf->hole = find_hole(maps, &inf->hole_end);
	if (!inf->hole || inf->hole_end - inf->hole < lead + per * (nr_threads - 1)) {
		pr_err("Task %d: no free range of %zu bytes for criu's scratch areas", pid,
		       lead + per * (nr_threads - 1));
		free(inf->th);
		inf->th = NULL;
		return -1;
	}
	return 0;
}

/*
 * The leader's area on top: it may grow upwards. Below it the other
 * threads', the last borrowed lowest: the areas merge into one, and each
 * given back (last borrowed first) trims it from below. A munmap that
 * split it would need one area more, which a task with vm.max_map_count
 * areas less one does not have (limit_areas()).
 */
static uint64_t area_at(struct infect *inf, int idx)
{
	return inf->hole + (inf->max - 1 - idx) * inf->per;
}

/* Maps thread @th's area at @at, and parks it there; its address or -errno. */
static long place(struct infect *inf, struct infect_thread *th, uint64_t at, size_t size)
{
	long ret = map_area(inf, th, at, size);

	if (ret < 0 && ret > -4096) {
		errno = -ret;
		pr_perror("Task %d: can't map a %zu-byte scratch area at %#lx in thread %d",
			  inf->pid, size, (long)at, th->tid);
		return ret;
	}
	th->area = ret;
	th->size = size;
	fault_point("infect-area");
	if (th->frame && park(inf, th))
		return -EIO;
	return ret;
}

int infect_borrow(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
		  uint64_t sigmask, uint64_t *area)
{
	struct infect_thread *th = &inf->th[inf->nr];
	long ret;

	if (inf->nr == inf->max)
		return -1;
	th->tid = tid;
	th->regs = *regs;
	th->sigmask = sigmask;
	inf->nr++;	/* from now on infect_stop() puts it back */
	if (inf->sig) {
		th->frame = sigframe_push(inf->pid, tid, inf->maps, &inf->g, regs, sigmask,
					  ~SIGBIT(inf->sig));
		if (th->frame < 0) {
			th->frame = 0;
			return -1;
		}
	}
	if (ptrace_set_sigmask(tid, borrowed_mask(inf, th)))
		return -1;
	fault_point(th->tid == inf->pid ? "infect-parked" : "infect-thread-parked");
	ret = place(inf, th, area_at(inf, inf->nr - 1), inf->nr == 1 ? inf->lead : inf->per);
	if (ret < 0)
		return -1;
	pr_debug("Task %d: thread %d borrowed, scratch area at %#lx%s", inf->pid, tid,
		 ret, th->frame ? ", a way home" : "");
	fault_point(th->tid == inf->pid ? "infect-mapped" : "infect-thread-mapped");
	*area = ret;
	return 0;
}

/*
 * The leader's batch turned out bigger than its area: a bigger one in the
 * same place (nothing is above it but the free range). The old one goes
 * the way it would go home, by its parked munmap; until the new one is
 * parked on its own munmap, a criu that dies leaves the thread on its way
 * home with nothing mapped.
 */
int infect_resize(struct infect *inf, int idx, size_t size)
{
	struct infect_thread *th = &inf->th[idx];
	uint64_t at = th->area;
	long rc;

	if (size <= th->size)
		return 0;
	if (idx || at + size > inf->hole_end) {
		pr_err("Task %d: the batch of thread %d needs %zu bytes, more than its area "
		       "can grow to", inf->pid, th->tid, size);
		return -1;
	}
	if (thread_syscall(inf, th, &rc, __NR_munmap, at, th->size, 0, 0, 0, 0) || rc) {
		pr_err("Task %d: can't unmap the scratch area of thread %d (%ld)", inf->pid,
		       th->tid, rc);
		return -1;
	}
	th->area = 0;
	pr_debug("Task %d: scratch area of thread %d grows to %zu bytes", inf->pid, th->tid,
		 size);
	return place(inf, th, at, size) < 0 ? -1 : 0;
}

/* The executor's stop: its int3, or the signal it sends itself. */
static int executor_stopped(pid_t pid, struct batch *b, int status)
{
	struct user_regs_struct regs;
	int sig = batch_exit_sig(b);

	if (WSTOPSIG(status) == (sig ? sig : SIGTRAP)) {
		if (!sig)
			return 1;
		if (ptrace_get_regs(pid, &regs))
			return -1;
		if (regs.rip == batch_signalled_ip(b))
			return 1;
		/* someone else's: ignored by the task, as it would have been */
		pr_debug("Task %d: signal %d from outside while borrowed", pid, sig);
		return 0;
	}
	pr_err("Task %d: executor stopped by signal %d", pid, WSTOPSIG(status));
	if (!ptrace_get_regs(pid, &regs))
		pr_err("Task %d: at ip %#llx", pid, regs.rip);
	return -1;
}

static int executor_go(pid_t pid, const struct user_regs_struct *base, struct batch *b,
		       uint64_t sp, const char *fault)
{
	struct user_regs_struct regs = *base;
	int status, ret;

	regs.rip = batch_code_remote(b);
	regs.rdi = batch_entries_remote(b);
	regs.rsi = b->nr;
	regs.rsp = sp;
	regs.orig_rax = -1;
	if (ptrace_set_regs(pid, &regs))
		return -1;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, 0)) {
			pr_perror("Task %d: can't run the executor", pid);
			return -1;
		}
		if (fault)
			fault_point(fault);
		if (ptrace_wait(pid, &status))
			return -1;
		/* threads the batch clones stop on their own; go on */
		if (status >> 16)
			continue;
		ret = executor_stopped(pid, b, status);
		if (ret < 0)
			return -1;
		if (ret)
			break;
	}
	if (ptrace_get_regs(pid, &regs))
		return -1;
	return b->nr - regs.r13;
}

int executor_run(pid_t pid, const struct user_regs_struct *base, struct batch *b,
		 uint64_t sp)
{
	return executor_go(pid, base, b, sp, NULL);
}

/* In: the code, the data and the table; out: the answers, in data and table. */
static int copy_area(pid_t pid, struct batch *b, int to_task)
{
	struct iovec l[3], r[3];
	ssize_t n, len = 0;
	int i, nr = batch_iov(b, to_task, l, r);

	for (i = 0; i < nr; i++)
		len += l[i].iov_len;
	if (to_task)
		n = process_vm_writev(pid, l, nr, r, nr, 0);
	else
		n = process_vm_readv(pid, l, nr, r, nr, 0);
	if (n != len) {
		pr_perror("Task %d: can't %s its scratch area", pid,
			  to_task ? "write" : "read");
		return -1;
	}
	return 0;
}


int infect_run(struct infect *inf, int idx, struct batch *b)
{
	struct infect_thread *th = &inf->th[idx];
	struct sc_entry *e;
	int done;

	if (b->size > th->size) {
		pr_err("Task %d: the batch of thread %d needs %zu bytes, its area has %zu",
		       inf->pid, th->tid, b->size, th->size);
		return -1;
	}
	if (th->frame)
		batch_set_exit(b, inf->sig, inf->g.sc_ret, th->frame, th->area, th->size);
	if (copy_area(inf->pid, b, 1))
		return -1;
	done = executor_go(th->tid, &th->regs, b, b->remote + b->size - 64,
			   idx ? "infect-thread-executor" : "infect-executor");
	if (th->frame && park(inf, th))
		done = -1;
	if (done < 0)
		return -1;
	if (copy_area(inf->pid, b, 0))
		return -1;
	if (done < b->nr) {
		e = batch_entry(b, done);
		errno = -e->ret;
		pr_perror("Task %d: %s failed in thread %d", inf->pid, batch_desc(b, done),
			  th->tid);
		return -1;
	}
	return 0;
}

static int give_back(struct infect *inf, struct infect_thread *th)
{
	int ret = 0;
	long rc;

	if (th->area) {
		if (thread_syscall(inf, th, &rc, __NR_munmap, th->area, th->size, 0, 0, 0, 0) ||
		    rc) {
			pr_err("Task %d: can't unmap the scratch area of thread %d (%ld)",
			       inf->pid, th->tid, rc);
			ret = -1;
		}
		th->area = 0;
	}
	fault_point("infect-unmapped");
	/* the mask first: a way home puts it back too */
	if (ptrace_set_sigmask(th->tid, th->sigmask))
		ret = -1;
	if (ptrace_set_regs(th->tid, &th->regs))
		ret = -1;
	return ret;
}

int infect_stop(struct infect *inf)
{
	int ret = 0;

	while (inf->nr > 0)
		if (give_back(inf, &inf->th[--inf->nr]))
			ret = -1;
	free(inf->th);
	inf->th = NULL;
	return ret;
}
