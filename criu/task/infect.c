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

int infect_start(struct infect *inf, pid_t pid, const struct user_regs_struct *regs,
		 uint64_t sigmask, const struct proc_maps *maps, size_t size)
{
	long ret;

	memset(inf, 0, sizeof(*inf));
	inf->pid = pid;
	inf->regs = *regs;
	inf->sigmask = sigmask;
	inf->size = size;
	inf->sc_ip = find_vdso_syscall(pid, maps);
	if (!inf->sc_ip) {
		pr_err("Task %d: no vDSO syscall instruction to run system calls with", pid);
		return -1;
	}
	inf->started = 1;
	/*
	 * Nothing of the task's may run while its registers are borrowed.
	 * SIGTRAP stays open: a blocked one raised by the executor's int3
	 * would reset the task's handler for it to the default.
	 */
	if (ptrace_set_sigmask(pid, ~(1ULL << (SIGTRAP - 1))))
		goto err;
	if (remote_syscall(pid, &inf->regs, inf->sc_ip, &ret, __NR_mmap, 0, size,
			   PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
		goto err;
	if (ret < 0 && ret > -4096) {
		errno = -ret;
		pr_perror("Task %d: can't map a %zu-byte scratch area", pid, size);
		goto err;
	}
	inf->area = ret;
	pr_debug("Task %d: scratch area at %#lx", pid, ret);
	return 0;
err:
	infect_stop(inf);
	return -1;
}

int executor_run(pid_t pid, const struct user_regs_struct *base, struct batch *b,
		 uint64_t sp)
{
	struct user_regs_struct regs = *base;
	int status, done;

	regs.rip = batch_code_remote(b);
	regs.rdi = batch_entries_remote(b);
	regs.rsi = b->nr;
	regs.rsp = sp;
	regs.orig_rax = -1;
	if (ptrace_set_regs(pid, &regs))
		return -1;
	if (ptrace(PTRACE_CONT, pid, 0, 0)) {
		pr_perror("Task %d: can't start the executor", pid);
		return -1;
	}
	for (;;) {
		if (ptrace_wait(pid, &status))
			return -1;
		/* threads the batch clones stop on their own; go on */
		if (!(status >> 16))
			break;
		if (ptrace(PTRACE_CONT, pid, 0, 0)) {
			pr_perror("Task %d: can't continue the executor", pid);
			return -1;
		}
	}
	if (WSTOPSIG(status) != SIGTRAP) {
		pr_err("Task %d: executor stopped by signal %d", pid, WSTOPSIG(status));
		ptrace_get_regs(pid, &regs);
		pr_err("Task %d: at ip %#llx", pid, regs.rip);
		return -1;
	}
	if (ptrace_get_regs(pid, &regs))
		return -1;
	done = b->nr - regs.r13;
	return done;
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

int infect_run(struct infect *inf, pid_t tid, const struct user_regs_struct *regs,
	       uint64_t sigmask, struct batch *b)
{
	size_t len = b->size;
	struct sc_entry *e;
	int done, other = tid != inf->pid, ret = -1;

	if (copy_area(inf->pid, b, len, 1))
		return -1;
	/* the leader's mask is taken care of by infect_start/stop */
	if (other && ptrace_set_sigmask(tid, ~(1ULL << (SIGTRAP - 1))))
		return -1;
	done = executor_run(tid, regs, b, b->remote + b->size - 64);
	if (other && (ptrace_set_regs(tid, regs) | ptrace_set_sigmask(tid, sigmask)))
		done = -1;
	if (done < 0)
		return -1;
	if (copy_area(inf->pid, b, len, 0))
		return -1;
	if (done < b->nr) {
		e = batch_entry(b, done);
		errno = -e->ret;
		pr_perror("Task %d: %s failed in thread %d", inf->pid, batch_desc(b, done), tid);
		goto out;
	}
	ret = 0;
out:
	return ret;
}

int infect_stop(struct infect *inf)
{
	int ret = 0;
	long rc;

	if (!inf->started)
		return 0;
	if (inf->area) {
		if (remote_syscall(inf->pid, &inf->regs, inf->sc_ip, &rc, __NR_munmap,
				   inf->area, inf->size, 0, 0, 0, 0) || rc) {
			pr_err("Task %d: can't unmap the scratch area (%ld)", inf->pid, rc);
			ret = -1;
		}
		inf->area = 0;
	}
	if (ptrace_set_regs(inf->pid, &inf->regs))
		ret = -1;
	if (ptrace_set_sigmask(inf->pid, inf->sigmask))
		ret = -1;
	inf->started = 0;
	return ret;
}
