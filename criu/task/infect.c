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

/* Nothing of the task's may run while its registers are borrowed. */
static uint64_t borrowed_mask(const struct infect *inf, int64_t frame)
{
	/*
	 * Without a way home the executor ends in int3: a blocked SIGTRAP
	 * would reset the task's handler for it to the default.
	 */
	return ~SIGBIT(frame ? inf->sig : SIGTRAP);
}

/*
 * Where a borrowed thread goes if criu vanishes now: straight home, or,
 * for the one that holds the scratch area, home through its munmap.
 */
static int park(struct infect *inf, pid_t tid, const struct user_regs_struct *own,
		int64_t frame, int unmap)
{
	/* its own fs and gs bases: rt_sigreturn leaves them as they are */
	struct user_regs_struct r = *own;

	r.orig_rax = -1;
	if (unmap) {
		r.rip = inf->g.sc_ret;
		r.rax = __NR_munmap;
		r.rdi = inf->area;
		r.rsi = inf->size;
		r.rsp = frame;
	} else {
		r.rip = inf->g.sigret;
		r.rsp = frame + 8;
	}
	return ptrace_set_regs(tid, &r);
}

/* A lone syscall in the leader, through its way home when it has one. */
static int leader_syscall(struct infect *inf, long *ret, long nr, long a0, long a1,
			  long a2, long a3, long a4, long a5)
{
	struct user_regs_struct base = inf->regs;
	uint64_t ip = inf->sc_ip;

	if (inf->frame) {
		base.rsp = inf->frame;
		ip = inf->g.sc_ret;
	}
	return remote_syscall(inf->pid, &base, ip, ret, nr, a0, a1, a2, a3, a4, a5);
}

static void way_home(struct infect *inf, pid_t pid, const struct proc_maps *maps,
		     const struct proc_status *st)
{
	int64_t f;

	inf->sig = sigframe_pick_signal(st);
	if (!inf->sig) {
		pr_info("Task %d: no signal it ignores: dumped without a way home", pid);
		return;
	}
	if (gadgets_find(pid, maps, &inf->g)) {
		pr_info("Task %d: no sigreturn in its code: dumped without a way home", pid);
		inf->sig = 0;
		return;
	}
	f = sigframe_push(pid, pid, maps, &inf->g, &inf->regs, inf->sigmask);
	if (f > 0)
		inf->frame = f;
	else
		inf->sig = 0;
}

int infect_start(struct infect *inf, pid_t pid, const struct user_regs_struct *regs,
		 uint64_t sigmask, const struct proc_maps *maps,
		 const struct proc_status *st, size_t size)
{
	long ret;

	memset(inf, 0, sizeof(*inf));
	inf->pid = pid;
	inf->regs = *regs;
	inf->sigmask = sigmask;
	inf->size = size;
	inf->maps = maps;
	inf->sc_ip = find_vdso_syscall(pid, maps);
	inf->started = 1;
	way_home(inf, pid, maps, st);
	if (!inf->frame && !inf->sc_ip) {
		pr_err("Task %d: no vDSO syscall instruction to run system calls with", pid);
		goto err;
	}
	if (ptrace_set_sigmask(pid, borrowed_mask(inf, inf->frame)))
		goto err;
	fault_point("infect-parked");
	if (leader_syscall(inf, &ret, __NR_mmap, 0, size, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
		goto err;
	if (ret < 0 && ret > -4096) {
		errno = -ret;
		pr_perror("Task %d: can't map a %zu-byte scratch area", pid, size);
		goto err;
	}
	inf->area = ret;
	if (inf->frame && park(inf, pid, &inf->regs, inf->frame, 1))
		goto err;
	pr_debug("Task %d: scratch area at %#lx%s", pid, ret,
		 inf->frame ? ", a way home" : "");
	fault_point("infect-mapped");
	return 0;
err:
	infect_stop(inf);
	return -1;
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

static int copy_area(pid_t pid, struct batch *b, size_t len, int to_task)
{
	struct iovec l = { b->local, len }, r = { (void *)b->remote, len };
	ssize_t n;

	if (to_task)
		n = process_vm_writev(pid, &l, 1, &r, 1, 0);
	else
		n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (n != (ssize_t)len) {
		pr_perror("Task %d: can't %s its scratch area", pid,
			  to_task ? "write" : "read");
		return -1;
	}
	return 0;
}

/* Takes thread @tid of the task on loan; returns its frame or 0. */
static int64_t borrow(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
		      uint64_t sigmask)
{
	int64_t f = 0;

	if (inf->frame) {
		f = sigframe_push(inf->pid, tid, inf->maps, &inf->g, regs, sigmask);
		if (f < 0)
			return -1;
	}
	if (ptrace_set_sigmask(tid, borrowed_mask(inf, f)))
		return -1;
	/*
	 * The area's munmap goes with the thread that runs in it; never two
	 * owners at once: one could unmap what the other, home already, mapped.
	 */
	if (f && (park(inf, inf->pid, &inf->regs, inf->frame, 0) ||
		  park(inf, tid, regs, f, 1)))
		return -1;
	fault_point("infect-thread-borrowed");
	return f;
}

static int give_back(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
		     uint64_t sigmask, int64_t f)
{
	int ret = 0;

	/* mask first: until the registers are back, the frame has it too */
	if (f && park(inf, tid, regs, f, 0))
		ret = -1;
	if (ptrace_set_sigmask(tid, sigmask) || ptrace_set_regs(tid, regs))
		ret = -1;
	if (inf->frame && park(inf, inf->pid, &inf->regs, inf->frame, 1))
		ret = -1;
	return ret;
}

int infect_run(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
	       uint64_t sigmask, struct batch *b)
{
	int64_t f = inf->frame;
	struct sc_entry *e;
	int done, other = tid != inf->pid;

	if (other) {
		f = borrow(inf, tid, regs, sigmask);
		if (f < 0) {
			give_back(inf, tid, regs, sigmask, 0);
			return -1;
		}
	}
	if (f)
		batch_set_exit(b, inf->sig, inf->g.sc_ret, f, inf->area, inf->size);
	if (copy_area(inf->pid, b, b->size, 1))
		done = -1;
	else
		done = executor_go(tid, regs, b, b->remote + b->size - 64,
				   other ? "infect-thread-executor" : "infect-executor");
	if (!other && inf->frame && park(inf, tid, regs, f, 1))
		done = -1;
	if (other && give_back(inf, tid, regs, sigmask, f))
		done = -1;
	if (done < 0)
		return -1;
	if (copy_area(inf->pid, b, b->size, 0))
		return -1;
	if (done < b->nr) {
		e = batch_entry(b, done);
		errno = -e->ret;
		pr_perror("Task %d: %s failed in thread %d", inf->pid, batch_desc(b, done), tid);
		return -1;
	}
	return 0;
}

int infect_stop(struct infect *inf)
{
	int ret = 0;
	long rc;

	if (!inf->started)
		return 0;
	if (inf->area) {
		if (leader_syscall(inf, &rc, __NR_munmap, inf->area, inf->size, 0, 0, 0, 0) ||
		    rc) {
			pr_err("Task %d: can't unmap the scratch area (%ld)", inf->pid, rc);
			ret = -1;
		}
		inf->area = 0;
	}
	fault_point("infect-unmapped");
	/* the mask first: a way home puts it back too */
	if (ptrace_set_sigmask(inf->pid, inf->sigmask))
		ret = -1;
	if (ptrace_set_regs(inf->pid, &inf->regs))
		ret = -1;
	inf->started = 0;
	return ret;
}
